package fix_test

import (
	"context"
	"os"
	"path/filepath"
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

// TestSysctlOverSSH plans, applies and rolls back one sysctl on lab node B
// reached over ssh through the tunnel: the runtime value and the sysctl.d file
// (under a temporary config root) change, and rollback restores both.
func TestSysctlOverSSH(t *testing.T) {
	l := labtest.Up(t, lab.Config{Name: "wgs5", Topology: lab.SiteToSite})
	remote, err := target.Parse(labtest.SSHD(t, l, "b"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const key = "net.core.somaxconn" // per namespace, so only B changes
	// Read through the namespace, not ssh: the check must not trust the path under test.
	read := func() string {
		out, err := l.Target("b").Run(ctx, "sysctl", "-n", key)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	before := read()
	want := "8192"
	if before == want {
		want = "8191"
	}
	root := t.TempDir()
	conf := filepath.Join(root, remedy.SysctlConf)

	env, err := fix.Detect(ctx, remote, root)
	if err != nil {
		t.Fatal(err)
	}
	f := finding.Finding{ID: "test.sysctl", Severity: finding.Warning, Title: "test sysctl", Host: target.Of(remote),
		Fixes: []finding.Fix{{Description: "raise " + key, Action: &finding.Action{Kind: remedy.KindSysctl, Params: map[string]string{"key": key, "value": want}}}}}
	items, manual, err := fix.Select([]finding.Finding{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := fix.MakePlan(ctx, env, items, manual)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Pending() != 1 || read() != before {
		t.Fatalf("plan: %d pending, value %s (planning must not change it)", plan.Pending(), read())
	}

	j, err := fix.Apply(ctx, env, plan, fix.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if j.State != fix.StateApplied || read() != want {
		t.Fatalf("after apply: journal %s, %s = %s, want %s", j.State, key, read(), want)
	}
	if b, err := os.ReadFile(conf); err != nil || !strings.Contains(string(b), key+" = "+want) {
		t.Errorf("%s after apply: %q, %v", conf, b, err)
	}

	j, err = fix.Rollback(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	if j.State != fix.StateRolledBack || read() != before {
		t.Errorf("after rollback: journal %s, %s = %s, want %s", j.State, key, read(), before)
	}
	if _, err := os.Stat(conf); !os.IsNotExist(err) {
		t.Errorf("%s still there after rollback (%v)", conf, err)
	}
}
