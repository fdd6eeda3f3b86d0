package mtu

import (
	"os"
	"path/filepath"
	"testing"
)

// TestParseTraceroute reads BusyBox traceroute -F recorded in the lab's
// 1400-byte hop: the destination answering, the router naming the MTU, and
// silence where the router's frag-needed is dropped.
func TestParseTraceroute(t *testing.T) {
	const dst = "203.0.113.2"
	for _, tt := range []struct {
		file string
		want Ping
		hop  int
	}{
		{"hops.txt", Ping{Received: true}, 2},
		{"passed.txt", Ping{Received: true}, 2},
		{"frag-needed.txt", Ping{MTU: 1400}, 2},
		{"silent.txt", Ping{}, 2},
	} {
		f, err := os.Open(filepath.Join("..", "..", "..", "testdata", "probe", "traceroute", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		got, hop, err := ParseTraceroute(f, dst)
		f.Close()
		if err != nil || got != tt.want || hop != tt.hop {
			t.Errorf("%s: %+v hop %d (%v), want %+v hop %d", tt.file, got, hop, err, tt.want, tt.hop)
		}
	}
}

func TestNoDFFlag(t *testing.T) {
	busybox := "ping: invalid option -- 'M'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n"
	if !noDFFlag(busybox) {
		t.Error("BusyBox ping's answer to -M not recognised")
	}
	if noDFFlag("ping: sendmsg: Message too long\n") {
		t.Error("a too-big probe taken for a ping without -M")
	}
}
