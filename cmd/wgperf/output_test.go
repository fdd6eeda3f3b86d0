package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestFromStdin: "--from -" reads standard input, for diagnose as for report.
func TestFromStdin(t *testing.T) {
	snap, err := os.ReadFile(snapshot("lab-healthy-a.json"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "diagnose", "--from", "-", "--json")
	cmd.Env = append(os.Environ(), "WGPERF_TEST_MAIN=1")
	cmd.Stdin = bytes.NewReader(snap)
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), `"kind": "diagnose"`) || !strings.Contains(string(out), "netns:wgl-wgd0-a") {
		t.Errorf("diagnose --from -: %v\n%s", err, out)
	}
}

// TestCompletion: completion offers scenarios, finding IDs and targets (the
// ssh config's hosts: internal/target's TestSSHConfigHosts).
func TestCompletion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"__complete", "lab", "run", ""}, "pmtud-blackhole\n"},
		{[]string{"__complete", "fix", "--only", ""}, "mtu.pmtud-blackhole\n"},
		{[]string{"__complete", "explain", ""}, "route.stale-endpoint\n"},
		{[]string{"__complete", "doctor", "--client", ""}, "local\n"},
	} {
		var out strings.Builder
		if code := run(tc.args, &out, io.Discard); code != exitOK || !strings.Contains(out.String(), tc.want) {
			t.Errorf("%v: exit %d, %q; want %q", tc.args, code, out.String(), tc.want)
		}
	}
}
