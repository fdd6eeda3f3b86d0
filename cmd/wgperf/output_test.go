package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// TestTimeFlags: time flags take Go durations like every other, and a bare
// number in their unit as before; renamed flags keep their old spelling.
func TestTimeFlags(t *testing.T) {
	var secs, ms int
	f := pflag.NewFlagSet("t", pflag.ContinueOnError)
	secondsFlag(f, &secs, "time", 3, "")
	f.Var(unitValue{p: &ms, unit: time.Millisecond}, "delay", "")
	f.StringVar(new(string), "server", "", "")
	aliasFlag(f, "peer", "server")
	for _, tc := range []struct {
		args       []string
		secs, ms   int
		wantErr    bool
		serverWant string
	}{
		{[]string{"--time", "10s"}, 10, 0, false, ""},
		{[]string{"--time", "10"}, 10, 0, false, ""},
		{[]string{"--time", "1m"}, 60, 0, false, ""},
		{[]string{"--time", "1500ms"}, 2, 0, false, ""},
		{[]string{"--delay", "10"}, 3, 10, false, ""},
		{[]string{"--delay", "6ms"}, 3, 6, false, ""},
		{[]string{"--time", "soon"}, 0, 0, true, ""},
		{[]string{"--time", "-5s"}, 0, 0, true, ""},
		{[]string{"--peer", "ssh:m42"}, 3, 0, false, "ssh:m42"},
	} {
		secs, ms = 3, 0
		_ = f.Set("server", "")
		err := f.Parse(tc.args)
		if (err != nil) != tc.wantErr {
			t.Errorf("%v: err %v", tc.args, err)
			continue
		}
		if tc.wantErr {
			continue
		}
		if secs != tc.secs || ms != tc.ms || f.Lookup("server").Value.String() != tc.serverWant {
			t.Errorf("%v: time %d s, delay %d ms, server %q", tc.args, secs, ms, f.Lookup("server").Value.String())
		}
	}
}

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
