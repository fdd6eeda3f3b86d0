package remedy

import (
	"bufio"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestBondSlaveAsRecorded holds BondSlave to the slaves a real bond chose
// (testdata/bond/hash-6.1.txt, recorded by record.sh in the kernel guest:
// 2, 3 and 4 veth slaves, layer3+4): symmetric ports stay on one slave of 2
// or 4 and spread over 3.
func TestBondSlaveAsRecorded(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "bond", "hash-6.1.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := 0
	for sc := bufio.NewScanner(f); sc.Scan(); lines++ {
		var n, sport, dport, want int
		var src, dst string
		if _, err := fmt.Sscanf(sc.Text(), "slaves %d src %s dst %s ports %d %d slave %d", &n, &src, &dst, &sport, &dport, &want); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		got, ok := BondSlave(netip.MustParseAddr(src), netip.MustParseAddr(dst), uint16(sport), uint16(dport), n)
		if !ok || got != want {
			t.Errorf("%d slaves, %s:%d -> %s:%d: slave %d, the kernel sent it by %d", n, src, sport, dst, dport, got, want)
		}
	}
	if lines < 40 {
		t.Fatalf("%d recorded flows", lines)
	}
}

// TestSpreadPorts: the ports chosen put each tunnel on the next slave of
// the bonds, by BondSlave (held to the recorded bonds above), where the
// usual consecutive ports put every tunnel on one slave of a 2-slave bond.
func TestSpreadPorts(t *testing.T) {
	a, b := netip.MustParseAddr("198.51.100.2"), netip.MustParseAddr("203.0.113.2")
	slaves := func(from, to netip.Addr, own, peer int, ports, peerPorts []int, n int) []int {
		s, _ := BondSlave(from, to, uint16(own), uint16(peer), n)
		out := []int{s}
		for i := range ports {
			s, _ := BondSlave(from, to, uint16(ports[i]), uint16(peerPorts[i]), n)
			out = append(out, s)
		}
		return out
	}
	if got := slaves(a, b, 51820, 51820, []int{51821, 51822, 51823}, []int{51821, 51822, 51823}, 2); !slices.Equal(got, []int{1, 1, 1, 1}) {
		t.Fatalf("consecutive ports on 2 slaves: %v, recorded all on slave 1", got)
	}
	for _, tc := range []struct {
		name                 string
		tunnels, nearN, farN int
		wantNear, wantFar    []int
	}{
		{"2 tunnels, A's bond of 2", 2, 2, 0, []int{1, 0}, nil},
		{"4 tunnels, A's bond of 2 and B's of 2", 4, 2, 2, []int{1, 0, 1, 0}, []int{1, 0, 1, 0}},
		{"3 tunnels, A's bond of 3", 3, 3, 0, []int{2, 0, 1}, nil},
		{"4 tunnels, A's bond of 4, B's of 3", 4, 4, 3, []int{1, 2, 3, 0}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ports, peerPorts, ok := SpreadPorts(a, b, 51820, 51820, tc.tunnels, tc.nearN, tc.farN)
			if !ok || len(ports) != tc.tunnels-1 {
				t.Fatalf("ports %v, %v, ok %v", ports, peerPorts, ok)
			}
			for i, p := range peerPorts {
				if p != 51820+i+1 {
					t.Errorf("the far end's tunnel %d listens on %d, want its own port's next", i+1, p)
				}
			}
			if got := slaves(a, b, 51820, 51820, ports, peerPorts, tc.nearN); !slices.Equal(got, tc.wantNear) {
				t.Errorf("ports %v: A sends by slaves %v, want %v", ports, got, tc.wantNear)
			}
			if tc.wantFar != nil {
				if got := slaves(b, a, 51820, 51820, peerPorts, ports, tc.farN); !slices.Equal(got, tc.wantFar) {
					t.Errorf("ports %v: B sends by slaves %v, want %v", ports, got, tc.wantFar)
				}
			}
		})
	}
	if _, _, ok := SpreadPorts(a, b, 51820, 51820, 2, 0, 1); ok {
		t.Error("ports chosen with no bond to spread over")
	}
	if _, _, ok := SpreadPorts(netip.MustParseAddr("2001:db8::1"), b, 51820, 51820, 2, 2, 0); ok {
		t.Error("ports chosen for IPv6, which BondSlave does not model")
	}
}

// TestSpreadClientPort: the consecutive client ports chosen (4, or two a
// slave) land on every slave of 2, 3 and 4 evenly by BondSlave (held to the
// recorded bonds).
func TestSpreadClientPort(t *testing.T) {
	a, b := netip.MustParseAddr("198.51.100.2"), netip.MustParseAddr("203.0.113.2")
	for _, n := range []int{2, 3, 4} {
		streams := max(4, 2*n)
		p, ok := SpreadClientPort(a, b, 5299, streams, n)
		if !ok || p < 49152 {
			t.Fatalf("%d slaves: port %d, ok %v", n, p, ok)
		}
		per := make([]int, n)
		for i := range streams {
			s, _ := BondSlave(a, b, uint16(p+i), 5299, n)
			per[s]++
		}
		if slices.Min(per) < 1 || slices.Max(per)-slices.Min(per) > 1 {
			t.Errorf("%d slaves from port %d: %v flows a slave", n, p, per)
		}
	}
	if _, ok := SpreadClientPort(a, b, 5299, 2, 3); ok {
		t.Error("2 flows cannot cover 3 slaves")
	}
	if _, ok := SpreadClientPort(netip.MustParseAddr("2001:db8::1"), b, 5299, 4, 2); ok {
		t.Error("an IPv6 source has no layer3+4 hash BondSlave knows")
	}
}
