package remedy

import (
	"bufio"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
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
