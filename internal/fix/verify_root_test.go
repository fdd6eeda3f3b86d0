package fix

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/testutil"
)

// runWgperf runs the built binary and returns its stdout and exit code.
func runWgperf(t *testing.T, args ...string) ([]byte, int) {
	t.Helper()
	cmd := exec.Command(labtest.Binary(t), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if stderr.Len() > 0 {
		t.Logf("wgperf %s: stderr: %s", strings.Join(args, " "), stderr.String())
	}
	return out, code
}

// A lab whose WireGuard MTU is 1500 on both ends over a 1500-byte underlay:
// tunnel TCP collapses. "fix --apply --verify" lowers A's MTU, measures the
// tunnel recover and keeps it. Then a change that hurts (a 20 Mbit/s tbf cap
// on the tunnel) is measured, found worse and rolled back: a harmless change
// would leave that verdict to measurement noise.
func TestFixVerifyKeepsWhatHelpsAndRollsBackTheRest(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "iperf3")
	l := labtest.Up(t, lab.Config{Name: "wgvfix", Topology: lab.SiteToSite, Underlay: lab.Shape{RateMbit: 200}, WGMTU: 1500})
	root := t.TempDir() // persistent config and journals go here, not to the real /etc
	host := "netns:" + l.Netns("a")
	apply := func(only string, extra ...string) (*Journal, int) {
		args := append([]string{"fix", "--host", host, "--root", root, "--only", only, "--apply", "--verify", "--time", "2", "--json"}, extra...)
		out, code := runWgperf(t, args...)
		var j Journal
		if err := json.Unmarshal(out, &j); err != nil {
			t.Fatalf("fix --only %s: exit %d, output %q: %v", only, code, out, err)
		}
		if j.Verify == nil {
			t.Fatalf("fix --only %s: no verification in %s", only, out)
		}
		t.Logf("%s: before %s (%s), after %s (%s), kept %v", only, j.Verify.Before, j.Verify.Before.Detail, j.Verify.After, j.Verify.After.Detail, j.Verify.Kept)
		return &j, code
	}

	j, code := apply("mtu.tunnel-too-large")
	if code != 0 || !j.Verify.Kept || j.State != StateApplied || j.Verify.After.Value <= 2*j.Verify.Before.Value {
		t.Errorf("MTU fix: exit %d, state %s, verify %+v; want kept with after well above before", code, j.State, j.Verify)
	}
	if !strings.Contains(j.Verify.Before.Detail, "too large") || !strings.Contains(j.Verify.After.Detail, "(fits)") {
		t.Errorf("MTU fix details %q / %q: want the MTU too large before and fitting after", j.Verify.Before.Detail, j.Verify.After.Detail)
	}
	if mtu, err := l.Target("a").ReadFile(t.Context(), "/sys/class/net/"+l.WGInterface("a")+"/mtu"); err != nil || strings.TrimSpace(string(mtu)) != "1440" {
		t.Errorf("WireGuard MTU on A after the kept fix: %q, %v; want 1440", mtu, err)
	}

	iface := l.WGInterface("a")
	hurt := filepath.Join(t.TempDir(), "findings.json")
	doc := fmt.Sprintf(`{"findings": [{"id": "throughput.collapse-knee", "severity": "warning", "host": %q, "interface": %q,
		"title": "test: a cap that hurts", "evidence": [], "fixes": [{"description": "Cap the tunnel at 20 Mbit/s",
		"commands": [], "action": {"kind": "tbf-cap", "params": {"device": %q, "rate": "20mbit"}}}]}]}`, host, iface, iface)
	if err := os.WriteFile(hurt, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	j, code = apply("throughput.collapse-knee", "--from", hurt)
	if code != 1 || j.Verify.Kept || j.State != StateRolledBack || j.Verify.After.Value >= j.Verify.Before.Value {
		t.Errorf("harmful cap: exit %d, state %s, verify %+v; want worse after and rolled back with exit 1", code, j.State, j.Verify)
	}
	if qd, err := l.Target("a").Run(t.Context(), "tc", "qdisc", "show", "dev", iface); err != nil || strings.Contains(string(qd), "tbf") {
		t.Errorf("tbf cap left after the rollback: %s %v", qd, err)
	}
}

// Without --peer outside a lab, --verify stops before collecting anything,
// with one line and exit 3.
func TestFixVerifyNeedsPeer(t *testing.T) {
	cmd := exec.Command(labtest.Binary(t), "fix", "--host", "local", "--root", t.TempDir(), "--apply", "--verify")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || len(out) != 0 {
		t.Fatalf("err %v, stdout %q; want exit 3 and nothing on stdout", err, out)
	}
	if msg := strings.TrimSpace(stderr.String()); strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "--verify needs --server") {
		t.Errorf("stderr %q, want one line asking for --server", msg)
	}
}
