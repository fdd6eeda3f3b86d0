package lab

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// PathCycleFlag is the link on R whose presence keeps the path
// cycling: deleting it ("ip link del dev pathcycle" on R) is the path's
// owner steadying the link. The loop looks for it every second and, once it
// is gone, puts the full rate back and ends.
const PathCycleFlag = "pathcycle"

// defaultPathCycleLowPct is the low phase's share of the underlay's rate:
// 200 → 80 Mbit/s, a fall well past bench.CollapseFraction of the high
// level, as the remote users case's 180 → 90.
const defaultPathCycleLowPct = 40

// pathCycleDevices are R's shaped links of a site-to-site lab: both ways
// cycle together, so the long run finds the cycle in whichever direction
// the bench's phases made it pick.
var pathCycleDevices = []string{"eth-a", "eth-b"}

// PathCycleLowMbit is the cycling path's low phase (Config.PathCycleSeconds),
// in Mbit/s.
func (cfg Config) PathCycleLowMbit() int {
	pct := cfg.PathCycleLowPct
	if pct == 0 {
		pct = defaultPathCycleLowPct
	}
	return max(1, cfg.Underlay.RateMbit*pct/100)
}

// pathCycleScript is the shell loop that cycles the path: pathCycleDevices'
// tbf at low Mbit/s for half of period seconds, at high for the other half,
// while PathCycleFlag exists. It checks the flag every second and after each
// change, so a flag deleted at any moment leaves the full rate within a
// second and never a stray low phase. It is pure.
func pathCycleScript(high, low, period int) string {
	shape := func(mbit int) string {
		var cmds []string
		for _, dev := range pathCycleDevices {
			cmds = append(cmds, shell.Join("tc", append([]string{"qdisc", "change", "dev", dev, "root", "tbf"}, tbfArgs(mbit)...)...))
		}
		return strings.Join(cmds, "; ")
	}
	half := strconv.Itoa(pathCycleHalf(period))
	return strings.Join([]string{
		"on() { ip link show dev " + PathCycleFlag + " >/dev/null 2>&1; }",
		"steady() { " + shape(high) + "; exit 0; }",
		"while :; do",
		"  for mbit in " + strconv.Itoa(low) + " " + strconv.Itoa(high) + "; do",
		"    on || steady",
		"    if [ $mbit = " + strconv.Itoa(low) + " ]; then " + shape(low) + "; else " + shape(high) + "; fi",
		"    i=0; while [ $i -lt " + half + " ]; do on || steady; sleep 1; i=$((i+1)); done",
		"  done",
		"done",
	}, "\n")
}

// pathCycleHalf is each phase's length, in whole seconds.
func pathCycleHalf(period int) int { return max(1, period/2) }

// startPathCycle makes the link under the tunnel cycle (Config.
// PathCycleSeconds): PathCycleFlag on R and the loop, detached in R's
// namespace like the lab's other elements (Down ends it with them).
func (l *Lab) startPathCycle(ctx context.Context) error {
	cfg := l.Config
	if cfg.Topology != SiteToSite || cfg.Underlay.RateMbit <= 0 || cfg.Bursts {
		return fmt.Errorf("a cycling path needs a site-to-site lab with a shaped underlay (--rate) and no bursts")
	}
	if cfg.PathCycleSeconds < 2 || cfg.PathCycleLowPct < 0 || cfg.PathCycleLowPct >= 100 {
		return fmt.Errorf("path cycle of %d s down to %d%%: want at least 2 s and a percent in 1..99", cfg.PathCycleSeconds, cfg.PathCycleLowPct)
	}
	r := l.Nodes["r"]
	// The flag is a veth pair, as the lab's links are: a dummy link needs a
	// module this machine's kernel lacks.
	if _, err := l.Target("r").Run(ctx, "ip", "link", "add", "dev", PathCycleFlag, "type", "veth", "peer", "name", PathCycleFlag+"0"); err != nil {
		return err
	}
	script := fmt.Sprintf("%s </dev/null >>%s 2>&1 & echo $!",
		nodeSession("sh", "-c", pathCycleScript(cfg.Underlay.RateMbit, cfg.PathCycleLowMbit(), cfg.PathCycleSeconds)),
		shell.Join(l.logPath(r, "pathcycle")))
	out, err := target.Netns(r.Netns).Run(ctx, "sh", "-c", script)
	if err != nil {
		return err
	}
	r.PathCyclePID, err = strconv.Atoi(strings.TrimSpace(string(out)))
	return err
}
