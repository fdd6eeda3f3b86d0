package fix

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// wgEnd is one end of a tunnel for the both-ends tests: this machine's
// files under a temporary root (the journal, a wg-quick config) and a
// scripted WireGuard whose listen port and peer endpoint the wg lines move.
type wgEnd struct {
	target.Target
	name, iface, port, endpoint string
	failSet                     bool // "wg set" of an endpoint fails, as on a host that refuses it
	ran                         []string
}

func (h *wgEnd) String() string { return h.name }

func (h *wgEnd) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	line := shell.Join(name, args...)
	if name == "sh" && len(args) == 2 && args[0] == "-c" && strings.HasPrefix(args[1], "wg ") {
		line = args[1]
	} else if name == "sh" && len(args) == 2 && strings.Contains(args[1], watchdogName("")) {
		// A confirm watchdog would run the revert script, wg lines and
		// all, on this machine: a pid no process has stands for it.
		return []byte("999999\n"), nil
	} else if name != "wg" {
		return h.Target.Run(ctx, name, args...)
	}
	h.ran = append(h.ran, line)
	f := strings.Fields(line)
	switch {
	case line == "wg show "+h.iface+" listen-port":
		return []byte(h.port + "\n"), nil
	case line == "wg show "+h.iface+" endpoints":
		return []byte(farKey + "\t" + h.endpoint + "\n"), nil
	case len(f) == 5 && f[2] == h.iface && f[3] == "listen-port":
		h.port = f[4]
		return nil, nil
	case len(f) == 7 && f[2] == h.iface && f[3] == "peer" && f[4] == farKey && f[5] == "endpoint":
		if h.failSet {
			return nil, &target.Error{Target: h.name, Command: line, ExitCode: 1, Stderr: "Unable to modify interface: Operation not permitted"}
		}
		h.endpoint = f[6]
		return nil, nil
	}
	return nil, &target.Error{Target: h.name, Command: line, ExitCode: 127}
}

const farKey = "kQuGaLbNPKL3KRVH54I6ss2eTSeHZQ1f/9+XJLDz1iA="

// newEnd is an end whose WireGuard interface iface has a wg-quick config
// under root.
func newEnd(t *testing.T, root, name, iface, port, endpoint, conf string) (*wgEnd, *Env, string) {
	path := filepath.Join(root, "etc/wireguard/"+iface+".conf")
	must(t, os.MkdirAll(filepath.Dir(path), 0o700))
	must(t, os.WriteFile(path, []byte(conf), 0o600))
	h := &wgEnd{Target: target.Local(), name: name, iface: iface, port: port, endpoint: endpoint}
	return h, &Env{Env: remedy.Env{T: h, Root: root, Platform: remedy.Linux}}, path
}

