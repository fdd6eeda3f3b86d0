package target

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/testutil"
)

// plantRelative puts an executable "uname" that leaves a mark in the current
// directory and in its "bin" folder, and puts ".", "bin" and an empty entry
// (the current directory too) before the caller's PATH, as a careless root's
// PATH might; it returns the mark.
func plantRelative(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	mark := filepath.Join(dir, "planted-ran")
	for _, d := range []string{dir, filepath.Join(dir, "bin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "uname"), []byte("#!/bin/sh\necho planted >> "+mark+"\necho planted\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	t.Setenv("PATH", ".:bin::"+os.Getenv("PATH"))
	return mark
}

// notPlanted fails t when out or the mark shows the planted uname ran.
func notPlanted(t *testing.T, mark, what string, out []byte, err error) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v", what, err)
	}
	if strings.Contains(string(out), "planted") || exists(mark) {
		t.Errorf("%s ran the planted uname (output %q)", what, out)
	}
}

// runsUname runs uname on tg every way a Target runs programs: by name, in a
// script, streamed and started.
func runsUname(t *testing.T, tg Target, mark string) {
	t.Helper()
	ctx := context.Background()
	out, err := tg.Run(ctx, "uname")
	notPlanted(t, mark, tg.String()+": uname", out, err)
	out, err = tg.Run(ctx, "sh", "-c", "uname")
	notPlanted(t, mark, tg.String()+": a script's uname", out, err)
	var b strings.Builder
	err = tg.Stream(ctx, nil, &b, nil, "sh", "-c", "uname")
	notPlanted(t, mark, tg.String()+": a streamed script's uname", []byte(b.String()), err)
	p, err := tg.Start(ctx, "sh", "-c", "uname")
	if err == nil {
		err = p.Wait()
	}
	notPlanted(t, mark, tg.String()+": a started script's uname", nil, err)
}

// TestPlantedRelativePathNotRun: with ".", "bin" and "" on the caller's
// PATH, neither a program wgperf runs by name nor one a script it runs calls
// is taken from the current directory, on a local or ssh target: the real
// uname answers, and the planted one never runs.
func TestPlantedRelativePathNotRun(t *testing.T) {
	mark := plantRelative(t)
	ctx := context.Background()
	runsUname(t, Local(), mark)
	// An ssh target's remote command, run by a login shell with the same PATH.
	tg, err := Parse("ssh:root@gw1")
	if err != nil {
		t.Fatal(err)
	}
	for _, become := range []bool{false, true} {
		s := tg.(*argvTarget)
		spec := *s
		if become {
			o, err := ParseWith("ssh:root@gw1", HostSSH{Become: true})
			if err != nil {
				t.Fatal(err)
			}
			spec = *o.(*argvTarget)
		}
		argv := spec.wrap(nil, "sh", []string{"-c", "uname"})
		line := argv[len(argv)-1]
		if !strings.HasPrefix(line, envProgram+" PATH="+Path+" ") {
			t.Errorf("remote line %q does not set PATH", line)
		}
		if become {
			continue // sudo would ask for a password here; the prefix is what counts
		}
		out, err := exec.Command("sh", "-c", line).Output()
		notPlanted(t, mark, "ssh: the remote line", out, err)
	}
	// What is not in Path is not found, even where the caller's PATH has it.
	if _, err := Local().Run(ctx, "wgperf-not-on-path"); !IsNotFound(err) {
		t.Errorf("a program on no folder of Path: %v, want not found", err)
	}
}

// TestPlantedRelativePathNotRunInNetns is the same on a netns target
// (ip netns exec hands the namespace's program the PATH it gets).
func TestPlantedRelativePathNotRunInNetns(t *testing.T) {
	testutil.RequireRoot(t)
	mark := plantRelative(t)
	ns := fmt.Sprintf("trust1-path-%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v: %s", ns, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	runsUname(t, Netns(ns), mark)
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }
