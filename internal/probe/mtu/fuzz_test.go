package mtu

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/wgperf/wgperf/internal/testutil"
)

// FuzzParsePing: ping's output comes from the probed host; an MTU read from
// it is a plausible packet size or nothing.
func FuzzParsePing(f *testing.F) {
	testutil.SeedDir(f, filepath.Join("..", "..", "..", "testdata", "probe", "ping"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParsePing(bytes.NewReader(b))
		if err == nil && p.MTU < 0 {
			t.Fatalf("ParsePing(%q) = %+v", b, p)
		}
	})
}

// FuzzParseTcpdump: tcpdump's lines come from the probed host.
func FuzzParseTcpdump(f *testing.F) {
	testutil.SeedDir(f, captureDir)
	f.Fuzz(func(t *testing.T, b []byte) {
		syns, err := ParseTcpdump(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, s := range syns {
			if s.MSS < 0 {
				t.Fatalf("negative MSS from %q: %+v", b, s)
			}
		}
	})
}

// FuzzParseTraceroute: a router's traceroute output comes from the probed
// host; an MTU read from it is never negative.
func FuzzParseTraceroute(f *testing.F) {
	testutil.SeedDir(f, filepath.Join("..", "..", "..", "testdata", "probe", "traceroute"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, hop, err := ParseTraceroute(bytes.NewReader(b), "203.0.113.2")
		if err == nil && (p.MTU < 0 || hop < 0) {
			t.Fatalf("ParseTraceroute(%q) = %+v, hop %d", b, p, hop)
		}
	})
}
