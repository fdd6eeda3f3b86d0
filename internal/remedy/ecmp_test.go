package remedy

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"net/netip"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/testutil"
)

// Public keys of the other end's new tunnels, as the plan of each end names them.
const (
	ecmpKeyB1 = "3VmR7PSHrDkAhmTMaC7TLTAYh9sZMcmjDXcUK8OWDHA="
	ecmpKeyA1 = "deOAUQJsI0IrLN6AfBAuAednsG2d+2NNtZA78s+v3is="
)

// succeeds checks err against a table case's wanted error ("" for none): it
// fails the test on a mismatch and reports whether the case goes on.
func succeeds(t *testing.T, err error, want string) bool {
	t.Helper()
	if want != "" {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v, want an error with %q", err, want)
		}
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

func TestECMPConstructor(t *testing.T) {
	for _, tc := range []struct {
		name, iface string
		tunnels     int
		keys        []string
		err         string
	}{
		{"two", "wg0", 2, []string{ecmpKeyB1}, ""},
		{"sixteen", "wg-site", 16, slices.Repeat([]string{ecmpKeyB1}, 15), ""},
		{"one", "wg0", 1, nil, "want 2..16"},
		{"seventeen", "wg0", 17, slices.Repeat([]string{ecmpKeyB1}, 16), "want 2..16"},
		{"a key short", "wg0", 3, []string{ecmpKeyB1}, "1 peer keys for 3 tunnels"},
		{"not a key", "wg0", 2, []string{"c2VjcmV0"}, "public key"},
		{"an option", "-wg0", 2, []string{ecmpKeyB1}, "not a valid interface name"},
		{"new names too long", "wg-abcdefghijk9", 2, []string{ecmpKeyB1}, "not a valid interface name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ECMP(tc.iface, tc.tunnels, tc.keys)
			if !succeeds(t, err, tc.err) {
				return
			}
			back, err := parsers[KindECMP](r.Params())
			if err != nil || back.Describe() != r.Describe() {
				t.Errorf("params %v read back as %v, %v", r.Params(), back, err)
			}
		})
	}
	if got := ECMPDevices("wg0", 3); !slices.Equal(got, []string{"wg0", "wg1", "wg2"}) {
		t.Errorf("ECMPDevices(wg0, 3) = %v", got)
	}
	if got := ECMPDevices("wg-e37-a", 2); !slices.Equal(got, []string{"wg-e37-a", "wg-e37-a1"}) {
		t.Errorf("ECMPDevices(wg-e37-a, 2) = %v", got)
	}
}

// The key a tunnel gets is SHA-256 over the tunnel's own key and a label, in
// base64, computed by the host's shell (sh, sha256sum, base64): run here with
// a throw-away key in place of "wg show IF private-key".
func TestECMPKeyCommandDerives(t *testing.T) {
	testutil.RequireTools(t, "sh", "sha256sum", "base64")
	const own = "YSBwcml2YXRlIGtleSB3YXMgaGVyZTsgd2dwZXJmJ3M="
	for _, k := range []int{1, 2, 15, 16, 37} { // 16 and 37: a NUL byte in the key, 37 a % too
		line := strings.Replace(ECMPKeyCommand("wg0", k), "wg show wg0 private-key", "echo "+own, 1)
		if line == ECMPKeyCommand("wg0", k) {
			t.Fatal("the command does not start from wg show wg0 private-key")
		}
		out, err := exec.Command("sh", "-c", line).Output()
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(own + " wgperf-ecmp-" + strconv.Itoa(k)))
		if got, want := strings.TrimSpace(string(out)), base64.StdEncoding.EncodeToString(sum[:]); got != want {
			t.Errorf("tunnel %d: key %q, want %q", k, got, want)
		}
	}
	if strings.Contains(ECMPKeyCommand("wg0", 1), own) {
		t.Error("the command holds a key")
	}
}

// ecmpLabHost is one site of the multi-wan lab as recorded: "wg show all
// dump" (both sites' interfaces: the lab's socket folder is shared) and
// "ip -j route".
func ecmpLabHost(t *testing.T, site string) ECMPHost {
	t.Helper()
	wg, err := parse.ParseWGDump(bytes.NewReader(testutil.ReadTestdata(t, "collect", "wg", "dump-lab-ecmp")))
	if err != nil {
		t.Fatal(err)
	}
	routes, err := parse.ParseIPRoute(bytes.NewReader(testutil.ReadTestdata(t, "collect", "ip", "route-lab-ecmp-"+site+".json")), "inet")
	if err != nil {
		t.Fatal(err)
	}
	return ECMPHost{WG: wg, Routes: routes, MTU: 1420, HashPolicy: "0"}
}

