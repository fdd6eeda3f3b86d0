package fix_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/fix"
	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target"
)

// TestWatchdogOnBusyBoxRouter: the confirm watchdog, its journal check
// (stat, sha256sum) and its revert run on an OpenWrt-like router reached
// over dropbear with BusyBox only: banIP's ICMP limit raised with
// --confirm 2s and never confirmed is back to 25 by itself, the journal in
// /etc/wgperf says rolled back, and a late confirm is refused.
func TestWatchdogOnBusyBoxRouter(t *testing.T) {
	l := labtest.Up(t, lab.Config{Name: "trrt", Topology: lab.SiteToSite, Router: true, ICMPLimit: 25})
	remote, err := target.Parse(labtest.Router(t, l))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const key = "banip.global.ban_icmplimit"
	get := func() string {
		out, err := remote.Run(ctx, "uci", "-q", "get", key)
		if err != nil {
			t.Fatalf("uci get %s: %v", key, err)
		}
		return strings.TrimSpace(string(out))
	}
	if got := get(); got != "25" {
		t.Fatalf("%s = %q before the fix, want 25", key, got)
	}
	env, err := fix.Detect(ctx, remote, "/")
	if err != nil {
		t.Fatal(err)
	}
	if env.Platform != remedy.OpenWrt {
		t.Fatalf("platform %s, want openwrt", env.Platform)
	}
	f := finding.Finding{ID: "icmp.ratelimit-drops", Severity: finding.Warning, Title: "t", Host: target.Of(remote),
		Fixes: []finding.Fix{{Description: "raise it", Action: &finding.Action{Kind: remedy.KindUCISet, Params: map[string]string{"key": key, "value": "250"}}}}}
	plan, err := fix.PlanFindings(ctx, env, []finding.Finding{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Room for the check below on a loaded machine before the watchdog fires.
	j, err := fix.Apply(ctx, env, plan, fix.ApplyOptions{Confirm: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got := get(); got != "250" {
		t.Fatalf("%s = %q after the fix, want 250", key, got)
	}
	for deadline := j.ConfirmBy.Add(13 * time.Second); get() != "25"; time.Sleep(250 * time.Millisecond) {
		if time.Now().After(deadline) {
			log, _ := remote.Run(ctx, "cat", "/etc/wgperf/journal/"+j.ID+".revert.log")
			t.Fatalf("%s = %q 13 s after the deadline: the watchdog did not revert (log: %s)", key, get(), log)
		}
	}
	got, err := fix.LoadJournal(ctx, env, j.ID)
	if err != nil || got.State != fix.StateRolledBack {
		t.Errorf("journal after the watchdog: %v; want it rolled back", err)
	}
	if _, err := fix.Confirm(ctx, env); err == nil || !strings.Contains(err.Error(), "too late") {
		t.Errorf("confirm after the watchdog: %v, want too late", err)
	}
}
