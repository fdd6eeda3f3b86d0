//go:build !router

package main

import (
	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/scenario"
)

// labKinds are the kinds only a build with the lab prints, which this build
// need not show a document of: none, it has the lab.
var labKinds = []string{}

// labDocs: lab run's recorded output, and fix ecmp --apply's result as a
// multi-WAN lab gives it (it builds tunnels, so it runs only in CI's labs).
func (m *docMaker) labDocs() {
	m.raw("lab-run", testdata("report", "labrun.json"), true)
	m.value("lab-run", "lab run of a scenario that could not be played", map[string]any{"scenarios": []*scenario.Result{{
		Scenario: "stale-endpoint-route", Case: "multi-WAN router", Symptom: "the tunnel is slow after an uplink flap",
		Expect: "route.stale-endpoint", Findings: nil, Skipped: true, Why: "needs root", Pass: false}}})
	m.value("fix-ecmp", "fix ecmp --apply in a lab", &scenario.LabECMP{Lab: "wgl-doc", Tunnels: []lab.Tunnel{
		{Index: 0, Port: 51820, IfA: "wg-doc-a", IfB: "wg-doc-b", AddrA: "10.77.0.1", AddrB: "10.77.0.2",
			KeyA: "XchSCB4JRos6MxKM8PaNwtqWjnuofzE6CrGxT+/UdDg=", KeyB: "iJAU7xH9N4GOKXnOurLON3PD3JWVqH/E4vF9BDnHhBs=", PIDA: 4242, PIDB: 4243},
		{Index: 1, Port: 51821, IfA: "wg-doc-a1", IfB: "wg-doc-b1", AddrA: "10.77.1.1", AddrB: "10.77.1.2",
			KeyA: "deOAUQJsI0IrLN6AfBAuAednsG2d+2NNtZA78s+v3is=", KeyB: "XchSCB4JRos6MxKM8PaNwtqWjnuofzE6CrGxT+/UdDg=", PIDA: 4244, PIDB: 4245, UplinkA: "wan2"},
	}, Commands: []string{"ip route replace 10.78.0.0/24 nexthop dev wg-doc-a weight 1 nexthop dev wg-doc-a1 weight 1"},
		Verify: &scenario.LabECMPVerify{Addr: "10.78.0.2", Streams: 8, TunnelsBefore: 1, BeforeMbit: 95.2, AfterMbit: 181.7, Scaling: 1.91, SecondsPerTest: 5}})
}
