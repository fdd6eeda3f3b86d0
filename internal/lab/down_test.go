package lab

import "testing"

// A process's state follows its command name, which may itself hold spaces
// and parentheses.
func TestProcessState(t *testing.T) {
	for stat, want := range map[string]string{
		"6366 (wgperf) S 1 6366 6366 0 -1 4194560":   "S",
		"6366 (a) b) Z 1 6366 6366 0 -1 4194560":     "Z",
		"6366 (wg (node) x) R 1 6366 6366 0 -1 4194": "R",
		"6366 (wgperf":  "",
		"6366 (wgperf)": "",
	} {
		if got := processState(stat); got != want {
			t.Errorf("processState(%q) = %q, want %q", stat, got, want)
		}
	}
}
