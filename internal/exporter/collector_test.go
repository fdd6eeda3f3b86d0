package exporter

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/facts"
)

// The registry is sorted, every collector says what it reads, and no metric
// name has two sources.
func TestCollectors(t *testing.T) {
	if !slices.IsSortedFunc(collectors, func(a, b collector) int { return strings.Compare(a.name, b.name) }) {
		t.Error("collectors are not sorted by name")
	}
	names := map[string]bool{}
	source := map[string]string{}
	for _, d := range ownDescs {
		source[d.Name()] = "the exporter's own metrics"
	}
	for _, c := range collectors {
		if c.name == "" || c.name != strings.ToLower(c.name) || names[c.name] {
			t.Errorf("collector name %q: want unique and lower case", c.name)
		}
		names[c.name] = true
		if !strings.HasSuffix(c.doc, ".") || len(c.doc) < 40 {
			t.Errorf("collector %s: doc %q does not say what it reads", c.name, c.doc)
		}
		if len(c.descs) == 0 || c.emit == nil {
			t.Errorf("collector %s declares no metric or has no emit", c.name)
		}
		for _, d := range c.descs {
			if prev, ok := source[d.Name()]; ok {
				t.Errorf("metric %s is declared by collector %s and by %s", d.Name(), c.name, prev)
			}
			source[d.Name()] = "collector " + c.name
		}
	}
}

// collectorInputs are recorded collections with their check results: the
// multi-WAN router with its endpoint route stuck on the backup uplink (both
// ends), and a host collected without root, whose firewall checks skip.
func collectorInputs(t *testing.T) map[string]hostFacts {
	t.Helper()
	snaps := map[string]*facts.Snapshot{
		"multiwan-a": readFixture(t, "multiwan-a.json"),
		"multiwan-b": readFixture(t, "multiwan-b.json"),
		// A's tunnel capped by tbf at 80 Mbit/s (the shaper-cap lab).
		"shaper-cap-a": readFixture(t, filepath.Join("..", "snapshots", "lab-shaper-cap-a.json")),
	}
	f, err := os.Open(filepath.Join("testdata", "unprivileged-local.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if snaps["unprivileged-local"], err = document.ReadSnapshot(f); err != nil {
		t.Fatal(err)
	}
	in := map[string]hostFacts{}
	for name, s := range snaps {
		names := PeerNames{}
		for _, w := range s.WireGuard {
			for _, p := range w.Peers {
				names[p.PublicKey] = "peer of " + w.Name
			}
		}
		res := check.Run([]*facts.Snapshot{s}, check.Options{})
		in[name] = newHostFacts(s, res, peerLabels{names: names, roam: newRoamLimiter()})
	}
	return in
}

// Each collector emits only the metrics it declares, and each of them on
// some recorded collection: a declared metric nothing emits is dead, one
// emitted undeclared escapes the registry's checks and the deploy tests.
func TestCollectorsEmitWhatTheyDeclare(t *testing.T) {
	inputs := collectorInputs(t)
	for _, c := range collectors {
		emitted := map[*Desc]bool{}
		for name, h := range inputs {
			var e emitter
			c.emit(h, &e)
			if _, err := gather(e.out); err != nil {
				t.Errorf("collector %s on %s: %v", c.name, name, err)
			}
			for _, m := range e.out {
				if !slices.Contains(c.descs, m.desc) {
					t.Errorf("collector %s on %s emits %s, which it does not declare", c.name, name, m.desc.Name())
				}
				emitted[m.desc] = true
			}
		}
		for _, d := range c.descs {
			if !emitted[d] {
				t.Errorf("collector %s declares %s but emits it on no recorded collection", c.name, d.Name())
			}
		}
	}
}

// A WireGuard interface listed twice (wg show all dump sees every namespace)
// or a peer listed twice is served once, as first listed: a repeated series
// would make the whole scrape fail.
func TestRepeatedInterfacesAndPeersAreOneSeries(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	snap := &facts.Snapshot{CollectedAt: at, WireGuard: []facts.WGInterface{
		{Name: "wg0", MTU: 1420, Peers: []facts.WGPeer{
			{PublicKey: "a=", Endpoint: "192.0.2.1:51820", RxBytes: 1},
			{PublicKey: "b="},
			{PublicKey: "a=", Endpoint: "198.51.100.1:51820", RxBytes: 2},
		}},
		{Name: "wg0", MTU: 1280, Peers: []facts.WGPeer{{PublicKey: "c="}}},
	}}
	fams, err := gather(hostMetrics(snap, check.Result{}, peerLabels{roam: newRoamLimiter()}))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := writeFamilies(&b, fams); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		`wgperf_wireguard_interface_mtu_bytes{interface="wg0"} 1420`,
		`wgperf_wireguard_peer_endpoint_info{endpoint_ip="192.0.2.1",interface="wg0",peer="a="} 1`,
		`wgperf_wireguard_peer_receive_bytes_total{interface="wg0",peer="a="} 1`,
		`wgperf_wireguard_peer_receive_bytes_total{interface="wg0",peer="b="} 0`,
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("scrape lacks %s:\n%s", want, got)
		}
	}
	for _, stray := range []string{"1280", "198.51.100.1", `peer="c="`} {
		if strings.Contains(got, stray) {
			t.Errorf("a repeated interface or peer shows (%s):\n%s", stray, got)
		}
	}
}

// TestEveryCollectorIsRegistered reads the package's sources: a collector
// value not listed in collectors, or a metric declared with desc that nothing
// serves, fails here instead of silently exporting nothing; and a
// collector_NAME.go file holds exactly one collector.
func TestEveryCollectorIsRegistered(t *testing.T) {
	registered := map[string]bool{}
	for _, c := range collectors {
		registered[c.name] = true
	}
	served := map[string]bool{}
	for _, d := range allDescs() {
		served[d.Name()] = true
	}
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		declared := 0
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if id, ok := n.Type.(*ast.Ident); ok && id.Name == "collector" {
					declared++
					if name := stringField(n, "name"); !registered[name] {
						t.Errorf("%s: collector %q is not listed in collectors (collector.go)", fset.Position(n.Pos()), name)
					}
				}
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "desc" && len(n.Args) > 0 {
					if name := stringLit(n.Args[0]); name != "" && !served[ns+"_"+name] {
						t.Errorf("%s: metric %s_%s is declared but no registered collector or ownDescs serves it", fset.Position(n.Pos()), ns, name)
					}
				}
			}
			return true
		})
		if strings.HasPrefix(path, "collector_") && declared != 1 {
			t.Errorf("%s declares %d collectors, want one per file", path, declared)
		}
	}
}

// stringField is the string literal of a composite literal's keyed field.
func stringField(lit *ast.CompositeLit, key string) string {
	for _, el := range lit.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			if id, ok := kv.Key.(*ast.Ident); ok && id.Name == key {
				return stringLit(kv.Value)
			}
		}
	}
	return ""
}

func stringLit(e ast.Expr) string {
	if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
		s, _ := strconv.Unquote(lit.Value)
		return s
	}
	return ""
}
