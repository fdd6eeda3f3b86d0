package packaging

import (
	"bytes"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"
)

// linkedModules reads the modules a release binary links from its Go build
// info (a replaced module as its replacement), and the Go version it was
// built with.
func linkedModules(t *testing.T, where string, bin entry) ([]*debug.Module, string) {
	t.Helper()
	if !bin.ok {
		t.Errorf("%s: no wgperf binary", where)
		return nil, ""
	}
	info, err := buildinfo.Read(bytes.NewReader(bin.data))
	if err != nil {
		t.Errorf("%s: no Go build info: %v", where, err)
		return nil, ""
	}
	var mods []*debug.Module
	for _, d := range info.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		mods = append(mods, d)
	}
	if len(mods) == 0 {
		t.Errorf("%s: the binary records no modules", where)
	}
	return mods, info.GoVersion
}

// checkLicenses: an archive's or package's THIRD_PARTY_LICENSES (lic) lists
// every module its binary links, at the version it links, and the Go
// standard library, each followed by its licence text.
func checkLicenses(t *testing.T, where string, bin, lic entry) {
	t.Helper()
	if !lic.ok {
		t.Errorf("%s: no THIRD_PARTY_LICENSES", where)
		return
	}
	mods, goVersion := linkedModules(t, where, bin)
	text := string(lic.data)
	for _, m := range append(mods, &debug.Module{Path: "Go standard library", Version: "(" + goVersion + ")"}) {
		name := m.Path + " " + m.Version
		_, section, ok := strings.Cut(text, "\n"+name+" (")
		if !strings.Contains(text, "\n  "+name+": ") || !ok {
			t.Errorf("%s: THIRD_PARTY_LICENSES does not list %s, linked into its binary", where, name)
			continue
		}
		// The section's first file is a licence, LICENSE or COPYING.
		if _, after, _ := strings.Cut(section, "\n--- "); !strings.HasPrefix(after, "LICEN") && !strings.HasPrefix(after, "COPYING") {
			t.Errorf("%s: THIRD_PARTY_LICENSES has no licence text for %s", where, name)
		}
	}
}

// checkDebianCopyright: the .deb's copyright file is wgperf's own followed
// by a paragraph, with its licence, for every module its binary links.
func checkDebianCopyright(t *testing.T, where string, bin, copyright entry) {
	t.Helper()
	own := repoFile(t, "packaging/debian/copyright")
	if !copyright.ok || !bytes.HasPrefix(copyright.data, own) {
		t.Errorf("%s: /usr/share/doc/wgperf/copyright does not start with packaging/debian/copyright", where)
		return
	}
	mods, goVersion := linkedModules(t, where, bin)
	text := string(copyright.data)
	for _, m := range mods {
		p := fmt.Sprintf("\nFiles: %s/*\nComment: %s %s, linked into /usr/bin/wgperf\nCopyright: ", m.Path, m.Path, m.Version)
		if _, rest, ok := strings.Cut(text, p); !ok || !strings.Contains(strings.SplitN(rest, "\n\n", 2)[0], "\nLicense: ") {
			t.Errorf("%s: copyright has no paragraph with a licence for %s %s", where, m.Path, m.Version)
		}
	}
	if !strings.Contains(text, "\nComment: Go standard library ("+goVersion+")") {
		t.Errorf("%s: copyright has no paragraph for the Go standard library", where)
	}
}

// checkRPMLicenseFiles: rpm itself lists LICENSE and THIRD_PARTY_LICENSES
// as the package's %license files.
func checkRPMLicenseFiles(t *testing.T, path string) {
	t.Helper()
	if _, err := exec.LookPath("rpm"); err != nil {
		t.Log("rpm is not installed: the rpm's %license files are not read")
		return
	}
	out, err := exec.Command("rpm", "-qp", "--licensefiles", path).CombinedOutput()
	if err != nil {
		t.Errorf("rpm -qp --licensefiles %s: %v\n%s", path, err, out)
		return
	}
	for _, f := range []string{"/usr/share/licenses/wgperf/LICENSE", "/usr/share/licenses/wgperf/THIRD_PARTY_LICENSES"} {
		if !strings.Contains("\n"+string(out), "\n"+f+"\n") {
			t.Errorf("%s: %s is not a %%license file (rpm -qpL):\n%s", path, f, out)
		}
	}
}

// checkSBOM: a CycloneDX document made by cyclonedx-gomod, naming the
// release and every module its platform's binary links, at the linked
// version, each with its licence.
func checkSBOM(t *testing.T, path, version string, bin entry) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Error(err)
		return
	}
	var bom struct {
		BOMFormat, SpecVersion string
		Metadata               struct {
			Tools     json.RawMessage
			Component struct{ Name, Version string }
		}
		Components []struct {
			Name, Version, PURL string
			Licenses            []struct{ License struct{ ID, Name string } }
		}
	}
	if err := json.Unmarshal(b, &bom); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if bom.BOMFormat != "CycloneDX" || bom.Metadata.Component.Name != "github.com/wgperf/wgperf" || bom.Metadata.Component.Version != "v"+version {
		t.Errorf("%s: %s %s for %s %s", path, bom.BOMFormat, bom.SpecVersion, bom.Metadata.Component.Name, bom.Metadata.Component.Version)
	}
	if !bytes.Contains(bom.Metadata.Tools, []byte(`"cyclonedx-gomod"`)) {
		t.Errorf("%s: not made by cyclonedx-gomod (metadata.tools %s)", path, bom.Metadata.Tools)
	}
	licensed := map[string]string{}
	for _, c := range bom.Components {
		if !strings.HasPrefix(c.PURL, "pkg:golang/"+c.Name+"@"+c.Version) {
			t.Errorf("%s: %s %s has the package URL %q", path, c.Name, c.Version, c.PURL)
		}
		for _, l := range c.Licenses {
			if id := l.License.ID + l.License.Name; id != "" {
				licensed[c.Name+"@"+c.Version] = id
			}
		}
	}
	mods, _ := linkedModules(t, path, bin)
	for _, m := range mods {
		if licensed[m.Path+"@"+m.Version] == "" {
			t.Errorf("%s: %s %s, linked into the binary, is missing or has no licence", path, m.Path, m.Version)
		}
	}
}
