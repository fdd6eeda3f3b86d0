package main

// The JSON documents wgperf prints, produced here from the repository's
// fixtures through the same code the commands run: the CLI itself where a
// command works offline (diagnose --from, checks, explain, fix --from with a
// scratch root, fix rollback of a scratch journal, collect and doctor on this
// host), and the probes' pure halves on their recorded inputs where the
// command needs a lab (bench, mtu, icmp-burst, shape-sweep). The schema,
// null and evidence tests walk them all.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/fix"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// document is one JSON document as wgperf printed it.
type printedDoc struct {
	from string // the command line or fixture it came from, for messages
	kind string
	json []byte
	// recorded: an older wgperf's output kept in testdata/report (evidence
	// from before numbers and units), given today's header.
	recorded bool
}

var (
	docsOnce sync.Once
	docs     []printedDoc
	docsErr  []string
)

// documents returns every document, made once for all the tests that read them.
func documents(t *testing.T) []printedDoc {
	t.Helper()
	docsOnce.Do(func() {
		docs, docsErr = makeDocuments()
	})
	for _, e := range docsErr {
		t.Error(e)
	}
	if len(docsErr) > 0 {
		t.FailNow()
	}
	return docs
}

func testdata(parts ...string) string {
	return filepath.Join(append([]string{"..", "..", "testdata"}, parts...)...)
}

// docMaker collects documents and the errors met making them.
type docMaker struct {
	docs []printedDoc
	errs []string
	tmp  string
}

func (m *docMaker) fail(format string, args ...any) {
	m.errs = append(m.errs, strings.TrimSpace(fmt.Sprintf(format, args...)))
}

// cli runs wgperf with args and keeps its standard output as a document of
// kind; exit codes 0-2 are results (they follow the findings), 3 a failure.
func (m *docMaker) cli(kind string, args ...string) []byte {
	var out, errOut bytes.Buffer
	if code := run(args, &out, &errOut); code > exitCritical {
		m.fail("wgperf %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
		return nil
	}
	m.docs = append(m.docs, printedDoc{from: "wgperf " + strings.Join(args, " "), kind: kind, json: out.Bytes()})
	return out.Bytes()
}

// value prints v as the command printing kind does (writeResult with --json).
func (m *docMaker) value(kind, from string, v any) {
	var out bytes.Buffer
	if err := writeJSON(&out, document.Kind(kind), v); err != nil {
		m.fail("%s: %v", from, err)
		return
	}
	m.docs = append(m.docs, printedDoc{from: from, kind: kind, json: out.Bytes()})
}

// raw gives a recorded document (no header) the header its command adds today.
func (m *docMaker) raw(kind, path string, recorded bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		m.fail("%v", err)
		return
	}
	var out bytes.Buffer
	if err := document.WriteJSON(&out, document.Kind(kind), version, b); err != nil {
		m.fail("%s: %v", path, err)
		return
	}
	m.docs = append(m.docs, printedDoc{from: path, kind: kind, json: out.Bytes(), recorded: recorded})
}

func (m *docMaker) open(parts ...string) *os.File {
	f, err := os.Open(testdata(parts...))
	if err != nil {
		m.fail("%v", err)
		return nil
	}
	return f
}

func makeDocuments() ([]printedDoc, []string) {
	tmp, err := os.MkdirTemp("", "wgperf-documents-")
	if err != nil {
		return nil, []string{err.Error()}
	}
	defer os.RemoveAll(tmp)
	m := &docMaker{tmp: tmp}
	m.diagnoseDocs()
	m.catalogDocs()
	m.fixDocs()
	m.ecmpDoc()
	m.snapshotDocs()
	m.benchDocs()
	m.mtuDocs()
	m.icmpBurstDocs()
	m.shapeSweepDocs()
	m.labDocs()
	m.doctorDocs()
	m.cli("version", "version", "--json")
	return m.docs, m.errs
}

// doctorDocs is doctor's report of one end of a lab's tunnel, as its golden
// test holds it: doctor on this host may have no tunnel to judge (exit 3).
// (Its other goldens are synthetic: a journal ID and MTU method no host writes.)
func (m *docMaker) doctorDocs() {
	m.raw("doctor", filepath.Join("..", "..", "internal", "doctor", "testdata", "one-end.json"), false)
	// Each uplink measured: the tunnel over it, its hops.
	m.raw("doctor", filepath.Join("..", "..", "internal", "doctor", "testdata", "stale-route.json"), false)
}

