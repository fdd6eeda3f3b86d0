package doctor

import (
	"testing"

	"github.com/wgperf/wgperf/internal/finding"
)

// The verdict's command: --verify only where a bench can see the gain,
// --from the saved report where only a probe proved the finding.
func TestCommand(t *testing.T) {
	withFix := func(id, host string) finding.Finding {
		return finding.Finding{ID: id, Host: host, Fixes: []finding.Fix{{Action: &finding.Action{Kind: finding.ActSysctl}}}}
	}
	route := withFix("route.stale-endpoint", "ssh:root@golem")
	icmp := withFix("icmp.ratelimit-drops", "ssh:root@golem")
	hole := withFix("mtu.pmtud-blackhole", "ssh:root@golem")
	r := &Report{Client: "ssh:root@golem", Server: "ssh:m42", passive: map[string]bool{key(route): true, key(icmp): true}}
	for _, tc := range []struct {
		f    finding.Finding
		want string
	}{
		{route, "wgperf fix --host ssh:root@golem --only route.stale-endpoint --apply --verify --peer ssh:m42 --confirm 60s"},
		{icmp, "wgperf fix --host ssh:root@golem --only icmp.ratelimit-drops --apply --confirm 60s"},
		{hole, "wgperf fix --host ssh:root@golem --from doctor.json --only mtu.pmtud-blackhole --apply --verify --peer ssh:m42 --confirm 60s"},
		{finding.Finding{ID: "cpu.saturated", Host: "ssh:m42", Fixes: []finding.Fix{{Commands: []string{"top"}}}}, ""},
	} {
		if got := r.command(tc.f); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.f.ID, got, tc.want)
		}
	}
	r.Server = ""
	if got := r.command(route); got != "wgperf fix --host ssh:root@golem --only route.stale-endpoint --apply --confirm 60s" {
		t.Errorf("one end: %q", got)
	}
}
