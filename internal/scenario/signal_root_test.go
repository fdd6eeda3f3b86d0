package scenario

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/testutil"
)

// hostState is what a lab run may touch on the host: the initial
// namespace's sysctls the scenario sets, and every trace of its lab.
type hostState struct {
	Sysctls    map[string]string
	Namespaces []string
	Sockets    []string
	StateDirs  []string
	Processes  []string
}

func readHostState(t *testing.T, labName string, keys []string) hostState {
	t.Helper()
	s := hostState{Sysctls: map[string]string{}}
	for _, k := range keys {
		b, err := os.ReadFile(sysctlPath(k))
		if err != nil {
			t.Fatal(err)
		}
		s.Sysctls[k] = string(b)
	}
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, lab.Netns(labName, "")) {
			s.Namespaces = append(s.Namespaces, strings.Fields(line)[0])
		}
	}
	s.Sockets, _ = filepath.Glob("/var/run/wireguard/wg-" + labName + "-*")
	s.StateDirs, _ = filepath.Glob(filepath.Join(lab.StateDir, labName))
	// Lab processes name their namespace or interface on the command line.
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), "-"+labName+"-") {
			s.Processes = append(s.Processes, p+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return s
}

// TestSIGTERMMidScenarioRestoresHost stops "wgperf lab run udp-rcvbuf" with
// SIGTERM while it measures the broken tunnel: the host's sysctls must be
// back to their exact values and the lab gone without a trace.
func TestSIGTERMMidScenarioRestoresHost(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "ip", "tc", "nft", "wg", "ping", "iperf3")
	if lane := os.Getenv(laneEnv); lane == "shared" || lane == "kernel" {
		t.Skip("it reads host sysctls back: it runs in the host lane, alone")
	}
	exe := labtest.Binary(t)
	const name = "sigterm"
	sc, _ := Lookup("udp-rcvbuf")
	var keys []string
	for k := range sc.HostSysctls {
		keys = append(keys, k)
	}
	before := readHostState(t, name, keys)
	if len(before.Namespaces)+len(before.Sockets)+len(before.StateDirs)+len(before.Processes) > 0 {
		t.Fatalf("lab %s already has traces before the test: %+v", name, before)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "lab", "run", "udp-rcvbuf", "--lab-name", name, "--time", "5")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the scenario's host sysctls are set and its lab measures.
	lines := bufio.NewScanner(stdout)
	var log []string
	for lines.Scan() {
		log = append(log, lines.Text())
		if strings.Contains(lines.Text(), "lab up:") {
			break
		}
	}
	time.Sleep(3 * time.Second) // inside the underlay measurement
	mid := readHostState(t, name, keys)
	if mid.Sysctls["net.core.rmem_max"] == before.Sysctls["net.core.rmem_max"] || len(mid.Namespaces) == 0 {
		t.Fatalf("the scenario had not changed the host yet when signalled: %+v\nlog:\n%s", mid, strings.Join(log, "\n"))
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for lines.Scan() {
		log = append(log, lines.Text())
	}
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
		t.Errorf("exit: %v, want status 3", err)
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr does not say it was interrupted: %q", stderr.String())
	}
	after := readHostState(t, name, keys)
	for _, k := range keys {
		if after.Sysctls[k] != before.Sysctls[k] {
			t.Errorf("host %s = %q after SIGTERM, was %q", k, after.Sysctls[k], before.Sysctls[k])
		}
	}
	if len(after.Namespaces)+len(after.Sockets)+len(after.StateDirs)+len(after.Processes) > 0 {
		t.Errorf("lab left behind after SIGTERM: %+v", after)
	}
	if t.Failed() {
		// Leave the machine as the test found it for the tests after this one.
		for k, v := range before.Sysctls {
			_ = os.WriteFile(sysctlPath(k), []byte(v), 0o644)
		}
		_ = lab.Down(context.Background(), name)
		t.Logf("log:\n%s\nstderr:\n%s", strings.Join(log, "\n"), stderr.String())
	}
}
