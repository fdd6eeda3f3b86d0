//go:build !router

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/cli"
)

// A host without WireGuard gives diagnose nothing to judge: UNKNOWN and exit
// 3, as a monitoring plugin says it, not 0 and "nothing here slows the
// tunnel down".
func TestDiagnoseWithoutWireGuardIsUnknown(t *testing.T) {
	var snap map[string]any
	if err := json.Unmarshal(must(os.ReadFile(snapshot("lab-healthy-a.json"))), &snap); err != nil {
		t.Fatal(err)
	}
	snap["wireguard"] = []any{}
	path := filepath.Join(t.TempDir(), "no-wg.json")
	if err := os.WriteFile(path, must(json.Marshal(snap)), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := run([]string{"diagnose", "--from", path, "--severity", "warning"}, &out, &errOut)
	if code != exitUnknown || !strings.Contains(out.String(), "UNKNOWN: no WireGuard interface here, so nothing was judged.") ||
		strings.Contains(out.String(), "nothing here slows") {
		t.Errorf("exit %d, want %d (UNKNOWN):\n%s%s", code, exitUnknown, out.String(), errOut.String())
	}
	// The same host with its tunnel is judged: healthy, exit 0.
	out.Reset()
	if code := run([]string{"diagnose", "--from", snapshot("lab-healthy-a.json"), "--severity", "warning"}, &out, &errOut); code != exitOK ||
		strings.Contains(out.String(), "UNKNOWN") {
		t.Errorf("with WireGuard: exit %d, want 0:\n%s", code, out.String())
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// --progress decides where progress goes: auto shows it on a terminal only
// (a buffer is none), always shows it anyway (ssh host wgperf doctor),
// never silences it; other words are refused.
func TestProgressFlag(t *testing.T) {
	var errOut bytes.Buffer
	for mode, want := range map[string]bool{"auto": false, "always": true, "never": false} {
		progress = cli.NewProgress(&errOut)
		progress.Mode = ""
		if err := progress.Mode.Set(mode); err != nil {
			t.Fatal(err)
		}
		if got := progressTo() != nil; got != want {
			t.Errorf("--progress %s with standard error not a terminal: shown %v, want %v", mode, got, want)
		}
	}
	var out bytes.Buffer
	errOut.Reset()
	if code := run([]string{"version", "--progress", "sometimes"}, &out, &errOut); code != exitFailed ||
		!strings.Contains(errOut.String(), `"sometimes": want auto, always or never`) {
		t.Errorf("--progress sometimes: exit %d, stderr %q", code, errOut.String())
	}
	// A fleet's collection reports each host, off a terminal too when asked.
	inv := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(inv, []byte("local\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode  string
		shown bool
	}{{"always", true}, {"auto", false}} {
		out.Reset()
		errOut.Reset()
		code := run([]string{"diagnose", "--inventory", inv, "--skip-firewall", "--progress", tc.mode}, &out, &errOut)
		if code == exitFailed && !strings.Contains(out.String(), "UNKNOWN") {
			t.Fatalf("diagnose --inventory: exit %d:\n%s%s", code, out.String(), errOut.String())
		}
		if shown := strings.Contains(errOut.String(), "local"); shown != tc.shown {
			t.Errorf("--progress %s: progress shown %v, want %v; stderr:\n%s", tc.mode, shown, tc.shown, errOut.String())
		}
	}
}

// Flags that take one of a few words complete them.
func TestEnumFlagsComplete(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"diagnose", "--severity", ""}, []string{"info", "warning", "critical"}},
		{[]string{"exporter", "--log.level", ""}, []string{"debug", "info", "warn", "error"}},
		{[]string{"exporter", "--log.format", ""}, []string{"logfmt", "json"}},
		{[]string{"lab", "up", "--topology", ""}, []string{"site-to-site", "multi-wan"}},
		{[]string{"doctor", "--progress", ""}, []string{"auto", "always", "never"}},
	} {
		var out, errOut bytes.Buffer
		run(append([]string{"__complete"}, tc.args...), &out, &errOut)
		got := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(got) == 0 || strings.Join(got[:len(got)-1], " ") != strings.Join(tc.want, " ") {
			t.Errorf("wgperf %s<TAB>: %q, want %q", strings.Join(tc.args, " "), got, tc.want)
		}
	}
}

// Target flags complete the ssh hosts of the user's ssh config (its
// Includes too) and known_hosts, and nothing a hostile entry there names.
func TestTargetFlagsCompleteSSHHosts(t *testing.T) {
	home, err := filepath.Abs("../../testdata/ssh/home")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	var out, errOut bytes.Buffer
	run([]string{"__complete", "doctor", "--server", ""}, &out, &errOut)
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	for _, want := range []string{"local", "ssh:golem", "ssh:lab-gw", "ssh:gw-lisbon.example.net:2222", "ssh:[::1]:22022"} {
		if !slices.Contains(got, want) {
			t.Errorf("wgperf doctor --server <TAB> does not offer %s: %q", want, got)
		}
	}
	for _, line := range got {
		if strings.ContainsAny(line, "$`;*|%") || strings.Contains(line, "ProxyCommand") {
			t.Errorf("offered %q, from a hostile or hashed entry", line)
		}
	}
}

// exporter --help names where the packages install the monitoring kit, not
// a folder of the source repository.
func TestExporterHelpNamesInstalledKit(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"exporter", "--help"}, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	help := out.String()
	for _, path := range []string{"/usr/share/wgperf/prometheus/alerts.yml", "/usr/share/wgperf/prometheus/scrape.yml", "/usr/share/wgperf/grafana/wgperf.json"} {
		if !strings.Contains(help, path) {
			t.Errorf("exporter --help does not name %s", path)
		}
	}
	for _, repo := range []string{"see deploy/", "are in deploy/", "See deploy/"} {
		if strings.Contains(help, repo) {
			t.Errorf("exporter --help sends people to the repository's folder (%q)", repo)
		}
	}
}

