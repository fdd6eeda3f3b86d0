package main

import (
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/probe/icmpburst"
	"github.com/wgperf/wgperf/internal/probe/mtu"
	"github.com/wgperf/wgperf/internal/probe/shaping"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// mtuDocs: the DF search against a recorded black hole (pings above 1400
// bytes lost without an ICMP error), the same path healthy, the MSS capture
// of a clamping router, and the recorded result in testdata/report.
func (m *docMaker) mtuDocs() {
	ping := func(name string) mtu.Ping {
		f := m.open("probe", "ping", name)
		if f == nil {
			return mtu.Ping{}
		}
		defer f.Close()
		p, err := mtu.ParsePing(f)
		if err != nil {
			m.fail("%s: %v", name, err)
		}
		return p
	}
	search := func(res *mtu.Result, truth int, above string) {
		s := mtu.NewSearch(576, 1500, 2, 1)
		for {
			size, ok := s.Next()
			if !ok {
				break
			}
			p := ping("pass.txt")
			if size > truth {
				p = ping(above)
			}
			s.Record(size, p.Received, p.MTU)
			res.Probes = append(res.Probes, mtu.Probe{MTU: size, Passed: p.Received, Hint: p.MTU})
		}
		res.PathMTU, _ = s.Result()
		res.FirstFailed = s.FirstFailed()
		res.BlackHole = res.PathMTU > 0 && res.FirstFailed > 0 && s.Silent(res.FirstFailed)
		res.WGMTU, res.MSSClamp = res.PathMTU-60, res.PathMTU-100
	}
	hole := &mtu.Result{Client: targettest.Spec("netns:wgl-doc-a"), Addr: "203.0.113.2", SearchMin: 576, SearchMax: 1500, Method: mtu.MethodPing,
		ClientIface: "wg-doc-a", MSSRuns: []mtu.MSSRun{{MSS: 1300, Mbit: 180.4, Healthy: true}, {MSS: 1400, Mbit: 0.2, Stalled: true}},
		ReferenceMbit: 185.0, MSSGood: 1300, MSSBad: 1400, Seconds: 12.5}
	search(hole, 1400, "silent-loss.txt")
	hole.Findings = mtu.Findings(hole)
	m.value("mtu", "mtu search over a recorded black hole", hole)

	healthy := &mtu.Result{Client: targettest.Spec("local"), Addr: "192.0.2.1", SearchMin: 576, SearchMax: 1500, Method: mtu.MethodPing, Seconds: 0.2}
	search(healthy, 1500, "silent-loss.txt")
	healthy.Findings = mtu.Findings(healthy)
	m.value("mtu", "mtu search on a healthy path", healthy)
	m.raw("mtu", testdata("report", "mtu.json"), true)

	syns := func(name string) []mtu.SYN {
		f := m.open("probe", "capture", name)
		if f == nil {
			return nil
		}
		defer f.Close()
		s, err := mtu.ParseTcpdump(f)
		if err != nil {
			m.fail("%s: %v", name, err)
		}
		return s
	}
	for _, c := range []struct{ client, server string }{{"clamp1360-client.txt", "clamp1360-server.txt"}, {"noclamp-client.txt", "noclamp-server.txt"}} {
		res := &mtu.CaptureResult{Client: targettest.Spec("netns:wgl-doc-a"), Server: targettest.Spec("netns:wgl-doc-b"), Addr: "203.0.113.2", Port: 5299,
			ClientDevice: "eth0", ServerDevice: "eth0", ClientInterface: "wg-doc-a", ClientWGMTU: 1420, Seconds: 3.1}
		if err := mtu.AnalyzeCapture(res, syns(c.client), syns(c.server)); err != nil {
			m.fail("capture %s: %v", c.client, err)
			continue
		}
		res.Findings = mtu.CaptureFindings(res)
		m.value("mtu-capture", "mtu --capture of "+c.client, res)
	}
}

// icmpBurstDocs: the recorded experiment on the multi-WAN case's banIP rule,
// and a host whose rulesets did not change.
func (m *docMaker) icmpBurstDocs() {
	fw := func(name string) facts.Firewall {
		f := m.open("probe", "icmpburst", name)
		if f == nil {
			return facts.Firewall{}
		}
		defer f.Close()
		r, err := parse.ParseNftFirewall(f)
		if err != nil {
			m.fail("%s: %v", name, err)
		}
		return r
	}
	targets := []string{"198.51.100.1", "203.0.113.2"}
	res := &icmpburst.Result{Host: targettest.Spec("netns:wgl-doc-a"), Targets: targets, Seconds: 21.3}
	if f := m.open("probe", "icmpburst", "oneshot.txt"); f != nil {
		res.OneShot = icmpburst.ParseOneShot(f, targets, 15)
		f.Close()
	}
	if f := m.open("probe", "icmpburst", "persistent.txt"); f != nil {
		sent, recv, err := icmpburst.ParsePingStats(f)
		f.Close()
		if err != nil {
			m.fail("persistent.txt: %v", err)
		}
		res.Persistent = icmpburst.Mode{Sent: sent, Failed: sent - recv}
	}
	before, after := fw("nft-before.json"), fw("nft-after.json")
	res.Grew = icmpburst.Grown(before, after)
	res.Uncounted = icmpburst.UncountedLimits(after)
	res.Findings = icmpburst.Findings(res)
	m.value("icmp-burst", "icmp-burst from testdata/probe/icmpburst", res)

	calm := &icmpburst.Result{Host: targettest.Spec("local"), Targets: []string{"192.0.2.1"}, OneShot: icmpburst.Mode{Sent: 15}, Persistent: icmpburst.Mode{Sent: 15},
		Grew: icmpburst.Grown(before, before), Note: "iptables-save not installed; nft counters only", Seconds: 18}
	calm.Findings = icmpburst.Findings(calm)
	m.value("icmp-burst", "icmp-burst with nothing dropped", calm)
}

// shapeSweepDocs: a sweep whose steps are recorded iperf3 runs.
func (m *docMaker) shapeSweepDocs() {
	res := &shaping.Result{Client: targettest.Spec("netns:wgl-doc-a"), Device: "wg-doc-a", Previous: "qdisc noqueue 0: root refcnt 2", Seconds: 40}
	for _, s := range []struct {
		capMbit int
		file    string
	}{{0, "tcp-lossy-cubic.json"}, {150, "tcp-upload.json"}} {
		r := m.iperf(s.file)
		if r == nil {
			continue
		}
		res.Steps = append(res.Steps, shaping.Measured(s.capMbit, r))
	}
	res.Recommended = shaping.Recommend(res.Steps, shaping.PreferSteady)
	res.Findings = shaping.Findings(res)
	m.value("shape-sweep", "shape-sweep from testdata/probe/iperf", res)
}
