package buildinfo

import (
	"runtime/debug"
	"testing"
)

// TestVersion: -X main.version wins; without it a go install'd module's
// version (and a tagged checkout's, or a pseudo-version) is reported without
// its "v"; a build with no module version says dev.
func TestVersion(t *testing.T) {
	mod := func(v string) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "github.com/wgperf/wgperf", Version: v}}
	}
	for _, tc := range []struct {
		name, linked string
		bi           *debug.BuildInfo
		want         string
	}{
		{"release (-X)", "1.4.0", mod("(devel)"), "1.4.0"},
		{"-X beats the module", "1.4.0-snapshot", mod("v1.3.0"), "1.4.0-snapshot"},
		{"go install @v1.4.0", "", mod("v1.4.0"), "1.4.0"},
		{"go install @latest of a pre-release", "", mod("v1.5.0-rc.1"), "1.5.0-rc.1"},
		{"go install @main (pseudo-version)", "", mod("v0.0.0-20261202024940-e4b319d0a1b2"), "0.0.0-20261202024940-e4b319d0a1b2"},
		{"go build in a modified checkout", "", mod("v1.4.1-0.20261202024940-e4b319d0a1b2+dirty"), "1.4.1-0.20261202024940-e4b319d0a1b2+dirty"},
		{"go run or go test", "", mod("(devel)"), "dev"},
		{"no module version", "", mod(""), "dev"},
		{"no build info", "", nil, "dev"},
	} {
		if got := version(tc.linked, tc.bi); got != tc.want {
			t.Errorf("%s: version(%q, %v) = %q, want %q", tc.name, tc.linked, tc.bi, got, tc.want)
		}
	}
}
