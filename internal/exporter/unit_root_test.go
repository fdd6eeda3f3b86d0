package exporter

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/testutil"
)

// unitSandbox is what a unit file grants: capabilities and system calls.
type unitSandbox struct {
	caps    []string        // CapabilityBoundingSet, as setpriv spells them
	allowed map[string]bool // SystemCallFilter, expanded
}

// readUnitSandbox reads the settings of the unit and drop-ins in order, as
// systemd merges them: capability lists add up; the first SystemCallFilter
// line is an allow list, later ones add to it or (with ~) take away.
func readUnitSandbox(t *testing.T, files ...string) unitSandbox {
	t.Helper()
	sb := unitSandbox{allowed: map[string]bool{}}
	first := true
	for _, f := range files {
		sc := bufio.NewScanner(strings.NewReader(readDeploy(t, f)))
		for sc.Scan() {
			k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
			if !ok || strings.HasPrefix(k, "#") {
				continue
			}
			switch k {
			case "CapabilityBoundingSet":
				for _, c := range strings.Fields(v) {
					sb.caps = append(sb.caps, strings.ToLower(strings.TrimPrefix(c, "CAP_")))
				}
			case "SystemCallFilter":
				deny := strings.HasPrefix(v, "~")
				if deny && first {
					t.Fatalf("%s: the filter must start with an allow list", f)
				}
				first = false
				for _, g := range strings.Fields(strings.TrimPrefix(v, "~")) {
					for _, s := range expandSyscalls(t, g) {
						sb.allowed[s] = !deny
					}
				}
			}
		}
	}
	return sb
}

// expandSyscalls lists the system calls of a systemd group (or a single call).
func expandSyscalls(t *testing.T, g string) []string {
	t.Helper()
	if !strings.HasPrefix(g, "@") {
		return []string{g}
	}
	out, err := target.Local().Run(context.Background(), "systemd-analyze", "syscall-filter", g)
	if err != nil {
		t.Fatalf("systemd-analyze syscall-filter %s: %v", g, err)
	}
	var calls []string
	for _, line := range strings.Split(string(out), "\n") {
		l := strings.TrimSpace(line)
		switch {
		case l == "" || l == g || strings.HasPrefix(l, "#"):
		case strings.HasPrefix(l, "@"):
			calls = append(calls, expandSyscalls(t, l)...)
		default:
			calls = append(calls, l)
		}
	}
	return calls
}

// jail is the command prefix that runs a program with only the unit's
// capabilities, under strace writing one file per process to dir.
func (sb unitSandbox) jail(dir string) []string {
	bounding := "-all"
	for _, c := range sb.caps {
		bounding += ",+" + c
	}
	return []string{"setpriv", "--bounding-set", bounding, "strace", "-f", "-ff", "-qq", "-o", filepath.Join(dir, "trace")}
}

var straceCall = regexp.MustCompile(`^(?:\[pid\s+\d+\]\s+)?([a-z0-9_]+)\(`)

// denied lists the system calls traced in dir that the unit would refuse.
func (sb unitSandbox) denied(t *testing.T, dir string) (used int, denied []string) {
	t.Helper()
	seen := map[string]bool{}
	files, _ := filepath.Glob(filepath.Join(dir, "trace*"))
	if len(files) == 0 {
		t.Fatalf("no strace output in %s", dir)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if m := straceCall.FindStringSubmatch(line); m != nil {
				seen[m[1]] = true
			}
		}
	}
	for s := range seen {
		if !sb.allowed[s] {
			denied = append(denied, s)
		}
	}
	sort.Strings(denied)
	return len(seen), denied
}