// TestPlanECMPHalf holds each end's step and its undo, planned on the lab's
// two sites as recorded, and what the plan refuses.
func TestPlanECMPHalf(t *testing.T) {
	keyA, keyB := "y/f0CKRu03Rrowo/XtvblpxTBCnIQFP5nnT+HSWdJWI=", "YG+cE2Ndc+xBtuyWRpDyQ/BwjAEKYJNxOsEbQ4DE0lg="
	for _, tc := range []struct {
		name    string
		site    string
		iface   string
		edit    func(*ECMPHost)
		cmds    []string // besides the key pipeline, which TestPlanECMPKeysStayOnTheHost holds
		undo    []string
		done    bool
		err     string
		summary string
	}{
		{
			name: "site A routes site B's networks over both", site: "a", iface: "wg-e37-a",
			cmds: []string{
				"ip link add dev wg-e37-a1 type wireguard",
				"ip address add 10.77.1.1/24 dev wg-e37-a1",
				"wg set wg-e37-a1 listen-port 51821 private-key /dev/stdin peer " + ecmpKeyB1 + " endpoint 203.0.113.2:51821 persistent-keepalive 25 allowed-ips 10.77.0.2/32,10.20.0.0/16,10.77.1.2/32",
				"ip link set dev wg-e37-a1 mtu 1420 up",
				"wg set wg-e37-a peer " + keyB + " allowed-ips 10.77.0.2/32,10.20.0.0/16,10.77.1.2/32",
				"sysctl -qw net.ipv4.fib_multipath_hash_policy=1",
				"ip route replace 10.20.0.0/16 nexthop dev wg-e37-a weight 1 nexthop dev wg-e37-a1 weight 1",
			},
			undo: []string{
				"ip route replace 10.20.0.0/16 dev wg-e37-a",
				"sysctl -qw net.ipv4.fib_multipath_hash_policy=0",
				"wg set wg-e37-a peer " + keyB + " allowed-ips 10.77.0.2/32,10.20.0.0/16",
				"ip link del dev wg-e37-a1",
			},
			summary: "wg-e37-a: 1 tunnel -> 2 (wg-e37-a, wg-e37-a1), ports 51820..51821, routing 10.20.0.0/16 over all of them",
		},
		{
			name: "site B answers on both, routes nothing", site: "b", iface: "wg-e37-b",
			cmds: []string{
				"ip link add dev wg-e37-b1 type wireguard",
				"ip address add 10.77.1.2/24 dev wg-e37-b1",
				"wg set wg-e37-b1 listen-port 51821 private-key /dev/stdin peer " + ecmpKeyB1 + " endpoint 198.51.100.2:51821 allowed-ips 10.77.0.1/32,10.77.1.1/32",
				"ip link set dev wg-e37-b1 mtu 1420 up",
				"wg set wg-e37-b peer " + keyA + " allowed-ips 10.77.0.1/32,10.77.1.1/32",
			},
			undo: []string{
				"wg set wg-e37-b peer " + keyA + " allowed-ips 10.77.0.1/32",
				"ip link del dev wg-e37-b1",
			},
			summary: "wg-e37-b: 1 tunnel -> 2 (wg-e37-b, wg-e37-b1), ports 51820..51821",
		},
		{
			name: "the lab's userspace nodes", site: "b", iface: "wg-e37-b",
			edit: func(h *ECMPHost) { h.Userspace = func(dev string) string { return "start-node " + dev } },
			cmds: []string{
				"start-node wg-e37-b1",
				"ip address add 10.77.1.2/24 dev wg-e37-b1",
				"wg set wg-e37-b1 listen-port 51821 private-key /dev/stdin peer " + ecmpKeyB1 + " endpoint 198.51.100.2:51821 allowed-ips 10.77.0.1/32,10.77.1.1/32",
				"ip link set dev wg-e37-b1 mtu 1420 up",
				"wg set wg-e37-b peer " + keyA + " allowed-ips 10.77.0.1/32,10.77.1.1/32",
			},
			undo: []string{"wg set wg-e37-b peer " + keyA + " allowed-ips 10.77.0.1/32", "ip link del dev wg-e37-b1"},
		},
		{
			name: "hashing on ports already", site: "a", iface: "wg-e37-a",
			edit: func(h *ECMPHost) { h.HashPolicy = "1" },
			cmds: []string{
				"ip link add dev wg-e37-a1 type wireguard",
				"ip address add 10.77.1.1/24 dev wg-e37-a1",
				"wg set wg-e37-a1 listen-port 51821 private-key /dev/stdin peer " + ecmpKeyB1 + " endpoint 203.0.113.2:51821 persistent-keepalive 25 allowed-ips 10.77.0.2/32,10.20.0.0/16,10.77.1.2/32",
				"ip link set dev wg-e37-a1 mtu 1420 up",
				"wg set wg-e37-a peer " + keyB + " allowed-ips 10.77.0.2/32,10.20.0.0/16,10.77.1.2/32",
				"ip route replace 10.20.0.0/16 nexthop dev wg-e37-a weight 1 nexthop dev wg-e37-a1 weight 1",
			},
			undo: []string{
				"ip route replace 10.20.0.0/16 dev wg-e37-a",
				"wg set wg-e37-a peer " + keyB + " allowed-ips 10.77.0.2/32,10.20.0.0/16",
				"ip link del dev wg-e37-a1",
			},
		},
		{
			name: "in place: the tunnels exist and the route spreads", site: "a", iface: "wg-e37-a",
			edit: func(h *ECMPHost) {
				h.WG = append(h.WG, facts.WGInterface{Name: "wg-e37-a1", ListenPort: 51821})
				for i, r := range h.Routes {
					if r.Dst == "10.20.0.0/16" {
						h.Routes[i] = facts.Route{Family: "inet", Table: "main", Dst: r.Dst, Nexthops: []facts.Nexthop{{Dev: "wg-e37-a", Weight: 1}, {Dev: "wg-e37-a1", Weight: 1}}}
					}
				}
			},
			done: true,
		},
		{
			name: "a new interface in the way", site: "a", iface: "wg-e37-a",
			edit: func(h *ECMPHost) { h.WG = append(h.WG, facts.WGInterface{Name: "wg-e37-a1"}) },
			err:  "exist already",
		},
		{
			name: "not a WireGuard interface", site: "a", iface: "eth0", err: "not a WireGuard interface",
		},
		{
			name: "a hub with two peers", site: "a", iface: "wg-e37-a",
			edit: func(h *ECMPHost) { h.WG[0].Peers = append(h.WG[0].Peers, h.WG[0].Peers[0]) },
			err:  "exactly one peer",
		},
		{
			name: "no subnet route of its own", site: "b", iface: "wg-e37-b",
			edit: func(h *ECMPHost) {
				h.Routes = slices.DeleteFunc(h.Routes, func(r facts.Route) bool { return r.Dev == "wg-e37-b" })
			},
			err: "no IPv4 subnet route",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := ecmpLabHost(t, tc.site)
			if tc.edit != nil {
				tc.edit(&h)
			}
			key := ecmpKeyB1
			r, err := ECMP(tc.iface, 2, []string{key})
			if err != nil {
				t.Fatal(err)
			}
			st, err := PlanECMPHalf(r, h)
			if !succeeds(t, err, tc.err) {
				return
			}
			if st.Done != tc.done {
				t.Fatalf("done %v, want %v", st.Done, tc.done)
			}
			var cmds []string
			for _, c := range st.Commands {
				if pre := ECMPKeyCommand(tc.iface, 1) + " | "; strings.HasPrefix(c, pre) {
					c = strings.TrimPrefix(c, pre)
				}
				cmds = append(cmds, c)
			}
			if !slices.Equal(cmds, tc.cmds) {
				t.Errorf("commands:\n  %s\nwant:\n  %s", strings.Join(cmds, "\n  "), strings.Join(tc.cmds, "\n  "))
			}
			if !slices.Equal(st.Undo, tc.undo) {
				t.Errorf("undo:\n  %s\nwant:\n  %s", strings.Join(st.Undo, "\n  "), strings.Join(tc.undo, "\n  "))
			}
			if tc.summary != "" && st.Summary != tc.summary {
				t.Errorf("summary %q, want %q", st.Summary, tc.summary)
			}
		})
	}
}

