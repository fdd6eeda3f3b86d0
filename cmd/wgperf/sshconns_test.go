package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// TestDiagnoseLeavesSSHSharingAlone: diagnose gives each host a connection
// of its own, and only its own targets: a command run after it in the same
// process (as tests run them) still shares one connection per host. It once
// switched sharing off for the whole process and a later test's command went
// without it. A stand-in for ssh writes down each command line.
func TestDiagnoseLeavesSSHSharingAlone(t *testing.T) {
	lines := targettest.RecordSSH(t)
	t.Cleanup(target.CloseAll)

	if code := run([]string{"diagnose", "--host", "ssh:root@diagnosed.invalid"}, io.Discard, io.Discard); code != exitFailed {
		t.Errorf("diagnose of a host that answers nothing: exit %d, want %d", code, exitFailed)
	}
	for _, l := range lines() {
		if strings.Contains(l, "Control") {
			t.Errorf("diagnose shared a connection: ssh %s", l)
		}
	}

	after, err := target.Parse("ssh:root@after.invalid")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := after.Run(context.Background(), "true"); err != nil {
		t.Fatal(err)
	}
	if got := lines(); len(got) != 2 || !strings.Contains(got[0], "ControlMaster=yes") || !strings.Contains(got[1], "ControlPath=") {
		t.Errorf("a command after diagnose ran ssh %q, want a shared connection started, then the command through it", got)
	}
}
