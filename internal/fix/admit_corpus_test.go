package fix

import (
	"encoding/json"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target/targettest"
	"github.com/wgperf/wgperf/internal/testutil"
)

// corpus is the recorded snapshots, and one of them with an 802.3ad bond
// as its uplink.
func corpus(t *testing.T) []*facts.Snapshot {
	t.Helper()
	paths, err := filepath.Glob(testutil.Testdata("snapshots", "*.json"))
	if err != nil || len(paths) < 5 {
		t.Fatalf("snapshots: %v %v", paths, err)
	}
	var out []*facts.Snapshot
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var s facts.Snapshot
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out = append(out, &s)
	}
	// The bond goes on the healthy lab's A, whose uplink eth0 carries the tunnel.
	i := slices.IndexFunc(paths, func(p string) bool { return filepath.Base(p) == "lab-healthy-a.json" })
	if i < 0 {
		t.Fatal("snapshots: no lab-healthy-a.json")
	}
	bonded := clone(out[i])
	bonded.Host = targettest.Spec(bonded.Host.String() + "-bonded")
	for i, l := range bonded.Links {
		if l.Name == "eth0" {
			bonded.Links[i].Bond = &facts.Bond{Mode: "802.3ad 4", XmitHashPolicy: "layer3+4 1", Slaves: []string{"eth8", "eth9"}}
		}
	}
	// The VM's virtio NIC after a long transfer with both queues on CPU 0.
	var piled *facts.Snapshot
	if err := json.Unmarshal(testutil.ReadTestdata(t, "collect", "irq", "vm-virtio-local.json"), &piled); err != nil {
		t.Fatal(err)
	}
	piled.Host = targettest.Spec("netns:vm-piled") // a host of its own (the recording is local's), a spec that reads back
	for i := range piled.IRQs {
		if piled.IRQs[i].Device == "eth0" {
			piled.IRQs[i].PerCPU = []uint64{900000, 0}
		}
	}
	return append(out, bonded, piled)
}

func clone[T any](v T) T {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

// valuePool is what an attacker (or a copy-paste) would put in a param: the
// corpus hosts' own names, addresses, ports and rules (of every host, so
// mostly another host's), values the catalog names, sysctl keys of every
// kind, numbers at and around every limit, and hostile text.
func valuePool(hosts []*facts.Snapshot) []string {
	set := map[string]bool{}
	add := func(vs ...string) {
		for _, v := range vs {
			set[v] = true
		}
	}
	for _, h := range hosts {
		for _, w := range h.WireGuard {
			add(w.Name, strconv.Itoa(w.ListenPort), strconv.Itoa(w.MTU))
			for _, p := range w.Peers {
				add(p.Endpoint)
			}
		}
		for _, e := range h.Endpoints {
			add(e.Endpoint, e.Dev, e.Gateway, e.Interface)
		}
		for _, l := range h.Links {
			add(l.Name)
		}
		for _, r := range h.Routes {
			add(r.Gateway, r.Dev, r.Table)
		}
		for _, r := range h.Firewall.Rules {
			add(r.Family, r.Table, r.Chain, strconv.Itoa(r.Handle), r.Text)
		}
		for k, v := range h.Sysctls {
			add(k, v)
		}
		if h.OpenWrt != nil {
			for k := range h.OpenWrt.Network {
				if parts := strings.Split(k, "."); len(parts) == 2 {
					add(parts[1])
				}
			}
		}
	}
	add("kernel.randomize_va_space", "net.core.somaxconn", "net.ipv4.ip_forward", "vm.overcommit_memory",
		"net.core.rmem_max", "net.core.rmem_default", "net.core.wmem_max", "net.core.wmem_default", "net.core.netdev_max_backlog",
		"net.netfilter.nf_conntrack_max", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem",
		"bbr", "cubic", "reno", "dctcp", "pmtu", "layer2", "layer3+4", "encap3+4", "main", "local", "100", "1", "0", "-1",
		"250", "25", "26214400", "26214401", "13107200", "212992", "5000", "5001", "10000", "10002", "1000", "262144", "262146", "131072",
		"2147483646", "2147483647", "2147483648", "+5000", "05000", "1279", "1280", "1340", "1420", "1440", "1500", "9000", "9001",
		"535", "536", "1300", "1380", "1400", "51820", "65535", "65536", "3", "f", "ff", "ffffffff",
		"4096 131072 6291456", "4096 131072 33554432", "4096 16384 33554432", "4096 131072 33554433", "0 0 1048576", "4096 87380 2147483648",
		"150mbit", "10mbit", "1mbit", "0mbit", "1gbit", "150Mbit", "1.5mbit", "mwan3", "/etc/init.d/network", "reboot",
		"203.0.113.2", "198.51.100.2", "46.38.233.77", "46.38.233.77:51820", "192.0.2.1", "10.0.0.1", "::1", "bond0", "eth0", "eth1", "wg0", "lo",
		"wg0\n", "$(reboot)", "-oProxyCommand=x", "x;reboot", "", " ", "\u001b[2J")
	out := make([]string, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// paramNames are every param any fix kind reads, and two none does.
var paramNames = []string{"key", "value", "algorithm", "interface", "mtu", "uci_section", "oif", "mss", "port", "endpoint", "table",
	"via", "dev", "uci_interface", "rate", "banip", "backend", "family", "chain", "handle", "rule", "device", "mask", "bond", "policy",
	"restart", "command"}

// randomAction is any ID, any fix kind, and params drawn from the names and
// the pool.
func randomAction(r *rand.Rand, pool []string) (finding.ID, finding.Action) {
	ids := append(catalog.IDs(), "mtu.no-such", "udp.rcvbuf")
	kinds := append(remedy.Kinds(), "exec", "")
	a := finding.Action{Kind: kinds[r.IntN(len(kinds))], Params: map[string]string{}}
	for range 1 + r.IntN(4) {
		a.Params[paramNames[r.IntN(len(paramNames))]] = pool[r.IntN(len(pool))]
	}
	return ids[r.IntN(len(ids))], a
}

// mutate changes one to three things of an action wgperf emitted: its kind,
// a param's value, a param added or removed; or (one case in five) nothing.
func mutate(r *rand.Rand, a finding.Action, pool []string) finding.Action {
	if r.IntN(5) == 0 {
		return a
	}
	for range 1 + r.IntN(3) {
		keys := slices.Sorted(maps.Keys(a.Params))
		switch r.IntN(5) {
		case 0:
			kinds := remedy.Kinds()
			a.Kind = kinds[r.IntN(len(kinds))]
		case 1, 2:
			if len(keys) > 0 {
				a.Params[keys[r.IntN(len(keys))]] = pool[r.IntN(len(pool))]
			}
		case 3:
			a.Params[paramNames[r.IntN(len(paramNames))]] = pool[r.IntN(len(pool))]
		case 4:
			if len(keys) > 0 {
				delete(a.Params, keys[r.IntN(len(keys))])
			}
		}
	}
	return a
}
