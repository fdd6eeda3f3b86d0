package scenario

import (
	"strings"
	"testing"
)

// globalFixes runs in the guest as root: testdata/global-fixes.sh says what.
const globalFixes = "testdata/global-fixes.sh"

// The global fixes play in the kernel lane's guest (TestKernelGuest, its
// part "global-fixes"): the fixes of values that are the machine's, not a
// network namespace's (the conntrack hash and net.core.dev_weight: a child
// namespace has no dev_weight and sees nf_conntrack_buckets read-only), are
// applied with "wgperf fix --from --apply" in the guest, whose globals are
// its own, and rolled back: each value and file returns to what the plan
// read. A child namespace's plan refuses the hash. About 45 s under TCG.

// judgeGlobalFixes judges the global fixes' output in the guest.
func judgeGlobalFixes(t *testing.T, out string) {
	defer logIfFailed(t, out)
	got := guestValues(out)
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
	if got["netns-fix"] == "0" || !strings.Contains(out, "child network namespace") {
		t.Error("the fix of the machine's hash was not refused in a child namespace")
	}
}