func snapshotFiles() []string {
	files, _ := filepath.Glob(testdata("snapshots", "*.json"))
	return files
}

func (m *docMaker) diagnoseDocs() {
	for _, f := range snapshotFiles() {
		m.cli("diagnose", "diagnose", "--from", f, "--json")
		if strings.HasSuffix(f, "-a.json") {
			if b := strings.TrimSuffix(f, "-a.json") + "-b.json"; exists(b) {
				m.cli("diagnose", "diagnose", "--from", f, "--from", b, "--json")
			}
		}
	}
	m.raw("diagnose", filepath.Join("..", "..", "internal", "diagnose", "testdata", "diagnosis.json"), false)
	// A fleet with one host that cannot answer: a namespace that does not exist.
	inv := filepath.Join(m.tmp, "hosts.txt")
	if err := os.WriteFile(inv, []byte("# schema test\nnetns:wgperf-no-such-ns\n"), 0o600); err != nil {
		m.fail("%v", err)
		return
	}
	m.cli("diagnose-fleet", "diagnose", "--inventory", inv, "--from", snapshot("seed000-golem.json"), "--json")
	m.cli("inventory", "diagnose", "--inventory", inv, "--list-hosts", "--json")
	ini := filepath.Join(m.tmp, "hosts.ini")
	if err := os.WriteFile(ini, []byte("[routers]\ngw1 ansible_host=192.0.2.1 ansible_user=root site=berlin\n[edge:children]\nrouters\n"), 0o600); err != nil {
		m.fail("%v", err)
		return
	}
	m.cli("inventory", "inventory", "--inventory", ini, "--inventory", inv, "--limit", "edge", "--json")
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// admittedHere is fs with the actions this host's facts do not admit taken
// out (fix --from refuses a file that has one: the snapshots' tunnels and
// routes are not this host's), their by-hand commands kept.
func admittedHere(m *docMaker, fs []finding.Finding) []finding.Finding {
	here, err := collect.Collect(context.Background(), target.Local(), collect.Options{})
	if err != nil {
		m.fail("collect: %v", err)
		return fs
	}
	for i := range fs {
		for j, fx := range fs[i].Fixes {
			if fx.Action != nil && check.AllowsOn(fs[i].ID, *fx.Action, here) != nil {
				fs[i].Fixes[j].Action = nil
			}
		}
	}
	return fs
}

func (m *docMaker) catalogDocs() {
	m.cli("checks", "checks", "--json")
	for _, id := range catalogIDs() {
		m.cli("explanation", "explain", id, "--json")
	}
}

// fixDocs plans fixes for this host against a scratch root: raises any host
// takes, and the findings of recorded snapshots (renamed to this host, their
// actions this host does not admit taken out), and rolls back a scratch
// journal whose only undo line is "true": nothing on the host changes.
func (m *docMaker) fixDocs() {
	root := filepath.Join(m.tmp, "root")
	// A plan with items on any host: raises to the largest values the
	// findings allow, min and default of tcp_rmem kept as they are here.
	rmem, err := os.ReadFile("/proc/sys/net/ipv4/tcp_rmem")
	if f := strings.Fields(string(rmem)); err == nil && len(f) == 3 {
		raise := filepath.Join(m.tmp, "local-raise.json")
		doc := `{"findings": [
		  {"id": "net.backlog-drops", "severity": "warning", "title": "t", "evidence": [], "fixes": [{"description": "d", "commands": [],
		   "action": {"kind": "sysctl", "params": {"key": "net.core.netdev_max_backlog", "value": "2147483646"}}}]},
		  {"id": "tcp.buffers-small", "severity": "warning", "title": "t", "evidence": [], "fixes": [{"description": "d", "commands": [],
		   "action": {"kind": "sysctl", "params": {"key": "net.ipv4.tcp_rmem", "value": "` + f[0] + " " + f[1] + ` 2146435072"}}}]}]}`
		if err := os.WriteFile(raise, []byte(doc), 0o600); err != nil {
			m.fail("%v", err)
		}
		m.cli("fix-plan", "fix", "--host", "local", "--root", root, "--from", raise, "--json")
	}
	for _, name := range []string{"lab-loss3-udpbuf64k-a.json", "lab-multiwan-stale-a.json"} {
		var out, errOut bytes.Buffer
		if code := run([]string{"diagnose", "--from", snapshot(name), "--json"}, &out, &errOut); code > exitCritical {
			m.fail("diagnose %s: %s", name, errOut.String())
			continue
		}
		var d map[string]any
		if err := json.Unmarshal(out.Bytes(), &d); err != nil {
			m.fail("%v", err)
			continue
		}
		for _, f := range d["findings"].([]any) {
			f.(map[string]any)["host"] = "local"
		}
		b, _ := json.Marshal(d)
		fs, err := fix.ReadFindings(bytes.NewReader(b))
		if err != nil {
			m.fail("%v", err)
			continue
		}
		local := filepath.Join(m.tmp, "local-"+name)
		b, _ = json.Marshal(map[string]any{"findings": admittedHere(m, fs)})
		if err := os.WriteFile(local, b, 0o600); err != nil {
			m.fail("%v", err)
			continue
		}
		m.cli("fix-plan", "fix", "--host", "local", "--root", root, "--from", local, "--json")
	}

	jroot := filepath.Join(m.tmp, "jroot")
	dir := filepath.Join(jroot, "var", "lib", "wgperf", "journal")
	conf := filepath.Join(jroot, "etc", "sysctl.d", "90-wgperf.conf")
	for _, d := range []string{filepath.Dir(dir), dir, filepath.Dir(conf)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			m.fail("%v", err)
			return
		}
		_ = os.Chmod(d, 0o700)
	}
	if err := os.WriteFile(conf, []byte("net.core.rmem_max = 26214400\n"), 0o644); err != nil {
		m.fail("%v", err)
		return
	}
	const id = "20261122T003616.429002800Z"
	journal := map[string]any{
		"id": id, "host": "local", "started": "2026-11-22T00:36:16.4290028Z", "state": "applied",
		"entries": []any{
			map[string]any{"findings": []string{"udp.rcvbuf-errors"}, "description": "Raise net.core.rmem_max from 208 KiB to 25 MiB",
				"status": "applied", "step": map[string]any{"kind": "sysctl", "summary": "net.core.rmem_max 212992 -> 26214400",
					"commands": []string{"true"}, "undo": []string{"true"},
					"files": []any{map[string]any{"path": conf, "existed": false, "new": []byte("net.core.rmem_max = 26214400\n"), "mode": 0o644}}}},
			map[string]any{"findings": []string{"net.backlog-drops"}, "description": "Raise net.core.netdev_max_backlog",
				"status": "already", "step": map[string]any{"kind": "sysctl", "summary": "net.core.netdev_max_backlog is 16384 already", "done": true}},
		},
		"verify": map[string]any{"before": map[string]any{"name": "tunnel throughput", "value": 81.5, "unit": "Mbit/s"},
			"after": map[string]any{"name": "tunnel throughput", "value": 188.2, "unit": "Mbit/s", "detail": "upload, 1 stream"}, "kept": true},
	}
	b, _ := json.MarshalIndent(journal, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, id+".json"), b, 0o600); err != nil {
		m.fail("%v", err)
		return
	}
	m.cli("fix-journal", "fix", "rollback", "--host", "local", "--root", jroot, "--json")
}

