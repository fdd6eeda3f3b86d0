// Package shaping is a threshold sweep: cap the sender's tunnel
// interface with tbf at several rates, measure each, and recommend the cap with
// the best stable throughput. A sender that oscillates uncapped (a CPU or queue
// saturating) often moves more data capped just below its knee.
//
// The cap is always removed after each run, also on error or interrupt, and a
// root qdisc that was there before is put back.
package shaping

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target"
)

// Config is one sweep: Client sends through Device to Server's TunnelAddr.
type Config struct {
	Client, Server target.Target
	TunnelAddr     string
	Device         string // the client's WireGuard interface
	Caps           []int  // Mbit/s
	Seconds, Omit  int
	Port           int
	Progress       io.Writer
	// Uncapped, when set, is a run already made without a cap (doctor's long
	// run, which showed the collapses): the sweep measures only the caps.
	Uncapped *Step
}

// Step is one measured rate cap (0: uncapped).
type Step struct {
	CapMbit int           `json:"cap_mbit"`
	Stats   bench.Stats   `json:"stats"`
	Result  *iperf.Result `json:"result"`
}

// Result is the sweep and its recommendation.
type Result struct {
	Client      string            `json:"client"`
	Device      string            `json:"device"`
	Previous    string            `json:"previous_qdisc"` // as tc printed it
	Steps       []Step            `json:"steps"`
	Recommended int               `json:"recommended_cap_mbit"` // 0: no cap
	Seconds     float64           `json:"seconds"`
	Findings    []finding.Finding `json:"findings"`
}

// MarshalJSON writes empty lists as [], never null.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	p := plain(r)
	if p.Steps == nil {
		p.Steps = []Step{}
	}
	if p.Findings == nil {
		p.Findings = []finding.Finding{}
	}
	return json.Marshal(p)
}

// Stability limits: a run is stable when its per-second rate varies by at
// most StableCV and it never collapses.
const StableCV = 0.1

// Recommend picks the cap that cures: the fastest stable cap whose rate beats
// the uncapped mean, or, if none of those is stable, the one that varies
// least (and less than uncapped). A cap that steadies the tunnel by slowing it
// below its own average is no cure: the remote users case's cap made its
// tunnel steadier and faster on average. Uncapped wins ties, since a cap is a
// change; 0 is no cap. It is pure.
func Recommend(steps []Step) int {
	floor, unCV, unStable := -1.0, -1.0, false
	for _, s := range steps {
		if s.CapMbit == 0 {
			floor, unCV, unStable = s.Stats.Mbit, s.Stats.CV, stable(s)
		}
	}
	best, bestMbit, bestCV := 0, -1.0, unCV
	for _, s := range steps {
		if s.CapMbit > 0 && s.Stats.Mbit > floor && stable(s) && s.Stats.Mbit > bestMbit {
			best, bestMbit = s.CapMbit, s.Stats.Mbit
		}
	}
	if best > 0 {
		// Prefer no cap when uncapped is stable and within 5% of the best.
		if unStable && floor >= 0.95*bestMbit {
			return 0
		}
		return best
	}
	for _, s := range steps {
		if s.CapMbit > 0 && s.Stats.Mbit > floor && (bestCV < 0 || s.Stats.CV < bestCV) {
			best, bestCV = s.CapMbit, s.Stats.CV
		}
	}
	return best
}

// stable: a run whose per-second rate varies by at most StableCV and that
// never collapses.
func stable(s Step) bool { return s.Stats.CV <= StableCV && s.Stats.Collapses == 0 }

// qdisc is a root qdisc as "tc qdisc show dev X" prints it.
type qdisc struct {
	Kind, Handle, Options string
}

// parseRootQdisc reads "tc qdisc show dev X" and returns its root qdisc.
func parseRootQdisc(r io.Reader) (qdisc, bool) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// qdisc KIND HANDLE root [refcnt N] OPTIONS...
		if len(f) < 4 || f[0] != "qdisc" || f[3] != "root" {
			continue
		}
		rest := f[4:]
		if len(rest) >= 2 && rest[0] == "refcnt" {
			rest = rest[2:]
		}
		return qdisc{Kind: f[1], Handle: f[2], Options: strings.Join(rest, " ")}, true
	}
	return qdisc{}, false
}

// userAdded reports whether someone configured the qdisc: the kernel's default
// root qdiscs carry handle 0:.
func (q qdisc) userAdded() bool { return q.Handle != "" && q.Handle != "0:" }

// RestoreCommands are the tc commands that put q back as the root qdisc on dev,
// most faithful first.
func restoreCommands(dev string, q qdisc) [][]string {
	if !q.userAdded() {
		return [][]string{{"tc", "qdisc", "del", "dev", dev, "root"}}
	}
	full := append([]string{"tc", "qdisc", "replace", "dev", dev, "root", "handle", q.Handle, q.Kind}, strings.Fields(q.Options)...)
	return [][]string{full, {"tc", "qdisc", "replace", "dev", dev, "root", "handle", q.Handle, q.Kind}}
}

