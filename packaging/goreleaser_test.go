package packaging

import (
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// goreleaserConfig is the part of .goreleaser.yaml these tests read.
type goreleaserConfig struct {
	Archives []struct {
		Files []any `yaml:"files"`
	} `yaml:"archives"`
	NFPMs []struct {
		Formats          []string `yaml:"formats"`
		FileNameTemplate string   `yaml:"file_name_template"`
		Changelog        string   `yaml:"changelog"`
		Release          string   `yaml:"release"`
		Recommends       []string `yaml:"recommends"`
		Suggests         []string `yaml:"suggests"`
		Overrides        map[string]struct {
			FileNameTemplate string   `yaml:"file_name_template"`
			Recommends       []string `yaml:"recommends"`
			Suggests         []string `yaml:"suggests"`
		} `yaml:"overrides"`
		Contents []struct {
			Src, Dst, Packager string
		} `yaml:"contents"`
	} `yaml:"nfpms"`
}

func readGoreleaser(t *testing.T) goreleaserConfig {
	t.Helper()
	var c goreleaserConfig
	if err := yaml.Unmarshal(repoFile(t, ".goreleaser.yaml"), &c); err != nil {
		t.Fatal(err)
	}
	if len(c.NFPMs) != 1 || len(c.Archives) != 1 {
		t.Fatalf("%d nfpms and %d archives, want one of each", len(c.NFPMs), len(c.Archives))
	}
	return c
}

// kit is the monitoring kit: where the repository keeps it, and where the
// .deb and .rpm install it ("wgperf exporter --help" and wgperf(1) say so).
var kit = map[string]string{
	"deploy/prometheus/alerts.yml": "/usr/share/wgperf/prometheus/alerts.yml",
	"deploy/prometheus/scrape.yml": "/usr/share/wgperf/prometheus/scrape.yml",
	"deploy/grafana/wgperf.json":   "/usr/share/wgperf/grafana/wgperf.json",
}

// TestPackagesDeclareTheKit: without goreleaser, the configuration itself
// puts the monitoring kit in both packages and the archives, names each
// format's dependencies by that distribution's package names, gives the rpm
// an rpm-style file name and the .deb its copyright and changelog
// (TestReleaseArtifacts opens what comes out).
func TestPackagesDeclareTheKit(t *testing.T) {
	c := readGoreleaser(t)
	n := c.NFPMs[0]
	installs := func(packager, dst string) (src string) {
		for _, f := range n.Contents {
			if f.Dst == dst && (f.Packager == "" || f.Packager == packager) {
				return f.Src
			}
		}
		return ""
	}
	for src, dst := range kit {
		for _, format := range n.Formats {
			if got := installs(format, dst); got != src {
				t.Errorf("%s: %s comes from %q, want %s", format, dst, got, src)
			}
		}
		if !slices.Contains(c.Archives[0].Files, any(src)) {
			t.Errorf("the archives lack %s", src)
		}
	}
	// packaging/licenses writes the copyright file: wgperf's own, then every module's.
	if installs("deb", "/usr/share/doc/wgperf/copyright") != "build/licenses/copyright" {
		t.Error("the .deb has no /usr/share/doc/wgperf/copyright with the third-party licences")
	}
	if installs("deb", "/usr/share/doc/wgperf/LICENSE") != "" || installs("deb", "/usr/share/licenses/wgperf/LICENSE") != "" {
		t.Error("the .deb installs LICENSE beside its copyright file (lintian: extra-license-file)")
	}
	if installs("rpm", "/usr/share/licenses/wgperf/LICENSE") != "LICENSE" || installs("rpm", "/usr/share/licenses/wgperf/THIRD_PARTY_LICENSES") != "build/licenses/THIRD_PARTY_LICENSES" {
		t.Error("the rpm has no LICENSE or THIRD_PARTY_LICENSES in /usr/share/licenses/wgperf")
	}
	if n.Changelog == "" {
		t.Error("no changelog for the packages (changelog.Debian.gz)")
	}
	// Debian names that do not resolve on dnf, and what Fedora and RHEL call them.
	debOnly := []string{"iproute2", "iputils-ping", "conntrack"}
	rpmNames := []string{"iproute", "iputils", "conntrack-tools"}
	if len(n.Recommends)+len(n.Suggests) > 0 {
		t.Errorf("recommends %v, suggests %v for every format: want them per format (overrides)", n.Recommends, n.Suggests)
	}
	deb, rpm := n.Overrides["deb"], n.Overrides["rpm"]
	rpmDeps := append(append([]string{}, rpm.Recommends...), rpm.Suggests...)
	debDeps := append(append([]string{}, deb.Recommends...), deb.Suggests...)
	for i, name := range debOnly {
		if slices.Contains(rpmDeps, name) {
			t.Errorf("the rpm recommends or suggests Debian's %s", name)
		}
		if !slices.Contains(rpmDeps, rpmNames[i]) {
			t.Errorf("the rpm does not recommend or suggest %s (Debian's %s)", rpmNames[i], name)
		}
		if !slices.Contains(debDeps, name) {
			t.Errorf("the .deb does not recommend or suggest %s", name)
		}
	}
	// Each format's own name: wgperf_1.2.3-1_armhf.deb, wgperf-1.2.3-1.armv7hl.rpm.
	if n.FileNameTemplate != "{{ .ConventionalFileName }}" || rpm.FileNameTemplate != "" || deb.FileNameTemplate != "" {
		t.Errorf("file name templates %q (deb %q, rpm %q), want each format's own ({{ .ConventionalFileName }})", n.FileNameTemplate, deb.FileNameTemplate, rpm.FileNameTemplate)
	}
	if n.Release != "1" {
		t.Errorf("packaging revision %q, want 1 (Debian's VERSION-1, the rpm's Release)", n.Release)
	}
}

// TestReleasePublishedAndSigned: a tag publishes to the project's GitHub
// releases, checksums.txt is signed with minisign, and the public key that
// verifies it is packaging/minisign.pub, the one README's Install and
// docs/releasing.md print (no placeholder).
func TestReleasePublishedAndSigned(t *testing.T) {
	var c struct {
		Release struct {
			Disable any
			GitHub  struct{ Owner, Name string }
		}
		Signs []struct {
			Cmd       string
			Artifacts string
		}
	}
	if err := yaml.Unmarshal(repoFile(t, ".goreleaser.yaml"), &c); err != nil {
		t.Fatal(err)
	}
	if c.Release.Disable != nil || c.Release.GitHub.Owner != "wgperf" || c.Release.GitHub.Name != "wgperf" {
		t.Errorf("release: disable %v, github %+v; want published to github.com/wgperf/wgperf", c.Release.Disable, c.Release.GitHub)
	}
	if len(c.Signs) != 1 || c.Signs[0].Cmd != "minisign" || c.Signs[0].Artifacts != "checksum" {
		t.Errorf("signs %+v, want minisign over checksums.txt", c.Signs)
	}
	pub := strings.Split(strings.TrimSpace(string(repoFile(t, "packaging/minisign.pub"))), "\n")
	if len(pub) != 2 || !strings.HasPrefix(pub[0], "untrusted comment: minisign public key ") || len(pub[1]) != 56 || !strings.HasPrefix(pub[1], "RW") {
		t.Fatalf("packaging/minisign.pub is not a minisign public key: %q", pub)
	}
	for _, doc := range []string{"README.md", "docs/releasing.md"} {
		if !strings.Contains(string(repoFile(t, doc)), pub[1]) {
			t.Errorf("%s does not print the release key %s (packaging/minisign.pub)", doc, pub[1])
		}
	}
}
