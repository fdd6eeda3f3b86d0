package parse

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wgperf/wgperf/internal/testutil"
)

// The hop lines of BusyBox traceroute as recorded in the lab
// (testdata/probe/traceroute), which the MTU probe's DF probes and the
// uplinks' path both read: the header is no hop, "*" is a silent one, and
// what follows the address (times, !F-MTU) stays on the line.
func TestTracerouteHop(t *testing.T) {
	type hop struct {
		TTL  int
		Addr string
	}
	tests := []struct {
		file string
		want []hop
	}{
		{"hops.txt", []hop{{1, "198.51.100.1"}, {2, "203.0.113.2"}}},
		{"frag-needed.txt", []hop{{2, "198.51.100.1"}}},
		{"silent.txt", []hop{{2, "*"}}},
		{"uplink-silent-hop.txt", []hop{{1, "*"}, {2, "203.0.113.2"}}},
		{"uplink-cgnat.txt", []hop{{1, "100.64.0.1"}, {2, "203.0.113.2"}}},
	}
	for _, tt := range tests {
		var got []hop
		for _, line := range strings.Split(string(testutil.ReadTestdata(t, "probe", "traceroute", tt.file)), "\n") {
			if ttl, addr, ok := TracerouteHop(line); ok {
				got = append(got, hop{ttl, addr})
			}
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%s (-want +got)\n%s", tt.file, d)
		}
	}
	for _, line := range []string{"", "   ", " 3", "traceroute to 203.0.113.2 (203.0.113.2), 16 hops max", " 0  198.51.100.1  0.1 ms",
		" 256  198.51.100.1  0.1 ms", " 99999999999999999999  x", " -1  198.51.100.1", " 1a  198.51.100.1"} {
		if ttl, addr, ok := TracerouteHop(line); ok {
			t.Errorf("%q: hop %d %q", line, ttl, addr)
		}
	}
	if ttl, addr, ok := TracerouteHop("\t7\t10.0.0.1 0.3 ms"); !ok || ttl != 7 || addr != "10.0.0.1" {
		t.Errorf("a tab-separated hop: %d %q %v", ttl, addr, ok)
	}
}