// Run measures uncapped, then each cap, restoring the interface after each.
func Run(ctx context.Context, c Config) (*Result, error) {
	start := time.Now()
	if c.Device == "" {
		return nil, fmt.Errorf("no tunnel interface to shape on %s", c.Client)
	}
	if c.Seconds == 0 {
		c.Seconds = 10
	}
	res := &Result{Client: c.Client.String(), Device: c.Device}
	out, err := c.Client.Run(ctx, "tc", "qdisc", "show", "dev", c.Device)
	if err != nil {
		if target.IsNotFound(err) {
			return nil, fmt.Errorf("tc is not installed on %s (apt-get install iproute2)", c.Client)
		}
		return nil, err
	}
	prev, _ := parseRootQdisc(strings.NewReader(string(out)))
	res.Previous = strings.TrimSpace(string(out))
	caps := append([]int{0}, c.Caps...)
	if c.Uncapped != nil {
		res.Steps = append(res.Steps, *c.Uncapped)
		caps = c.Caps
	}
	for _, capMbit := range caps {
		step, err := measure(ctx, c, prev, capMbit)
		if err != nil {
			return res, err
		}
		res.Steps = append(res.Steps, step)
	}
	res.Recommended = Recommend(res.Steps)
	res.Findings = Findings(res)
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

func measure(ctx context.Context, c Config, prev qdisc, capMbit int) (step Step, err error) {
	step.CapMbit = capMbit
	if capMbit > 0 {
		rate := fmt.Sprintf("%dmbit", capMbit)
		if _, err := c.Client.Run(ctx, "tc", "qdisc", "replace", "dev", c.Device, "root", "tbf", "rate", rate, "burst", "1mb", "latency", "400ms"); err != nil {
			return step, err
		}
		defer func() {
			// Restore even when ctx is cancelled (Ctrl-C): use a fresh one.
			rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if rerr := restore(rctx, c.Client, c.Device, prev); rerr != nil && err == nil {
				err = rerr
			}
		}()
	}
	if c.Progress != nil {
		label := "uncapped"
		if capMbit > 0 {
			label = fmt.Sprintf("cap %d Mbit/s", capMbit)
		}
		fmt.Fprintf(c.Progress, "%s on %s... ", label, c.Device)
	}
	r, err := iperf.Run(ctx, c.Client, c.Server, iperf.Test{Addr: c.TunnelAddr, Port: c.Port, Seconds: c.Seconds, Omit: c.Omit})
	if err != nil {
		return step, err
	}
	step.Result, step.Stats = r, bench.Summarise(r)
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, "%.1f Mbit/s, %d retransmits, cv %.2f\n", step.Stats.Mbit, step.Stats.Retransmits, step.Stats.CV)
	}
	return step, nil
}

func restore(ctx context.Context, t target.Target, dev string, prev qdisc) error {
	var lastErr error
	for _, argv := range restoreCommands(dev, prev) {
		if _, err := t.Run(ctx, argv[0], argv[1:]...); err == nil {
			return nil
		} else {
			lastErr = err
		}
	}
	return fmt.Errorf("could not restore the root qdisc of %s on %s (was: %s %s %s): %w", dev, t, prev.Kind, prev.Handle, prev.Options, lastErr)
}

// Findings is throughput.collapse-knee with a tbf cap when the sweep found
// one that cures (Recommend: steadier, and faster than the uncapped mean):
// the knee is the cause, the cap its fix. It is pure.
func Findings(r *Result) []finding.Finding {
	if r.Recommended == 0 || len(r.Steps) == 0 {
		return nil
	}
	var un, capped Step
	for _, s := range r.Steps {
		if s.CapMbit == 0 {
			un = s
		}
		if s.CapMbit == r.Recommended {
			capped = s
		}
	}
	tbf, err := remedy.TBF(r.Device, strconv.Itoa(r.Recommended)+"mbit")
	return []finding.Finding{{
		ID: check.ThroughputCollapseKnee, Severity: finding.Warning, Host: r.Client, Interface: r.Device,
		Title: fmt.Sprintf("Capped at %d Mbit/s the tunnel is steadier and faster: %.1f Mbit/s (cv %.2f) vs a mean of %.1f uncapped (cv %.2f, %d collapses)",
			r.Recommended, capped.Stats.Mbit, capped.Stats.CV, un.Stats.Mbit, un.Stats.CV, un.Stats.Collapses),
		Detail: "Uncapped, the sender overruns something on the path and the rate collapses and recovers; a token bucket just below the knee " +
			"keeps it steady and moves more on average than the collapsing tunnel did.",
		Evidence: []finding.Evidence{
			finding.Evidence{Source: "iperf3", Key: "uncapped: Mbit/s, cv, retransmits", Value: fmt.Sprintf("%.1f, %.2f, %d", un.Stats.Mbit, un.Stats.CV, un.Stats.Retransmits), Threshold: fmt.Sprintf("cv <= %.2f", StableCV)}.Of(un.Stats.CV, finding.Ratio),
			finding.Evidence{Source: "iperf3", Key: fmt.Sprintf("cap %d Mbit/s: Mbit/s, cv, retransmits", r.Recommended), Value: fmt.Sprintf("%.1f, %.2f, %d", capped.Stats.Mbit, capped.Stats.CV, capped.Stats.Retransmits)}.Of(capped.Stats.CV, finding.Ratio),
		},
		Fixes: remedy.Fixes(fmt.Sprintf("Cap %s at %d Mbit/s", r.Device, r.Recommended), tbf, err),
	}}
}
