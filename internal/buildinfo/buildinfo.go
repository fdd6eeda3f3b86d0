// Package buildinfo says which build of wgperf runs: its version, VCS
// revision and branch, build date, Go version, platform and build tags, for
// "wgperf version", "wgperf exporter --version" and wgperf_build_info. It
// mirrors prometheus/common/version (the same facts, the same --version text)
// without linking it, which the router build must not.
//
// The release sets the variables with -ldflags -X
// github.com/wgperf/wgperf/internal/buildinfo.Revision=...; a plain go build
// in a git checkout records the revision and commit time itself, which fill
// in what -X left empty. Without -X main.version, the version is the main
// module's as the go command recorded it (Version): "go install
// github.com/wgperf/wgperf/cmd/wgperf@v1.2.3" reports 1.2.3.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Set at link time (-X); empty when not.
var (
	Revision  string
	Branch    string
	BuildDate string // the commit's time, so a rebuild gives the same binary
)

// Version is the version this binary reports: linked (what -X main.version
// set) when there is one, else the main module's version the go command
// recorded (go install module@version, or a go build in a tagged checkout),
// else "dev".
func Version(linked string) string {
	bi, _ := debug.ReadBuildInfo()
	return version(linked, bi)
}

// version is Version on a given build info (nil when the binary has none).
// A module version loses its "v", as the release's -X version has none:
// v1.2.3 and the release's 1.2.3 read the same.
func version(linked string, bi *debug.BuildInfo) string {
	if linked != "" {
		return linked
	}
	if bi == nil {
		return "dev"
	}
	v := bi.Main.Version
	// "(devel)": built inside the module without a version (go run, go
	// test, a go build the go command could not stamp).
	if v == "" || v == "(devel)" {
		return "dev"
	}
	if len(v) > 1 && v[0] == 'v' && v[1] >= '0' && v[1] <= '9' {
		v = v[1:]
	}
	return v
}

// Info is one build's identity.
type Info struct {
	Version, Revision, Branch, BuildDate string
	GoVersion, GOOS, GOARCH, Tags        string
}

// Read returns this binary's Info; version is main's -X main.version.
func Read(version string) Info {
	i := Info{Version: version, Revision: Revision, Branch: Branch, BuildDate: BuildDate,
		GoVersion: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH}
	modified := false
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if i.Revision == "" {
					i.Revision = s.Value
				}
			case "vcs.time":
				if i.BuildDate == "" {
					i.BuildDate = s.Value
				}
			case "vcs.modified":
				modified = s.Value == "true"
			case "-tags":
				i.Tags = s.Value
			}
		}
	}
	if modified && Revision == "" {
		i.Revision += "-modified"
	}
	for _, f := range []*string{&i.Version, &i.Revision, &i.BuildDate} {
		if *f == "" {
			*f = "unknown"
		}
	}
	return i
}

// Print is the --version text of the Prometheus exporters (node_exporter's).
func (i Info) Print(program string) string {
	return strings.TrimSpace(fmt.Sprintf(`%s, version %s (branch: %s, revision: %s)
  build date:       %s
  go version:       %s
  platform:         %s/%s
  tags:             %s`, program, i.Version, i.Branch, i.Revision, i.BuildDate, i.GoVersion, i.GOOS, i.GOARCH, i.Tags))
}

// Identity is "wgperf version --json": what Line says, by field. The version
// itself is the document's wgperf_version.
type Identity struct {
	Build       string `json:"build"` // "full", or "router" (no lab, exporter on plain HTTP)
	Revision    string `json:"revision"`
	Branch      string `json:"branch"`
	BuildDate   string `json:"build_date"`
	GoVersion   string `json:"go_version"`
	OS          string `json:"os"`
	Arch        string `json:"arch"`
	Tags        string `json:"tags"`
	DropSampler bool   `json:"drop_sampler"` // whether this build has the BPF drop sampler
}

// Identity is i as "wgperf version --json" gives it; flavor describes the
// build ("" for the full one, else the router build's), dropSampler whether
// it has the BPF drop sampler.
func (i Info) Identity(flavor string, dropSampler bool) Identity {
	build := "full"
	if flavor != "" {
		build = "router"
	}
	return Identity{Build: build, Revision: i.Revision, Branch: i.Branch, BuildDate: i.BuildDate,
		GoVersion: i.GoVersion, OS: i.GOOS, Arch: i.GOARCH, Tags: i.Tags, DropSampler: dropSampler}
}

// Line is what "wgperf version" prints: the version, which build this is
// when it is not the full one, and where it came from.
func (i Info) Line(flavor string, dropSampler bool) string {
	first := "wgperf " + i.Version
	if flavor != "" {
		first += " (" + flavor + ")"
	}
	sampler := "kernel drop reasons (BPF on skb:kfree_skb: btf, tracepoint)"
	if !dropSampler {
		sampler = "none in this build (bench and doctor count drops with counters only; an ssh host's own wgperf can still sample)"
	}
	return fmt.Sprintf("%s\n  revision:   %s\n  branch:     %s\n  build date: %s\n  go version: %s\n  platform:   %s/%s\n  tags:       %s\n  drops:      %s",
		first, i.Revision, i.Branch, i.BuildDate, i.GoVersion, i.GOOS, i.GOARCH, i.Tags, sampler)
}
