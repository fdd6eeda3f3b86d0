package doctor

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/testutil"
)

// openPort is the one port besides WireGuard's that B lets in, as a NAT
// that forwards a second port would.
const openPort = 5300

// onlyWireGuardIn drops everything arriving on B's underlay except
// WireGuard's port and openPort: a far end behind a NAT or firewall that
// forwards the tunnel alone.
var onlyWireGuardIn = "add table inet blocked\n" +
	"add chain inet blocked in { type filter hook input priority 0; policy accept; }\n" +
	"add rule inet blocked in iifname \"eth0\" udp dport " + strconv.Itoa(lab.WGPort) + " accept\n" +
	"add rule inet blocked in iifname \"eth0\" tcp dport " + strconv.Itoa(openPort) + " accept\n" +
	"add rule inet blocked in iifname \"eth0\" ct state established,related accept\n" +
	"add rule inet blocked in iifname \"eth0\" counter drop\n"

// Where only WireGuard's port reaches the far end, the underlay baseline
// cannot connect: doctor still measures the tunnel, says why the baseline is
// missing in one line and judges nothing against it; with --underlay-port
// naming a port the far end lets in, the baseline runs there and doctor
// judges again. Before, the bench stopped at the refused baseline.
func TestDoctorBlockedBaselineLab(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "iperf3", "nft")
	l := labtest.Up(t, labtest.Sized(t, lab.Config{Name: "drbb", Underlay: lab.Shape{RateMbit: 200}}))
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if _, err := l.Target("b").RunInput(ctx, []byte(onlyWireGuardIn), "nft", "-f", "-"); err != nil {
		t.Fatal(err)
	}
	run := func(c Config) *Report {
		t.Helper()
		c.Client, c.Server, c.Seconds = l.Target("a"), l.Target("b"), 2
		rep, err := Run(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		noUndeclared(t, rep)
		var text bytes.Buffer
		if err := rep.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		t.Logf("\n%s", text.String())
		return rep
	}

	rep := run(Config{})
	underlay := l.Node("b").UnderlayAddr
	want := "underlay baseline blocked: iperf3 to " + underlay + ":5299"
	if rep.Status != StatusUnjudged || !strings.Contains(strings.Join(rep.NotJudged, "\n"), want) || !strings.Contains(rep.Threshold, "blocked") {
		t.Errorf("status %s, threshold %q, not judged %q; want unjudged and %q", rep.Status, rep.Threshold, rep.NotJudged, want)
	}
	if m := rep.Measured; m.Up.Tunnel <= 0 || m.Down.Tunnel <= 0 || m.Up.Underlay != 0 {
		t.Errorf("measured %+v: the tunnel both ways, no underlay", m)
	}

	rep = run(Config{UnderlayPort: openPort})
	if rep.Measured.UnderlayBlocked != "" || rep.Status == StatusUnjudged || rep.Measured.Up.Underlay <= 0 || rep.Measured.Down.Underlay <= 0 {
		t.Errorf("with --underlay-port %d: status %s, measured %+v", openPort, rep.Status, rep.Measured)
	}
}
