package doctor

import (
	"bytes"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/fix"
)

// TestFixLineSaysRuntimeOnly is issue 40 item 7: where the plan of the
// verdict's fix says it cannot last a reboot on its host, doctor's fix line
// says "runtime only" and why; a fix that lasts keeps its plain line.
func TestFixLineSaysRuntimeOnly(t *testing.T) {
	const note = "runtime only: the route is made again when the interface restarts; add it where the interface is configured"
	for _, tc := range []struct {
		name string
		plan *fix.Plan
		want string
	}{
		{"nothing planned", nil, ""},
		{"lasts", &fix.Plan{Items: []fix.Item{{Step: fix.Step{Commands: []string{"sysctl -w a=1"},
			Notes: []string{"persists: /etc/sysctl.d/90-wgperf.conf sets a last"}}}}}, ""},
		{"runtime only", &fix.Plan{Items: []fix.Item{
			{Step: fix.Step{Commands: []string{"sysctl -w a=1"}, Notes: []string{"persists: 90-wgperf.conf"}}},
			{Step: fix.Step{Commands: []string{"ip route replace x"}, Notes: []string{note}}}}}, note},
		{"already in place", &fix.Plan{Items: []fix.Item{{Step: fix.Step{Done: true, Notes: []string{note}}}}}, ""},
	} {
		if got := runtimeOnly(tc.plan); got != tc.want {
			t.Errorf("%s: runtimeOnly = %q, want %q", tc.name, got, tc.want)
		}
	}

	r := recordedReport(t, "lab-multiwan-stale-a.json", "lab-healthy-b.json", true, false, nil)
	v := r.Verdict()
	if v == nil || v.Command == "" {
		t.Fatal("the stale-route report has no verdict with a fix command")
	}
	text := func() string {
		var b bytes.Buffer
		if err := r.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if s := text(); strings.Contains(s, "runtime only") {
		t.Errorf("a fix that lasts (or was not planned) says runtime only:\n%s", s)
	}
	v.RuntimeOnly = note
	s := text()
	if !strings.Contains(s, "  fix:      "+v.Command+" (runtime only)\n            "+note+"\n") {
		t.Errorf("the fix line does not say runtime only and why:\n%s", s)
	}
}
