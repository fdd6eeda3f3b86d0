package fix

import (
	"context"
	"errors"
	"testing"

	"github.com/wgperf/wgperf/internal/finding"
)

// Run without Apply only plans: nothing runs that changes the host, no
// journal is made, and the measurement is never asked for; an --only ID no
// finding has is a NoSuchFindingError naming what was found.
func TestRunPlansWithoutApply(t *testing.T) {
	h := anyLinuxHost()
	env, err := Detect(context.Background(), h, "/")
	if err != nil {
		t.Fatal(err)
	}
	verified := false
	out, err := Run(context.Background(), Request{Env: env, Findings: linuxFindings(), Only: []finding.ID{"udp.rcvbuf-errors"},
		Verify: func(context.Context, *Plan) (Measure, error) { verified = true; return nil, nil }})
	if err != nil || out.Journal != nil || verified || len(out.Plan.Items) != 1 || out.Plan.Items[0].Findings[0] != "udp.rcvbuf-errors" {
		t.Fatalf("plan only: %+v, %v, verified %v", out, err, verified)
	}
	for _, c := range h.Ran() {
		if isWrite(c) {
			t.Errorf("planning ran %s", c)
		}
	}
	_, err = Run(context.Background(), Request{Env: env, Findings: linuxFindings(), Only: []finding.ID{"udp.rcvbuf-error"}})
	var missing *NoSuchFindingError
	if !errors.As(err, &missing) || missing.ID != "udp.rcvbuf-error" || len(missing.Found) == 0 {
		t.Errorf("a typo in Only: %v", err)
	}
}

// Fixed names the findings a journal's steps remedied.
func TestJournalFixed(t *testing.T) {
	j := &Journal{Entries: []Entry{{Findings: []finding.ID{"mtu.pmtud-blackhole", "mtu.tunnel-too-large"}}}}
	fs := []finding.Finding{{ID: "mtu.tunnel-too-large"}, {ID: "udp.rcvbuf-errors"}, {ID: "mtu.pmtud-blackhole"}}
	got := j.Fixed(fs)
	if len(got) != 2 || got[0].ID != "mtu.tunnel-too-large" || got[1].ID != "mtu.pmtud-blackhole" {
		t.Errorf("fixed %v", got)
	}
}
