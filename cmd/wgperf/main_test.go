package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func snapshot(name string) string { return filepath.Join("..", "..", "testdata", "snapshots", name) }

// TestCLIContract runs the CLI in-process: exit codes, outputs, and errors as
// one "wgperf: ..." line on stderr. Nothing here needs root, a network or a
// host other than reading local state.
func TestCLIContract(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"findings": `), 0o600); err != nil {
		t.Fatal(err)
	}
	noScenarios, badScenario := filepath.Join(dir, "none.json"), filepath.Join(dir, "fast.json")
	if err := os.WriteFile(noScenarios, []byte(`{"scenarios": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(badScenario, []byte(`{"scenarios": [{"before": {"tunnel_mbit": "fast"}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	html := filepath.Join(dir, "report.html")
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string // substring; "" checks nothing
		stderr string // substring of the one error line; "" wants no stderr
	}{
		{"version", []string{"version"}, exitOK, "wgperf dev\n  revision:   ", ""},
		{"--version", []string{"--version"}, exitOK, "wgperf dev\n  revision:   ", ""},
		{"exporter --version", []string{"exporter", "--version"}, exitOK, "wgperf exporter, version dev (branch: ", ""},
		{"unknown command", []string{"frobnicate"}, exitFailed, "", `unknown command "frobnicate"`},
		{"explain", []string{"explain", "route.stale-endpoint"}, exitOK, "wgperf fix --host HOST --only route.stale-endpoint", ""},
		{"explain a probe's ID", []string{"explain", "mtu.pmtud-blackhole"}, exitOK, "PMTUD black hole", ""},
		{"explain a typo", []string{"explain", "mtu.blackhole"}, exitFailed, "", "did you mean mtu.pmtud-blackhole, mtu.mss-clamp-ipv6"},
		{"checks", []string{"checks"}, exitOK, "throughput.tunnel-ratio", ""},
		{"checks json", []string{"checks", "--json"}, exitOK, `"id": "bond.hash-policy"`, ""},
		{"unknown flag", []string{"diagnose", "--frob"}, exitFailed, "", "unknown flag: --frob"},
		{"extra argument", []string{"diagnose", "extra"}, exitFailed, "", `unknown command "extra"`},
		{"healthy snapshot: info only", []string{"diagnose", "--from", snapshot("lab-healthy-a.json")}, exitOK, "0 critical, 0 warning, 2 info", ""},
		{"stale endpoint route is critical", []string{"diagnose", "--from", snapshot("seed000-golem.json")}, exitCritical, "route.stale-endpoint", ""},
		{"severity filter keeps the exit code of what is shown", []string{"diagnose", "--from", snapshot("lab-healthy-a.json"), "--severity", "warning"}, exitOK, "", ""},
		{"bad severity", []string{"diagnose", "--from", snapshot("lab-healthy-a.json"), "--severity", "loud"}, exitFailed, "", `for "--severity" flag: "loud": want info, warning or critical`},
		{"negative rate", []string{"diagnose", "--rate", "-1"}, exitFailed, "", "--rate -1: want a rate in Mbit/s above 0"},
		{"missing snapshot", []string{"diagnose", "--from", "/nonexistent/x.json"}, exitFailed, "", "x.json"},
		{"confirm without apply", []string{"fix", "--confirm", "60s"}, exitFailed, "", "--confirm needs --apply"},
		{"verify without apply", []string{"fix", "--verify"}, exitFailed, "", "--verify needs --apply"},
		{"fix html without verify", []string{"fix", "--apply", "--html", "x.html"}, exitFailed, "", "--html needs --apply --verify"},
		{"script and apply", []string{"fix", "--print-script", "--apply"}, exitFailed, "", "does not go with --apply"},
		{"fix --time out of range", []string{"fix", "--time", "0"}, exitFailed, "", "--time 0: want 1..60 seconds"},
		{"fix --from a truncated file", []string{"fix", "--from", bad}, exitFailed, "", "--from " + bad + ": malformed JSON"},
		{"fix --from a missing file", []string{"fix", "--from", "/nonexistent/f.json"}, exitFailed, "", "--from: open /nonexistent/f.json"},
		{"report of a lab run without scenarios", []string{"report", "--from", noScenarios, "--html", html}, exitFailed, "", noScenarios + ": lab run results: no scenarios"},
		{"report of a lab run with a bad figure", []string{"report", "--from", badScenario, "--html", html}, exitFailed, "", `lab run results: field "scenarios.before.tunnel_mbit"`},
		{"ecmp apply without the other end", []string{"fix", "ecmp", "--apply", "--host", "local"}, exitFailed, "", "--apply needs --server"},
		{"ecmp verify without apply", []string{"fix", "ecmp", "--verify"}, exitFailed, "", "--verify needs --apply"},
		{"bench needs a server", []string{"bench"}, exitFailed, "", `required flag(s) "server" not set`},
		{"mtu capture has no html", []string{"mtu", "--capture", "--html", "x.html"}, exitFailed, "", "--html is not available with --capture"},
		{"mtu needs an address", []string{"mtu"}, exitFailed, "", "give --server"},
		{"icmp-burst needs targets", []string{"icmp-burst"}, exitFailed, "", "--targets is required"},
		{"icmp-burst count", []string{"icmp-burst", "--targets", "192.0.2.1", "--count", "0"}, exitFailed, "", "--count must be between 1 and 1000"},
		{"shape-sweep caps", []string{"shape-sweep", "--server", "local", "--caps", "0"}, exitFailed, "", "--caps: 0 is not a positive rate"},
		{"bad target", []string{"bench", "--server", "telnet:x"}, exitFailed, "", "telnet:x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(tc.args, &out, &errOut)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out.String(), errOut.String())
			}
			if !strings.Contains(out.String(), tc.stdout) {
				t.Errorf("stdout %q does not contain %q", out.String(), tc.stdout)
			}
			e := errOut.String()
			if tc.stderr == "" {
				if e != "" {
					t.Errorf("stderr %q, want none", e)
				}
				return
			}
			if !strings.HasPrefix(e, "wgperf: ") || strings.Count(e, "\n") != 1 || !strings.HasSuffix(e, "\n") {
				t.Errorf("stderr %q: want one line starting with \"wgperf: \"", e)
			}
			if !strings.Contains(e, tc.stderr) {
				t.Errorf("stderr %q does not contain %q", e, tc.stderr)
			}
		})
	}
}

// Runs do not leak flags into each other: each builds its command tree afresh.
func TestRunStartsFromDefaults(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"diagnose", "--from", snapshot("seed000-golem.json"), "--severity", "critical", "--json"}, &out, &errOut); code != exitCritical {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	out.Reset()
	if code := run([]string{"diagnose", "--from", snapshot("seed000-golem.json")}, &out, &errOut); code != exitCritical {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if json.Valid(out.Bytes()) || !strings.Contains(out.String(), "WARNING") {
		t.Errorf("second run kept --json or --severity of the first:\n%s", out.String())
	}
}

func TestDiagnoseJSON(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"diagnose", "--from", snapshot("lab-mtu1480-icmplimit-lan-a.json"), "--json"}, &out, &errOut)
	if code != exitCritical || errOut.Len() != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	var doc struct {
		Findings []struct {
			ID    string `json:"id"`
			Fixes []struct {
				Action *struct {
					Kind string `json:"kind"`
				} `json:"action"`
			} `json:"fixes"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Findings) == 0 || doc.Findings[0].ID != "mtu.tunnel-too-large" {
		t.Errorf("findings %+v", doc.Findings)
	}
}

// fix --from plans offline from a findings file against the local host and a
// temporary config root: it only reads (sysctl -n, test -e) and prints.
func TestFixFromFile(t *testing.T) {
	dir := t.TempDir()
	from := filepath.Join(dir, "findings.json")
	write := func(id, action string) {
		t.Helper()
		doc := `{"findings": [{"id": "` + id + `", "severity": "warning", "title": "t", "evidence": [],
		  "fixes": [{"description": "raise it", "commands": [], "action": ` + action + `}]}]}`
		if err := os.WriteFile(from, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sysctl := func(key, value string) string {
		return `{"kind": "sysctl", "params": {"key": "` + key + `", "value": "` + value + `"}}`
	}
	// The largest value the finding allows, so it raises whatever this host has.
	write("net.backlog-drops", sysctl("net.core.netdev_max_backlog", "2147483646"))
	var out, errOut bytes.Buffer
	if code := run([]string{"fix", "--host", "local", "--root", dir, "--from", from, "--print-script"}, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.HasPrefix(out.String(), "#!/bin/sh\n") || !strings.Contains(out.String(), "sysctl -w net.core.netdev_max_backlog=2147483646") {
		t.Errorf("script:\n%s", out.String())
	}
	out.Reset()
	errOut.Reset()
	code := run([]string{"fix", "--host", "local", "--root", dir, "--from", from, "--only", "net.backlog-drop"}, &out, &errOut)
	if code != exitFailed || !strings.Contains(errOut.String(), "--only net.backlog-drop: no such finding on this host (found: net.backlog-drops)") {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "etc/sysctl.d/90-wgperf.conf")); !os.IsNotExist(err) {
		t.Errorf("planning wrote the config file: %v", err)
	}
	// Issue 30: a file asks only for what the finding's check proposes. The
	// backlog finding raises netdev_max_backlog: another sysctl under its ID
	// is refused in one line, as is a value its check never computes, and
	// an interface this host does not have (checked on its facts, collected
	// now). Refused while planning, the step --apply starts with: the test
	// plans only, so a wgperf without the refusal cannot change this host.
	for _, tc := range []struct{ id, action, want string }{
		{"net.backlog-drops", sysctl("net.core.somaxconn", "123457"), `net.backlog-drops: sysctl key="net.core.somaxconn": want one of net.core.netdev_max_backlog`},
		{"udp.rcvbuf-errors", sysctl("kernel.randomize_va_space", "0"), `key="kernel.randomize_va_space"`},
		{"net.backlog-drops", sysctl("net.core.netdev_max_backlog", "5001"), `value="5001": want 5000, or an even number in [10000, 2147483647]`},
		{"mtu.tunnel-too-large", `{"kind": "wg-mtu", "params": {"interface": "wgperf-none0", "mtu": "1280"}}`, `interface="wgperf-none0" is not a WireGuard interface on local`},
	} {
		write(tc.id, tc.action)
		out.Reset()
		errOut.Reset()
		code := run([]string{"fix", "--host", "local", "--root", dir, "--from", from}, &out, &errOut)
		if code != exitFailed || !strings.Contains(errOut.String(), tc.want) || strings.Count(errOut.String(), "\n") != 1 {
			t.Errorf("%s %s: exit %d, stderr %q; want exit %d and one line with %q", tc.id, tc.action, code, errOut.String(), exitFailed, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "etc/sysctl.d/90-wgperf.conf")); !os.IsNotExist(err) {
		t.Errorf("a refused file changed the host: %v", err)
	}
}

// fix ecmp reads the wg-quick config under --root and prints the plan.
func TestFixECMPFromConfig(t *testing.T) {
	if bonds, _ := filepath.Glob("/sys/class/net/*/bonding"); len(bonds) > 0 {
		t.Skip("this host has bonds; the plan would mention them")
	}
	root := t.TempDir()
	conf, err := os.ReadFile(filepath.Join("..", "..", "testdata", "fix", "wg0-site-a.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "etc/wireguard"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/wireguard/wg0.conf"), conf, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"fix", "ecmp", "--host", "local", "--root", root, "--tunnels", "2"}, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "nexthop dev wg0") || strings.Contains(out.String(), "SECRET") {
		t.Errorf("plan:\n%s", out.String())
	}
	out.Reset()
	if code := run([]string{"fix", "ecmp", "--host", "local", "--root", root, "--interface", "wg9"}, &out, &errOut); code != exitFailed ||
		!strings.Contains(errOut.String(), "ecmp starts from a wg-quick config") {
		t.Errorf("missing config: exit %d, stderr %q", code, errOut.String())
	}
}

// Every command that measures or diagnoses can write the HTML report.
func TestMeasuringCommandsWriteHTML(t *testing.T) {
	root := newRoot()
	for _, path := range [][]string{{"bench"}, {"mtu"}, {"diagnose"}, {"doctor"}, {"icmp-burst"}, {"shape-sweep"}, {"fix"}, {"report"}} {
		cmd, _, err := root.Find(path)
		if err != nil {
			t.Fatalf("%v: %v", path, err)
		}
		if cmd.Flags().Lookup("html") == nil {
			t.Errorf("wgperf %s has no --html", strings.Join(path, " "))
		}
	}
}