// TestPlanECMPKeysStayOnTheHost: the new tunnels take their private keys
// from the host's pipe, never from a value in the plan.
func TestPlanECMPKeysStayOnTheHost(t *testing.T) {
	r, err := ECMP("wg-e37-a", 3, []string{ecmpKeyB1, ecmpKeyA1})
	if err != nil {
		t.Fatal(err)
	}
	st, err := PlanECMPHalf(r, ecmpLabHost(t, "a"))
	if err != nil {
		t.Fatal(err)
	}
	sets := 0
	for _, c := range st.Commands {
		if strings.Contains(c, "private-key") {
			sets++
			if !strings.HasPrefix(c, ECMPKeyCommand("wg-e37-a", sets)+" | wg set wg-e37-a"+strconv.Itoa(sets)+" ") || !strings.Contains(c, "private-key /dev/stdin") {
				t.Errorf("tunnel %d takes its key otherwise: %s", sets+1, c)
			}
		}
	}
	if sets != 2 || len(st.Files) != 0 {
		t.Errorf("%d keys set, %d files written; want 2 and none", sets, len(st.Files))
	}
}

// TestPlanECMPOnPorts: with the ports SpreadPorts chose, the new tunnel
// listens on its own and reaches the other end's, and the params read back.
func TestPlanECMPOnPorts(t *testing.T) {
	r, err := ECMPOnPorts("wg-e37-a", 2, []string{ecmpKeyB1}, []int{51822}, []int{51821})
	if err != nil {
		t.Fatal(err)
	}
	back, err := parsers[KindECMP](r.Params())
	if err != nil || back.Describe() != r.Describe() || back.Params()["ports"] != "51822" || back.Params()["peer_ports"] != "51821" {
		t.Fatalf("params %v read back as %v, %v", r.Params(), back, err)
	}
	st, err := PlanECMPHalf(back, ecmpLabHost(t, "a"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(st.Commands, func(c string) bool {
		return strings.HasSuffix(c, "wg set wg-e37-a1 listen-port 51822 private-key /dev/stdin peer "+ecmpKeyB1+" endpoint 203.0.113.2:51821 persistent-keepalive 25 allowed-ips 10.77.0.2/32,10.20.0.0/16,10.77.1.2/32")
	}) || !strings.Contains(st.Summary, "ports 51820,51822 (chosen so the bond's hash spreads them)") {
		t.Errorf("step %q\n%s", st.Summary, strings.Join(st.Commands, "\n"))
	}
	for name, c := range map[string]struct{ ports, peer []int }{
		"one end's only":   {[]int{51822}, nil},
		"a port too many":  {[]int{51822, 51823}, []int{51821, 51822}},
		"a port twice":     {[]int{51822}, []int{0}},
		"beyond the range": {[]int{70000}, []int{51821}},
	} {
		if _, err := ECMPOnPorts("wg0", 2, []string{ecmpKeyB1}, c.ports, c.peer); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The other end's tunnel address is the peer's /32 inside this end's
// subnet and not this end's own (a config copied to both sites may allow
// both addresses); with none, no guess: the next address after this end's
// was one, wrong on the end numbered second (10.77.0.2's guess 10.77.0.3
// left the other end's 10.77.1.1 out of every new tunnel's allowed IPs).
func TestPeerTunnelAddr(t *testing.T) {
	own := netip.MustParsePrefix("10.77.0.2/24")
	for _, tc := range []struct {
		name    string
		allowed []string
		want    string // "" for an error
	}{
		{"the lab's", []string{"10.77.0.1/32", "10.20.0.0/16"}, "10.77.0.1"},
		{"own address first", []string{"10.77.0.2/32", "10.77.0.1/32"}, "10.77.0.1"},
		{"after a network and a bad entry", []string{"192.168.20.0/24", "nonsense", "fd00::1/128", "10.77.0.9/32"}, "10.77.0.9"},
		{"only the whole subnet", []string{"10.77.0.0/24", "192.168.20.0/24"}, ""},
		{"only its own address", []string{"10.77.0.2/32"}, ""},
		{"a /32 outside the subnet", []string{"10.77.1.1/32"}, ""},
		{"none", nil, ""},
	} {
		got, err := PeerTunnelAddr("wg0", tc.allowed, own)
		switch {
		case tc.want == "" && (err == nil || !strings.Contains(err.Error(), "wg0's peer has no /32 inside 10.77.0.0/24")):
			t.Errorf("%s: %v, %v: want the error", tc.name, got, err)
		case tc.want != "" && (err != nil || got.String() != tc.want):
			t.Errorf("%s: %v, %v: want %s", tc.name, got, err, tc.want)
		}
	}
}