// ecmpDoc is "fix ecmp --server --apply --json" as a lab pair gives it (it
// builds tunnels on two hosts, so the root lab test runs it).
func (m *docMaker) ecmpDoc() {
	step := func(host, dev string) map[string]any {
		return map[string]any{"kind": "ecmp-tunnels", "summary": host + ": 1 tunnel -> 2, ports 51820..51821",
			"commands": []string{"ip link add dev " + dev + " type wireguard"}, "undo": []string{"ip link del dev " + dev}}
	}
	end := func(host, iface, peerKey string, verify map[string]any) map[string]any {
		item := map[string]any{"findings": []string{"route.ecmp-suggested"}, "description": "one half of 2 tunnels",
			"action": map[string]any{"kind": "ecmp-tunnels", "params": map[string]string{"interface": iface, "tunnels": "2", "peer_keys": peerKey}},
			"step":   step(iface, iface+"1")}
		j := map[string]any{"id": "20261129T180000.000000000Z", "host": host, "started": "2026-11-29T18:00:00Z", "state": "applied",
			"entries": []any{map[string]any{"findings": []string{"route.ecmp-suggested"}, "description": "spread the flows", "status": "applied",
				"step": step(iface, iface+"1")}}}
		if verify != nil {
			j["verify"] = verify
		}
		return map[string]any{"host": host, "plan": map[string]any{"host": host, "platform": "linux", "kernel": "6.1.0", "items": []any{item}},
			"journal": j}
	}
	m.value("fix-ecmp", "fix ecmp --server --apply --verify on a lab pair", map[string]any{
		"near": end("netns:wgl-doc-a", "wg-doc-a", "iJAU7xH9N4GOKXnOurLON3PD3JWVqH/E4vF9BDnHhBs=", map[string]any{
			"before": map[string]any{"name": "aggregate throughput", "value": 91.6, "unit": "Mbit/s", "detail": "16 TCP streams to 10.78.0.2, 3 s: 0 retransmits, 0 reordered"},
			"after":  map[string]any{"name": "aggregate throughput", "value": 183.1, "unit": "Mbit/s", "detail": "16 TCP streams to 10.78.0.2, 3 s: 0 retransmits, 0 reordered"},
			"kept":   true}),
		"far": end("netns:wgl-doc-b", "wg-doc-b", "XchSCB4JRos6MxKM8PaNwtqWjnuofzE6CrGxT+/UdDg=", nil),
	})
}

