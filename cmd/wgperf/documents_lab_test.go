//go:build !router

package main

import (
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/probe/drops"
	"github.com/wgperf/wgperf/internal/scenario"
)

// labKinds are the kinds only a build with the lab (and the drop sampler)
// prints, which this build need not show a document of: none, it has them.
var labKinds = []string{}

// labDocs: lab run's recorded output, lab status of a userspace lab and drops as a sampler counts them.
func (m *docMaker) labDocs() {
	m.value("lab-status", "lab status of a userspace lab", labStatusExample().Report(&lab.Status{
		Nodes: []lab.NodeStatus{{Node: *labStatusExample().Nodes["a"], Running: true}, {Node: *labStatusExample().Nodes["r"]}},
		Peers: []lab.PeerStatus{
			{Interface: "wg-doc-a", PublicKey: "iJAU7xH9N4GOKXnOurLON3PD3JWVqH/E4vF9BDnHhBs=", Endpoint: "203.0.113.2:51820",
				LatestHandshake: &labStatusHandshake, RxBytes: 92, TxBytes: 148},
			{Interface: "wg-doc-b", PublicKey: "XchSCB4JRos6MxKM8PaNwtqWjnuofzE6CrGxT+/UdDg="}},
		Shaping: []string{"r: qdisc tbf 8001: dev eth-b root refcnt 2 rate 200Mbit burst 25000b lat 20ms"}}))
	m.value("lab-status", "lab status of a lab whose status read nothing", labStatusExample().Report(&lab.Status{}))
	m.value("drops", "drops as a sampler counts them", drops.Result{
		Status: drops.Status{Host: "netns:wgl-doc-b", Tier: drops.TierBTF, Scope: "network namespace 4026532291, every interface"}, Seconds: 10.002,
		Counts: []drops.Count{{Reason: "NETFILTER_DROP", Function: "nft_do_chain", Interface: "eth-b", Packets: 412},
			{Reason: "UDP_CSUM", Function: "__udp4_lib_rcv", Packets: 3}}, Lost: 2})
	m.value("drops", "drops with nothing dropped", drops.Result{Status: drops.Status{Host: "local", Tier: drops.TierTracepoint, Why: "no BTF"},
		Seconds: 1, Counts: []drops.Count{}})
	m.raw("lab-run", testdata("report", "labrun.json"), true)
	m.value("lab-run", "lab run of a scenario that could not be played", map[string]any{"scenarios": []*scenario.Result{{
		Scenario: "stale-endpoint-route", Case: "multi-WAN router", Symptom: "the tunnel is slow after an uplink flap",
		Expect: "route.stale-endpoint", Findings: nil, Skipped: true, Why: "needs root", Pass: false}}})
}

var labStatusHandshake = time.Date(2026, 11, 22, 0, 36, 16, 0, time.UTC)

// labStatusExample is a userspace site-to-site lab with a delay, as its
// state file holds it.
func labStatusExample() *lab.Lab {
	return &lab.Lab{Config: lab.Config{Name: "doc", Topology: lab.SiteToSite, WireGuard: lab.Userspace, Underlay: lab.Shape{RateMbit: 200, DelayMs: 10}},
		Created: labStatusHandshake.Add(-time.Minute), ImplementationNote: "this kernel has no WireGuard module", DelayBy: lab.DelayElement,
		Nodes: map[string]*lab.Node{
			"a": {Name: "a", Netns: "wgl-doc-a", WGInterface: "wg-doc-a", TunnelAddr: "10.77.0.1", UnderlayAddr: "192.0.2.2",
				ListenPort: 51820, PublicKey: "XchSCB4JRos6MxKM8PaNwtqWjnuofzE6CrGxT+/UdDg=", PID: 4242},
			"r": {Name: "r", Netns: "wgl-doc-r", DelayPID: 4250},
		}}
}
