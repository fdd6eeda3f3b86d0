package diagnose

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/fleet"
	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/target/targettest"
	"github.com/wgperf/wgperf/internal/testutil"
)

// TestLabFleet diagnoses a lab's three namespaces from an Ansible-style
// inventory that also names a host nobody answers on: the reachable hosts are
// diagnosed (per host and across the tunnel), the dead one is listed, and the
// exit code follows the worst finding. Then the same fleet with node B reached
// over ssh through the tunnel, plus a host that never answers, in process.
func TestLabFleet(t *testing.T) {
	testutil.RequireRoot(t)
	l := labtest.Up(t, lab.Config{Name: "wgs1", Topology: lab.SiteToSite})
	sh(t, l, "a", "ping", "-c", "2", "-i", "0.2", "-q", "10.77.0.2")
	// A's tunnel is too large for the 1500-byte underlay (critical on A) and
	// larger than B's (the cross-host check pairs them by public key).
	sh(t, l, "a", "ip", "link", "set", "dev", l.WGInterface("a"), "mtu", "1480")
	hostA, hostB := "netns:"+l.Netns("a"), "netns:"+l.Netns("b")

	inv := filepath.Join(t.TempDir(), "hosts.ini")
	ini := fmt.Sprintf("[sites]\n%s\n%s\n\n[routers]\n%s   # the underlay router\n\n[dead]\nnobody ansible_host=127.0.0.1 ansible_port=1\n\n[dead:vars]\nansible_user=root\n",
		hostA, hostB, "netns:"+l.Netns("r"))
	if err := os.WriteFile(inv, []byte(ini), 0o600); err != nil {
		t.Fatal(err)
	}

	t.Run("cli", func(t *testing.T) {
		out, code := run(t, "diagnose", "--inventory", inv, "--json", "--concurrency", "2")
		var fl Fleet
		if err := json.Unmarshal(out, &fl); err != nil {
			t.Fatalf("exit %d: %v\n%s", code, err, out)
		}
		if code != 2 {
			t.Errorf("exit %d, want 2 (critical finding); findings %v", code, idsOf(fl.Diagnosis))
		}
		if len(fl.Hosts) != 3 {
			t.Errorf("diagnosed hosts %+v", fl.Hosts)
		}
		f := requireFinding(t, fl.Diagnosis, "mtu.tunnel-too-large", hostA)
		if f.Severity != finding.Critical {
			t.Errorf("A's MTU finding is %s", f.Severity)
		}
		requireCrossMTU(t, fl.Diagnosis, hostA, hostB)
		if len(fl.Unreachable) != 1 || fl.Unreachable[0].Host.String() != "ssh:root@127.0.0.1:1" || fl.Unreachable[0].Name != "nobody" ||
			!strings.Contains(fl.Unreachable[0].Error, "Connection refused") {
			t.Errorf("unreachable %+v", fl.Unreachable)
		}

		text, code := run(t, "diagnose", "--inventory", inv, "--severity", "critical")
		if code != 2 || !strings.Contains(string(text), "Diagnosed 3 hosts") ||
			!strings.Contains(string(text), "UNREACHABLE (1)") || !strings.Contains(string(text), "nobody (ssh:root@127.0.0.1:1): ssh: connect to host 127.0.0.1 port 1: Connection refused") {
			t.Errorf("exit %d, text:\n%s", code, text)
		}
	})

	t.Run("ssh and a host that never answers", func(t *testing.T) {
		overSSH := labtest.SSHD(t, l, "b")
		// SYNs to port 2223 vanish in B: ssh waits, the host timeout ends it.
		if _, err := l.Target("b").RunInput(context.Background(),
			[]byte("table inet wgsdrop {\n\tchain sink {\n\t\ttype filter hook input priority 0; policy accept;\n\t\ttcp dport 2223 drop\n\t}\n}\n"), "nft", "-f", "-"); err != nil {
			t.Fatal(err)
		}
		silent := strings.Replace(overSSH, ":2222", ":2223", 1)
		hosts := []fleet.Host{{Name: hostA, Target: targettest.Spec(hostA)}, {Name: "site-b", Target: targettest.Spec(overSSH)},
			{Name: "silent", Target: targettest.Spec(silent)}, {Name: "refused", Target: targettest.Spec("ssh:root@127.0.0.1:1")}}
		start := time.Now()
		fl, err := RunFleet(context.Background(), hosts, nil, Options{Concurrency: 2, HostTimeout: 3 * time.Second})
		took := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("fleet of %d hosts (one silent, 3 s timeout) in %.1fs", len(hosts), took.Seconds())
		if len(fl.Hosts) != 2 || fl.Hosts[1].Host.String() != overSSH || len(fl.Hosts[1].WireGuard) != 1 || fl.Hosts[1].WireGuard[0] != l.WGInterface("b") {
			t.Errorf("hosts %+v", fl.Hosts)
		}
		requireCrossMTU(t, fl.Diagnosis, hostA, overSSH)
		if len(fl.Unreachable) != 2 || fl.Unreachable[0].Host.String() != silent || !strings.Contains(fl.Unreachable[0].Error, "no answer within 3s") ||
			fl.Unreachable[1].Host.String() != "ssh:root@127.0.0.1:1" {
			t.Errorf("unreachable %+v", fl.Unreachable)
		}
	})
}

// requireCrossMTU fails unless the cross-host MTU check paired the two hosts.
func requireCrossMTU(t *testing.T, d Diagnosis, a, b string) {
	t.Helper()
	for _, f := range d.Findings {
		if f.ID == "mtu.tunnel-too-large" && strings.HasPrefix(f.Title, "Tunnel MTU mismatch") &&
			strings.Contains(f.Title, a) && strings.Contains(f.Title, b) {
			return
		}
	}
	t.Errorf("no cross-host MTU mismatch between %s and %s: %v", a, b, idsOf(d))
}

// run runs the wgperf binary and returns its standard output and exit code.
func run(t *testing.T, args ...string) ([]byte, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := target.Local().Run(ctx, labtest.Binary(t), args...)
	var te *target.Error
	if errors.As(err, &te) {
		if te.ExitCode == 3 || te.ExitCode < 0 {
			t.Fatalf("wgperf %v: %v", args, err)
		}
		return out, te.ExitCode
	} else if err != nil {
		t.Fatal(err)
	}
	return out, 0
}
