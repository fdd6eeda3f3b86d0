package iperf

import (
	"testing"

	"github.com/wgperf/wgperf/internal/testutil"
)

// /proc/net/tcp and tcp6 recorded in a lab namespace (testdata/collect/proc/tcp): an iperf3 server on
// 5299 (dual-stack, so in tcp6), and one bound to 127.0.0.1:5298 in the
// middle of a test (its established connections must not count as listening).
func TestListensOn(t *testing.T) {
	tests := []struct {
		file string
		port int
		want bool
	}{
		{"tcp6-listening-5299", 5299, true},
		{"tcp6-listening-5299", 5298, false},
		{"tcp6-listening-5299", 0x14B, false}, // a suffix of 14B3, not the port
		{"tcp-empty", 5299, false},
		{"tcp-5298-in-a-test", 5298, true},
		{"tcp-5298-in-a-test", 0x9466, false}, // a client's port, established only
		{"tcp-5298-in-a-test", 5299, false},
	}
	for _, tt := range tests {
		b := testutil.ReadTestdata(t, "collect", "proc", "tcp", tt.file)
		if got := ListensOn(string(b), tt.port); got != tt.want {
			t.Errorf("%s port %d: listening %v, want %v", tt.file, tt.port, got, tt.want)
		}
	}
	if ListensOn("", 5299) || ListensOn("garbage\n:14B3 0A", 5299) {
		t.Error("text that is no socket table shows a listener")
	}
}
