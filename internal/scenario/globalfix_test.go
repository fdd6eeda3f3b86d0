package scenario

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab/guest"
)

// globalFixes runs in the guest as root: testdata/global-fixes.sh says what.
const globalFixes = "testdata/global-fixes.sh"

// TestKernelGlobalFixesRollBack applies the fixes of values that are the
// machine's, not a network namespace's (the conntrack hash and
// net.core.dev_weight: a child namespace has no dev_weight and sees
// nf_conntrack_buckets read-only), with "wgperf fix --from --apply" in the
// kernel guest, whose globals are its own, and rolls them back: each value
// and file returns to what the plan read. A child namespace's plan refuses
// the hash. About 45 s under TCG.
func TestKernelGlobalFixesRollBack(t *testing.T) {
	exe := kernelLane(t)
	script, err := filepath.Abs(globalFixes)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var out bytes.Buffer
	res, err := guest.Run(ctx, guest.Options{Progress: func(s string) { t.Log(s) },
		Env: []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}},
		[]string{"sh", script, exe}, &out, storyLog{t})
	t.Logf("guest output:\n%s", out.String())
	if err != nil {
		t.Fatalf("lab vm: %v", err)
	}
	t.Logf("guest: Linux %s under %s", res.Kernel, res.Accel)
	got := map[string]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.SplitN(l, " ", 3); len(f) == 3 && f[0] == "value" {
			got[f[1]] = f[2]
		}
	}
	before := got["buckets-before"]
	if before == "" {
		t.Fatal("the guest printed no hash size")
	}
	for _, c := range []struct{ name, want, why string }{
		{"dev_weight-before", "16", "lowered, the evidence net.backlog-drops fixes"},
		{"fix", "0", "wgperf fix --from --apply of both"},
		{"dev_weight-applied", "64", "sysctl: dev_weight restored to its default"},
		{"buckets-applied", got["buckets-sysctl"], "the module parameter and the sysctl show one hash"},
		{"modprobe-conf", "options nf_conntrack hashsize=" + got["buckets-applied"], "the hash kept for the module's next load"},
		{"sysctl-conf", "net.core.dev_weight = 64", "dev_weight kept in sysctl.d"},
		{"rollback", "0", "wgperf fix rollback"},
		{"dev_weight-after", "16", "the value the plan read"},
		{"buckets-after", before, "the size the plan read"},
		{"modprobe-conf-after", "absent", "the modprobe.d file wgperf made, removed"},
		{"sysctl-conf-after", "0", "the sysctl.d line removed"},
		{"buckets-netns", before, "a child namespace's refused plan changed nothing"},
	} {
		if got[c.name] != c.want {
			t.Errorf("%s = %q, want %q: %s", c.name, got[c.name], c.want, c.why)
		}
	}
	if got["buckets-applied"] == before {
		t.Errorf("the hash stayed at %s buckets: the fix did not resize it", before)
	}
	if got["netns-fix"] == "0" || !strings.Contains(out.String(), "child network namespace") {
		t.Error("the fix of the machine's hash was not refused in a child namespace")
	}
}
