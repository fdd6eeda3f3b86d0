// Package shaping is a threshold sweep: cap the sender's tunnel
// interface with tbf at several rates, hold each long enough for several
// collapse cycles, and recommend the cap that holds steady (Recommend). A
// sender that oscillates uncapped (a CPU or queue saturating) is steady
// capped just below its knee, often faster on average too; when the steady
// cap is slower than the uncapped mean the recommendation says so, and the
// user chooses (Prefer).
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
	"reflect"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target"
)

// Def is the cap sweep, as doctor's targeted probe (listed in internal/probes).
var Def = probe.Def{Name: catalog.ProbeShaping, FarEnd: true, Raises: Raises,
	Doc:    "tbf caps below the level the tunnel climbed to on its sender, each held for 60 s or three cycles (--short-sweep: two) against the uncapped run: when throughput collapses in cycles of the tunnel's own",
	Report: "shaping", Result: reflect.TypeFor[*Result](),
	Schema: "shape-sweep.schema.json#/$defs/result"}

// Config is one sweep: Client sends through Device to Server's TunnelAddr.
type Config struct {
	Client, Server target.Target
	TunnelAddr     string
	Device         string // the client's WireGuard interface
	// Caps are the rates tried, Mbit/s; none: bench.CapsBelow the uncapped
	// run's high level.
	Caps []int
	// Seconds is the uncapped run's length and the least each cap is held
	// (0: FullHoldSeconds); Hold says how long each cap is held.
	Seconds, Omit int
	Port          int
	Options
	Progress io.Writer
	// Uncapped, when set, is a run already made without a cap (doctor's long
	// run, which showed the collapses): the sweep measures only the caps.
	Uncapped *Step
}

// Options are the user's two choices: how long a cap is held and which cap
// wins when the steadiest is slower than the uncapped mean.
type Options struct {
	// Short holds each cap for two of the uncapped run's cycles (Hold),
	// not 60 s or three: a cap that collapses less often than that can
	// pass as steady.
	Short bool `json:"short,omitempty"`
	// Prefer is PreferSteady ("" too) or PreferMean.
	Prefer Prefer `json:"prefer,omitempty"`
}

// Step is one measured rate cap (0: uncapped).
type Step struct {
	CapMbit int         `json:"cap_mbit"`
	Stats   bench.Stats `json:"stats"`
	// Seconds are the whole seconds measured, MinMbit the slowest of them,
	// PeriodSeconds the mean time between collapses (0 with fewer than two).
	Seconds       int           `json:"seconds"`
	MinMbit       float64       `json:"min_mbit"`
	PeriodSeconds float64       `json:"period_seconds,omitempty"`
	Result        *iperf.Result `json:"result"`
}

// Measured is the step a run under capMbit (0: none) made. It is pure.
func Measured(capMbit int, r *iperf.Result) Step {
	s := Step{CapMbit: capMbit, Result: r}
	if r == nil {
		return s
	}
	c := bench.CyclesOf(r)
	s.Stats, s.Seconds, s.PeriodSeconds = bench.Summarise(r), c.Seconds, c.PeriodSeconds
	first := true
	for _, iv := range r.Measured() {
		if iv.End-iv.Start >= 0.5 && (first || iv.Mbit < s.MinMbit) {
			s.MinMbit, first = iv.Mbit, false
		}
	}
	return s
}

// Result is the sweep and its recommendation.
type Result struct {
	Client      target.Spec `json:"client"`
	Device      string      `json:"device"`
	Previous    string      `json:"previous_qdisc"` // as tc printed it
	Steps       []Step      `json:"steps"`
	Recommended int         `json:"recommended_cap_mbit"` // 0: no cap
	// TradeOff: the recommended cap is steadier but slower than the
	// uncapped mean (Prefer steady); HoldSeconds is how long each cap ran.
	TradeOff    bool              `json:"trade_off,omitempty"`
	Options     Options           `json:"options"`
	HoldSeconds int               `json:"hold_seconds"`
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
	if c.Seconds == 0 || !c.Short {
		c.Seconds = max(c.Seconds, FullHoldSeconds)
	}
	if c.Prefer == "" {
		c.Prefer = PreferSteady
	}
	res := &Result{Client: target.Of(c.Client), Device: c.Device, Options: c.Options}
	out, err := c.Client.Run(ctx, "tc", "qdisc", "show", "dev", c.Device)
	if err != nil {
		if target.IsNotFound(err) {
			return nil, fmt.Errorf("tc is not installed on %s (apt-get install iproute2)", c.Client)
		}
		return nil, err
	}
	prev, _ := parseRootQdisc(strings.NewReader(string(out)))
	res.Previous = strings.TrimSpace(string(out))
	un := c.Uncapped
	if un == nil {
		step, err := measure(ctx, c, prev, 0, c.Seconds)
		if err != nil {
			return res, err
		}
		un = &step
	}
	res.Steps = append(res.Steps, *un)
	caps := c.Caps
	if len(caps) == 0 {
		if caps = bench.CapsBelow(bench.CyclesOf(un.Result).HighMbit); len(caps) == 0 {
			return res, fmt.Errorf("the uncapped run carried too little to size caps from (%.1f Mbit/s): give --caps", un.Stats.Mbit)
		}
	}
	res.HoldSeconds = Hold(un.PeriodSeconds, c.Short, c.Seconds)
	for _, capMbit := range caps {
		step, err := measure(ctx, c, prev, capMbit, res.HoldSeconds)
		if err != nil {
			return res, err
		}
		res.Steps = append(res.Steps, step)
	}
	res.Recommended = Recommend(res.Steps, c.Prefer)
	res.TradeOff = tradeOff(res)
	res.Findings = Findings(res)
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

func measure(ctx context.Context, c Config, prev qdisc, capMbit, seconds int) (step Step, err error) {
	step.CapMbit = capMbit
	if capMbit > 0 {
		argv, err := remedy.TBFCommand(c.Device, fmt.Sprintf("%dmbit", capMbit))
		if err != nil {
			return step, err
		}
		if _, err := c.Client.Run(ctx, argv[0], argv[1:]...); err != nil {
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
		fmt.Fprintf(c.Progress, "%s on %s for %d s... ", label, c.Device, seconds)
	}
	r, err := iperf.Run(ctx, c.Client, c.Server, iperf.Test{Addr: c.TunnelAddr, Port: c.Port, Seconds: seconds, Omit: c.Omit})
	if err != nil {
		return step, err
	}
	step = Measured(capMbit, r)
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, "%.1f Mbit/s (slowest second %.1f), %d retransmits, %d collapses\n", step.Stats.Mbit, step.MinMbit, step.Stats.Retransmits, step.Stats.Collapses)
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
