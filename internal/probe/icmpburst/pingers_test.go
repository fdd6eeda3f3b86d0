package icmpburst

import (
	"strings"
	"testing"
)

// Recorded on a lab router (lab --icmp-limit 25 --background-pings 6): a
// monitoring agent's raw ICMP socket sends six echo requests back to back
// every second, and banIP's limit (25/s, burst 5) lets five replies through
// each time. Its bursts alone fit the limiter's burst exactly; with the
// health checks' two replies at once they cannot: that is what makes the
// checks fail while each alone would pass.
func TestWatchFindsOtherPingers(t *testing.T) {
	b := ParseWatch(open(t, "watch-telegraf6.txt"))
	if b.Replies != 15 || b.Burst != 5 || len(b.Pingers) != 1 || b.Pingers[0].Command != "wgperf" || b.Pingers[0].Seen != 3 {
		t.Fatalf("watched %+v, want 15 replies in bursts of 5 and one pinger seen 3 times", b)
	}
	fw := load(t, "nft-before.json")
	lim := limiterOf(&fw)
	if lim == nil || lim.PerSecond != 25 || lim.Burst != 5 {
		t.Fatalf("limiter %+v, want banIP's 25/s burst 5", lim)
	}
	b.judge(lim, 2)
	if b.Fits || !strings.Contains(b.Verdict, "with the health checks' 2 at once, 7 replies can meet a burst of 5") || !strings.Contains(b.Verdict, "wgperf (pid") {
		t.Errorf("verdict %q (fits %v)", b.Verdict, b.Fits)
	}
	quiet := ParseWatch(strings.NewReader("S 10 10\nS 10 10\nS 10 10\n"))
	quiet.judge(lim, 2)
	if !quiet.Fits || quiet.Replies != 0 {
		t.Errorf("a quiet host: %+v", quiet)
	}
	loud := ParseWatch(strings.NewReader("S 0 0\nS 30 30\nS 60 60\n"))
	if loud.judge(lim, 2); loud.Fits || !strings.Contains(loud.Verdict, "alone exceed its rate") {
		t.Errorf("300 replies a second: %+v", loud)
	}
}

// What ss prints is foreign text: only a quoted name and a pid are read.
func TestParseWatchForeignText(t *testing.T) {
	b := ParseWatch(strings.NewReader("P \"telegraf\",pid=12,fd=3),(\"x\\\"y\",pid=13\nP garbage\nS a b\nS 1\n"))
	if len(b.Pingers) == 0 || b.Pingers[0].Command != "telegraf" || b.Pingers[0].PID != 12 || b.Replies != 0 {
		t.Errorf("pingers %+v, replies %d", b.Pingers, b.Replies)
	}
	for _, p := range b.Pingers {
		if strings.ContainsAny(p.Command, `"\`) {
			t.Errorf("a name with a quote in it: %q", p.Command)
		}
	}
}