// snapshotDocs: what collect writes for this host, and for each recorded
// snapshot read back and written again.
func (m *docMaker) snapshotDocs() {
	m.cli("snapshot", "collect", "--host", "local")
	for _, f := range snapshotFiles() {
		r := m.open("snapshots", filepath.Base(f))
		if r == nil {
			continue
		}
		s, err := document.ReadSnapshot(r)
		r.Close()
		if err != nil {
			m.fail("%s: %v", f, err)
			continue
		}
		var buf bytes.Buffer
		if err := document.WriteSnapshot(&buf, s); err != nil {
			m.fail("%s: %v", f, err)
			continue
		}
		var out bytes.Buffer
		if err := document.WriteJSON(&out, "snapshot", version, buf.Bytes()); err != nil {
			m.fail("%s: %v", f, err)
			continue
		}
		m.docs = append(m.docs, printedDoc{from: "collect of " + f, kind: "snapshot", json: out.Bytes()})
	}
}

func (m *docMaker) iperf(name string) *iperf.Result {
	f := m.open("probe", "iperf", name)
	if f == nil {
		return nil
	}
	defer f.Close()
	res, err := iperf.Parse(f)
	if err != nil {
		m.fail("%s: %v", name, err)
	}
	return res
}

func (m *docMaker) sample(when string) bench.Sample {
	var s bench.Sample
	var err error
	read := func(name string) *os.File { return m.open("probe", "counters", when+"-"+name) }
	if f := read("snmp.txt"); f != nil {
		s.SNMP, err = parse.ParseSNMP(f)
		f.Close()
	}
	if f := read("softnet_stat.txt"); f != nil && err == nil {
		s.Softnet, err = parse.ParseSoftnet(f)
		f.Close()
	}
	if f := read("stat.txt"); f != nil && err == nil {
		s.CPU, err = parse.ParseProcStat(f)
		f.Close()
	}
	// Interface and firewall drops recorded on other lab nodes, so that the
	// document's drop lists are not empty.
	if f := m.open("probe", "counters", "flood-a-"+when+"-net_dev.txt"); f != nil && err == nil {
		s.NetDev, err = parse.ParseNetDev(f)
		f.Close()
	}
	if f := m.open("probe", "counters", "drop-b-"+when+".nft.json"); f != nil && err == nil {
		var fw facts.Firewall
		fw, err = parse.ParseNftFirewall(f)
		s.Firewall = &fw
		f.Close()
	}
	if err != nil {
		m.fail("counters %s: %v", when, err)
	}
	return s
}

// ss reads an ss -tin output recorded in the lab (testdata/collect/ss).
func (m *docMaker) ss(name string) []facts.TCPSocket {
	f := m.open("collect", "ss", name)
	if f == nil {
		return nil
	}
	defer f.Close()
	socks, err := parse.ParseSSTCPInfo(f)
	if err != nil {
		m.fail("%s: %v", name, err)
	}
	return socks
}

