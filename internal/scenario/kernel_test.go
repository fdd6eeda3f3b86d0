package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/guest"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/testutil"
)

// kernelRateMbit is the underlay rate of the kernel lane: an emulated guest
// carries a few times that through kernel WireGuard even on a busy 2-core
// machine, so a fixed rate replaces the sizing run each lab shape would cost.
const kernelRateMbit = 20

// TestKernelCatalog plays the catalog with kernel WireGuard, in a guest kernel
// that has the module (wgperf lab vm, the product's own command), as "lab run
// --all --verdict-only": doctor must rank each case's cause first on the
// kernel module too. A scenario may be skipped only for a reason that is
// not the machine's speed (it cannot happen on kernel WireGuard). The full
// catalog with its fixes is make test-kernel.
func TestKernelCatalog(t *testing.T) {
	lane := os.Getenv(laneEnv)
	if lane != "kernel" {
		t.Skip("plays in the kernel lane (WGPERF_SCENARIO_LANE=kernel): it boots a guest kernel")
	}
	testutil.RequireRoot(t)
	exe := labtest.Binary(t)
	if _, err := guest.Check(guest.Options{}); err != nil {
		t.Fatalf("the kernel lane needs a guest kernel: %v (make deps installs it)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	var out bytes.Buffer
	res, err := guest.Run(ctx, guest.Options{Progress: func(s string) { t.Log(s) }},
		[]string{exe, "lab", "run", "--all", "--verdict-only", "--rate", strconv.Itoa(kernelRateMbit), "--time", "2", "--json", "--name", "kern"},
		&out, storyLog{t})
	if err != nil {
		t.Fatalf("lab vm: %v", err)
	}
	t.Logf("guest: Linux %s under %s, up in %.0f s; lab run exited %d", res.Kernel, res.Accel, res.Boot.Seconds(), res.ExitCode)
	var doc struct {
		Scenarios []Result `json:"scenarios"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("lab run --json: %v\n%s", err, out.String())
	}
	if len(doc.Scenarios) != len(Catalog) {
		t.Errorf("%d results for %d scenarios", len(doc.Scenarios), len(Catalog))
	}
	for _, r := range doc.Scenarios {
		t.Run(r.Scenario, func(t *testing.T) {
			d := r.DoctorSays()
			t.Logf("%s WireGuard, underlay %d Mbit/s: doctor %s, first %s, causes %v, probes %v; tunnel/underlay %.2f (%.0f s)",
				r.WireGuard, r.Sizing.RateMbit, d.Status, d.First, d.Causes, r.Probes, r.Before.Worst(), r.Seconds)
			if r.WireGuard != lab.Kernel {
				t.Errorf("played on %q WireGuard, want kernel", r.WireGuard)
			}
			switch {
			case r.Skipped && strings.HasPrefix(r.Why, "does not apply to kernel WireGuard"):
				t.Skip(r.Why)
			case r.Skipped:
				t.Errorf("skipped: %s", r.Why)
			case !r.Pass:
				t.Errorf("failed: %s", r.Why)
			}
		})
	}
}
