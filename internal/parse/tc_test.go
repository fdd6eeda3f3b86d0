package parse

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wgperf/wgperf/internal/facts"
)

// tc's outputs recorded here and in the kernel guest (testdata/collect/tc/README).
func TestParseTCQdisc(t *testing.T) {
	for _, tt := range []struct {
		file string
		want map[string]facts.Shaper
	}{
		{"qdisc-tbf-htb.json", map[string]facts.Shaper{"wg0": {Qdisc: "tbf", RateMbit: 150}, "eth0": {Qdisc: "htb"}}},
		{"qdisc-cake.json", map[string]facts.Shaper{"wg0": {Qdisc: "cake", RateMbit: 40}}},
	} {
		got, err := ParseTCQdisc(openTestdata(t, "tc", tt.file))
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.file, d)
		}
	}
	if _, err := ParseTCQdisc(strings.NewReader("qdisc noqueue 0: dev lo root refcnt 2")); err == nil {
		t.Error("tc's text read as JSON")
	}
}

func TestParseTCClassHTB(t *testing.T) {
	got, ok, err := ParseTCClassHTB(openTestdata(t, "tc", "class-htb.txt"))
	if want := (facts.Shaper{Qdisc: "htb", RateMbit: 450, Class: "1:1"}); err != nil || !ok || got != want {
		t.Errorf("class-htb.txt: %+v %v %v, want the root class's ceil, %+v", got, ok, err, want)
	}
	for _, tt := range []struct {
		in   string
		mbit float64
		ok   bool
	}{
		{"class htb 1:1 root rate 1Gbit ceil 1Gbit burst 1375b cburst 1375b", 1000, true},
		{"class htb 1:1 root rate 800Kbit ceil 900Kbit burst 1600b cburst 1600b", 0.9, true},
		{"class htb 1:10 parent 1:1 leaf 10: prio 0 rate 400Mbit ceil 450Mbit", 0, false}, // not a root
		{"", 0, false},
	} {
		got, ok, err := ParseTCClassHTB(strings.NewReader(tt.in))
		if err != nil || ok != tt.ok || got.RateMbit != tt.mbit {
			t.Errorf("%q: %v %v %v, want %v %v", tt.in, got, ok, err, tt.mbit, tt.ok)
		}
	}
	if _, _, err := ParseTCClassHTB(strings.NewReader("class htb 1:1 root rate 1Gbit ceil fast")); err == nil {
		t.Error("a ceil that is no rate: no error")
	}
}