// benchReport is what bench.Measure assembles from its runs, here from
// recorded iperf3 runs and counters.
func (m *docMaker) benchReport() *bench.Report {
	rep := &bench.Report{Client: targettest.Spec("netns:wgl-doc-a"), Server: targettest.Spec("netns:wgl-doc-b"), TunnelAddr: "10.77.0.2", UnderlayAddr: "203.0.113.2",
		ClientInterface: "wg-doc-a", ServerInterface: "wg-doc-b", Hops: 1, Omit: 1, Seconds: 4}
	for _, r := range []struct {
		path, dir, file string
		streams         int
		udp             float64
	}{
		{bench.PathTunnel, bench.Upload, "tcp-lossy-cubic.json", 1, 0},
		{bench.PathTunnel, bench.Download, "tcp-reverse-lossy-cubic.json", 1, 0},
		{bench.PathUnderlay, bench.Upload, "tcp-upload.json", 1, 0},
		{bench.PathUnderlay, bench.Download, "tcp-reverse.json", 1, 0},
		{bench.PathTunnel, bench.Upload, "tcp-parallel.json", 4, 0},
		{bench.PathTunnel, bench.Upload, "udp-20m-loss3.json", 1, 20},
	} {
		addr := rep.TunnelAddr
		if r.path == bench.PathUnderlay {
			addr = rep.UnderlayAddr
		}
		run := bench.Run{Spec: bench.Spec{Path: r.path, Direction: r.dir, Streams: r.streams, UDPMbit: r.udp}, Addr: addr, Result: m.iperf(r.file)}
		run.Client = bench.Delta(bench.End{Host: rep.Client}, bench.Sample{}, bench.Sample{})
		run.Server = bench.Delta(bench.End{Host: rep.Server}, m.sample("before"), m.sample("after"))
		if r.path == bench.PathTunnel && r.udp == 0 && r.streams == 1 && r.dir == bench.Upload {
			// ss at both ends, recorded with the receiver's tcp_rmem max at 256 KiB.
			run.TCP = bench.FlowState([][]facts.TCPSocket{m.ss("tin-rwnd-sender.txt")}, [][]facts.TCPSocket{m.ss("tin-rwnd-receiver.txt")}, nil)
			run.Server.TCPRmem, run.Server.TCPWmem = []int64{4096, 131072, 262144}, []int64{4096, 16384, 4194304}
		}
		rep.Runs = append(rep.Runs, run)
	}
	bench.Analyze(rep)
	rep.Elapsed = 31.5
	return rep
}

func (m *docMaker) benchDocs() {
	m.value("bench", "bench from testdata/probe/iperf", m.benchReport())
	m.value("bench", "bench with no run finished", func() *bench.Report {
		rep := &bench.Report{Client: targettest.Spec("local"), Server: targettest.Spec("ssh:m42"), TunnelAddr: "10.0.0.2", Hops: 1, Omit: 1, Seconds: 4}
		bench.Analyze(rep)
		return rep
	}())
	m.raw("bench", testdata("report", "bench.json"), true)
	m.value("bench", "bench with several clients at once (--clients)", func() *bench.Report {
		rep := m.benchReport()
		rep.Clients = &bench.ManyClients{Addr: "10.77.0.2", Clients: 3, Streams: 50, Omit: 1, Seconds: 4, Complete: false,
			Runs: []bench.ClientsRun{{Direction: bench.Upload, Connections: 100, Mbit: 101.7, From: "server", OverlapSecs: 3.6, Retransmits: 812, Spread: 0.76,
				Clients: []bench.ClientRun{
					{Client: "netns:wgl-doc-a", Port: 5299, Streams: 50, Mbit: 38.5, WindowMbit: 37.9, Retransmits: 402},
					{Client: "netns:wgl-doc-c1", Port: 5300, Streams: 50, Mbit: 29.1, WindowMbit: 30.2, Retransmits: 410},
					{Client: "netns:wgl-doc-c2", Port: 5301, Streams: 50, Error: "netns:wgl-doc-c2 cannot reach the iperf3 server"},
				}}}}
		return rep
	}())
}
