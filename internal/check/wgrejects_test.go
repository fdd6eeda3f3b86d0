package check

import (
	"bytes"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/testutil"
)

func TestWGAllowedIPsMismatch(t *testing.T) {
	// Recorded on Debian's 6.1 kernel: B pinged A's tunnel address from
	// 10.99.0.1, outside A's AllowedIPs for B, five times.
	links, err := parse.ParseIPLink(bytes.NewReader(testutil.ReadTestdata(t, "collect", "kernelwg", "ip-s-s-j-d-link-wg-allowedips.json")))
	if err != nil || len(links) != 1 || links[0].Stats == nil {
		t.Fatalf("recorded link: %v %+v", err, links)
	}
	rejected := func(s *facts.Snapshot) {
		s.Links[3].Stats = links[0].Stats
	}
	h := healthyHost()
	runCases(t, &wgAllowedIPsMismatch, []checkCase{
		{name: "kernel WireGuard, nothing rejected", snap: with(t, h, func(s *facts.Snapshot) { s.Links[3].Stats = &facts.LinkStats{RxPackets: 5632} })},
		{name: "recorded: a source outside AllowedIPs", snap: with(t, h, rejected), want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			f := fs[0]
			if f.Interface != "wg0" || f.Evidence[0].Value != "5" || !strings.Contains(f.Title, "rejected 5 packets") {
				t.Errorf("finding %+v", f)
			}
			if !strings.Contains(strings.Join(f.Fixes[0].Commands, "\n"), "dynamic_debug") {
				t.Errorf("fix %+v: want the way to name the rejected source", f.Fixes[0])
			}
		}},
		{name: "sends no peer covers", snap: with(t, h, func(s *facts.Snapshot) { s.Links[3].Stats = &facts.LinkStats{TxErrors: 3} }),
			want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
				if !strings.Contains(fs[0].Title, "could not send 3 packets") {
					t.Errorf("title %q", fs[0].Title)
				}
			}},
		{name: "userspace keeps no such counters", snap: with(t, withUserspace(t, h), rejected)},
		{name: "no counters collected (BusyBox ip, an older snapshot)", snap: h},
	})
}
