package labtest

import (
	"regexp"
	"testing"
)

// Each package sizes in a lab of its own name, a name lab accepts.
func TestCapacityLabIsThePackages(t *testing.T) {
	valid := regexp.MustCompile(`^[a-z0-9]{1,8}$`) // lab's own rule for names
	seen := map[string]string{}
	for _, dir := range []string{"/src/wgperf/cmd/wgperf", "/src/wgperf/internal/doctor", "/src/wgperf/internal/lab",
		"/src/wgperf/internal/probe/bench", "/src/wgperf/internal/fix", "/src/wgperf/internal/report"} {
		name := capacityLabIn(dir)
		if !valid.MatchString(name) {
			t.Errorf("%s: lab name %q", dir, name)
		}
		if other, ok := seen[name]; ok {
			t.Errorf("%s and %s share the capacity lab %q", dir, other, name)
		}
		seen[name] = dir
		if again := capacityLabIn(dir); again != name {
			t.Errorf("%s: %q then %q", dir, name, again)
		}
	}
}