// The port fix is both ends or neither: when the near end's half fails, the
// far end's, applied first, is rolled back too (its port and its config byte
// for byte), and the error says so; when it is not kept, the same without
// an error; when it succeeds, both stand.
func TestBothEndsRollBackAsOne(t *testing.T) {
	const farConf = "[Interface]\nPrivateKey = c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MDA=\nListenPort = 51820\n\n[Peer]\nPublicKey = bmVhcm5lYXJuZWFybmVhcm5lYXJuZWFybmVhcm5lYXI=\nAllowedIPs = 10.0.0.1/32\n"
	const nearConf = "[Interface]\nPrivateKey = c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MDE=\n\n[Peer]\nPublicKey = " + farKey + "\nEndpoint = 203.0.113.2:51820\nAllowedIPs = 10.0.0.2/32\n"
	farFix, err := remedy.WGListenPort("wg-b", 51821, remedy.Unknown, "")
	must(t, err)
	nearFix, err := remedy.WGPeerEndpoint("wg-a", farKey, "203.0.113.2:51821", remedy.Unknown)
	must(t, err)
	farFinding := []finding.Finding{{ID: catalog.PathPortThrottled, Severity: finding.Critical, Host: targettest.Spec("netns:b"), Fixes: []finding.Fix{remedy.Fix("move", farFix)}}}
	nearFinding := []finding.Finding{{ID: catalog.PathPortThrottled, Severity: finding.Critical, Host: targettest.Spec("netns:a"), Fixes: []finding.Fix{remedy.Fix("follow", nearFix)}}}
	for _, tc := range []struct {
		name      string
		failSet   bool
		better    bool
		wantErr   string
		wantMoved bool
		// shared: both ends' journals in one folder, each half in its
		// confirm window (a lab's nodes, as doctor --fix runs there).
		shared bool
	}{
		{"the near end's half fails", true, true, "the far end's half, on netns:b, was rolled back too", false, false},
		{"the near end's half is not kept", false, false, "", false, false},
		{"both halves kept", false, true, "", true, false},
		{"one journal folder, confirm windows: the far end's open window is its other half's", false, true, "", true, true},
		{"one journal folder, confirm windows, the near end's half fails", true, true, "was rolled back too", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			farRoot, nearRoot := t.TempDir(), t.TempDir()
			var confirm time.Duration
			if tc.shared {
				nearRoot, confirm = farRoot, 10*time.Minute
			}
			far, farEnv, farPath := newEnd(t, farRoot, "netns:b", "wg-b", "51820", "", farConf)
			near, nearEnv, nearPath := newEnd(t, nearRoot, "netns:a", "wg-a", "51900", "203.0.113.2:51820", nearConf)
			near.failSet = tc.failSet
			figure := 40.0
			measure := func(context.Context) (Measurement, error) {
				m := Measurement{Name: "tunnel throughput", Value: figure, Unit: "Mbit/s"}
				if tc.better {
					figure = 190
				}
				return m, nil
			}
			out, err := RunBothEnds(ctx, Request{Env: farEnv, Findings: farFinding, Apply: true, Confirm: confirm},
				Request{Env: nearEnv, Findings: nearFinding, Apply: true, Confirm: confirm, ConfirmKept: confirm > 0,
					Verify: func(context.Context, *Plan) (Measure, error) { return measure, nil }})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
			}
			if out.Kept() != tc.wantMoved || out.FarRolledBack == tc.wantMoved {
				t.Errorf("kept %v, far rolled back %v; want kept %v", out.Kept(), out.FarRolledBack, tc.wantMoved)
			}
			wantPort, wantEP, wantFar, wantNear := "51820", "203.0.113.2:51820", farConf, nearConf
			if tc.wantMoved {
				wantPort, wantEP = "51821", "203.0.113.2:51821"
				wantFar = strings.Replace(farConf, "ListenPort = 51820", "ListenPort = 51821", 1)
				wantNear = strings.Replace(nearConf, "Endpoint = 203.0.113.2:51820", "Endpoint = 203.0.113.2:51821", 1)
			}
			if far.port != wantPort || near.endpoint != wantEP {
				t.Errorf("far end listens on %s, near end's peer at %s; want %s, %s (ran %q, %q)", far.port, near.endpoint, wantPort, wantEP, far.ran, near.ran)
			}
			for path, want := range map[string]string{farPath: wantFar, nearPath: wantNear} {
				got, err := os.ReadFile(path)
				must(t, err)
				if string(got) != want {
					t.Errorf("%s:\n%s\nwant:\n%s", path, got, want)
				}
			}
			if !tc.wantMoved {
				if j, err := Latest(ctx, farEnv); err == nil || j != nil {
					t.Errorf("the far end still has a fix in place: %+v", j)
				}
			}
			if tc.shared && tc.wantMoved {
				// Both windows closed: nothing is left to roll back at the deadline.
				for _, o := range []*Outcome{out.Far, out.Near} {
					if j, err := LoadJournal(ctx, farEnv, o.Journal.ID); err != nil || j.State != StateConfirmed {
						t.Errorf("journal %s: %+v, %v; want it confirmed", o.Journal.ID, j, err)
					}
				}
				if !out.FarConfirmed {
					t.Error("the far end's half was not confirmed with the near end's")
				}
			}
		})
	}
}
