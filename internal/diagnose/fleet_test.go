package diagnose

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/fleet"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// A host that does not exist is reported and the snapshots are still
// diagnosed, cross-host checks included.
func TestRunFleetReportsUnreachable(t *testing.T) {
	hosts := []fleet.Host{{Name: "gone", Target: targettest.Spec("netns:wgs-no-such-namespace")}}
	fl, err := RunFleet(context.Background(), hosts, []string{
		filepath.Join(snapshots, "lab-mtu1480-icmplimit-lan-a.json"),
		filepath.Join(snapshots, "lab-mtu1480-icmplimit-lan-b.json"),
	}, Options{HostTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(fl.Hosts) != 2 || !hasID(fl.Diagnosis, "mtu.tunnel-too-large", finding.Critical) {
		t.Errorf("hosts %d, findings %v", len(fl.Hosts), idsOf(fl.Diagnosis))
	}
	if len(fl.Unreachable) != 1 || fl.Unreachable[0].Host.String() != "netns:wgs-no-such-namespace" || fl.Unreachable[0].Name != "gone" ||
		!strings.HasPrefix(fl.Unreachable[0].Error, "netns:wgs-no-such-namespace: ") {
		t.Fatalf("unreachable %+v", fl.Unreachable)
	}

	// JSON: the diagnosis fields plus "unreachable".
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(fl); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Diagnosis
		Unreachable []fleet.Unreachable `json:"unreachable"`
	}
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Hosts) != 2 || len(back.Unreachable) != 1 || back.Unreachable[0].Name != "gone" {
		t.Errorf("JSON round trip: %s", buf.String())
	}

	// Text: the usual report, then the unreachable host with its reason.
	buf.Reset()
	if err := fl.AtLeast(finding.Critical).WriteText(&buf, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	for _, want := range []string{"Diagnosed 2 hosts", "CRITICAL (", "\nUNREACHABLE (1): ", "\n  gone (netns:wgs-no-such-namespace): "} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "WARNING (") {
		t.Errorf("AtLeast(critical) kept warnings:\n%s", text)
	}
}

// Nothing answered and no snapshot: the run fails with one line naming a host.
func TestRunFleetNothingCollected(t *testing.T) {
	hosts := []fleet.Host{{Name: "netns:wgs-none1", Target: targettest.Spec("netns:wgs-none1")}, {Name: "netns:wgs-none2", Target: targettest.Spec("netns:wgs-none2")}}
	_, err := RunFleet(context.Background(), hosts, nil, Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "no host could be collected (2 unreachable); first: netns:wgs-none1: ") ||
		strings.Contains(err.Error(), "\n") {
		t.Errorf("err = %v", err)
	}
}