// TestSystemdUnitAllowsEveryMode collects a local host, a namespace (with the
// netns.conf drop-in) and a router over ssh with only the capabilities the
// unit grants, and checks every system call they make passes its filter. No
// systemd runs here, so this is the unit's sandbox rebuilt from its own
// settings (setpriv for capabilities, strace for system calls); the file
// system settings are checked by systemd-analyze verify in TestSystemdUnit.
func TestSystemdUnitAllowsEveryMode(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "systemd-analyze", "setpriv", "strace")
	exe := labtest.Binary(t)
	l := labtest.Up(t, lab.Config{Name: "ct2", Topology: lab.SiteToSite})
	spec := labtest.SSHD(t, l, "b")
	ctx := context.Background()

	check := func(name string, sb unitSandbox, dir string, notes []string) {
		t.Helper()
		used, denied := sb.denied(t, dir)
		t.Logf("%s: %d distinct system calls, caps %v", name, used, sb.caps)
		if len(denied) > 0 {
			t.Errorf("%s: the unit's SystemCallFilter refuses %v", name, denied)
		}
		if len(notes) > 0 {
			t.Errorf("%s: with the unit's capabilities the collection lost: %v", name, notes)
		}
	}
	// collectWith runs "wgperf collect" in the sandbox and returns the snapshot's notes
	// that an unconfined collection of the same host does not have.
	collectWith := func(sb unitSandbox, host, dir string) []string {
		t.Helper()
		free := filepath.Join(dir, "free.json")
		if out, err := target.Local().Run(ctx, exe, "collect", "--host", host, "-o", free); err != nil {
			t.Fatalf("collect %s: %v\n%s", host, err, out)
		}
		jailed := filepath.Join(dir, "jailed.json")
		argv := append(sb.jail(dir), exe, "collect", "--host", host, "-o", jailed)
		if out, err := target.Local().Run(ctx, argv[0], argv[1:]...); err != nil {
			t.Fatalf("collect %s in the unit's sandbox: %v\n%s", host, err, out)
		}
		return lostNotes(t, free, jailed)
	}

	main := readUnitSandbox(t, "systemd/wgperf-exporter.service")
	dir := t.TempDir()
	check("local", main, dir, collectWith(main, "local", dir))

	withNetns := readUnitSandbox(t, "systemd/wgperf-exporter.service", "systemd/netns.conf")
	dir = t.TempDir()
	check("netns (with netns.conf)", withNetns, dir, collectWith(withNetns, "netns:"+l.Netns("b"), dir))
	// Without the drop-in, netns mode must fail: the drop-in is needed, not decoration.
	dir = t.TempDir()
	argv := append(main.jail(dir), exe, "collect", "--host", "netns:"+l.Netns("b"), "-o", filepath.Join(dir, "x.json"))
	if _, err := target.Local().Run(ctx, argv[0], argv[1:]...); err == nil {
		t.Errorf("netns collection worked without netns.conf's CAP_SYS_ADMIN; drop the drop-in")
	}

	// ssh runs from node A (labtest's ssh command); put the sandbox between
	// "ip netns exec" and ssh, as the unit puts it around the exporter.
	dir = t.TempDir()
	old := target.SSHCommand
	i := slices.Index(old, "ssh")
	target.SSHCommand = append(append(append([]string{}, old[:i]...), main.jail(dir)...), old[i:]...)
	defer func() { target.SSHCommand = old }()
	remote, err := target.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := collect.Collect(cctx, remote, collect.Options{}); err != nil {
		t.Fatalf("collect %s with the unit's capabilities: %v", spec, err)
	}
	check("ssh", main, dir, nil)
}

// lostNotes returns the notes of the jailed snapshot the free one lacks.
func lostNotes(t *testing.T, free, jailed string) []string {
	t.Helper()
	read := func(p string) []string {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		s, err := document.ReadSnapshot(f)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var notes []string
		for _, n := range s.Notes {
			notes = append(notes, n.Source+": "+n.Message)
		}
		return notes
	}
	had := map[string]bool{}
	for _, n := range read(free) {
		had[n] = true
	}
	var lost []string
	for _, n := range read(jailed) {
		if !had[n] {
			lost = append(lost, n)
		}
	}
	return lost
}