// The README saves doctor's JSON (doctor --json > doctor.json): report reads
// it back into the report doctor --html writes.
func TestReportFromDoctorJSON(t *testing.T) {
	html := filepath.Join(t.TempDir(), "doctor.html")
	var out, errOut bytes.Buffer
	if code := run([]string{"report", "--from", filepath.Join("..", "..", "internal", "doctor", "testdata", "blackhole.json"), "--html", html}, &out, &errOut); code != exitOK {
		t.Fatalf("report --from doctor.json: exit %d: %s", code, errOut.String())
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "wgperf doctor: netns:wgl-wgd4-a") {
		t.Errorf("the report is not doctor's:\n%.400s", b)
	}
}

// report --html (and every command's --html, through report.WriteFile) follows
// no planted link (issue 55, hole 5): one at the file's name is replaced by
// the report, one at a directory on the way is refused in one line.
func TestReportHTMLFollowsNoPlantedLink(t *testing.T) {
	base := t.TempDir()
	victim := filepath.Join(base, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	from := filepath.Join("..", "..", "internal", "doctor", "testdata", "blackhole.json")
	page := filepath.Join(base, "doctor.html")
	if err := os.Symlink(victim, page); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"report", "--from", from, "--html", page}, &out, &errOut); code != exitOK {
		t.Fatalf("report --html over a planted link: exit %d: %s", code, errOut.String())
	}
	if fi, err := os.Lstat(page); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("%s: %v, %v; want the report in a new file", page, fi, err)
	}
	real := filepath.Join(base, "real")
	if err := os.Mkdir(real, 0o755); err != nil || os.Symlink(real, filepath.Join(base, "up")) != nil {
		t.Fatal(err)
	}
	errOut.Reset()
	if code := run([]string{"report", "--from", from, "--html", filepath.Join(base, "up", "x.html")}, &out, &errOut); code == exitOK ||
		!strings.Contains(errOut.String(), "--html ") || strings.Count(strings.TrimSpace(errOut.String()), "\n") > 0 {
		t.Errorf("report --html through a linked directory: exit %d: %q, want one line refusing it", code, errOut.String())
	}
	if _, err := os.Stat(filepath.Join(real, "x.html")); err == nil {
		t.Errorf("the report was written through the linked directory")
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the planted link's target was written: %q", b)
	}
}
