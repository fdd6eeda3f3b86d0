package report

// The parts of the page for icmp-burst, shape-sweep and "fix --verify".

import (
	"fmt"

	"github.com/wgperf/wgperf/internal/fix"
	"github.com/wgperf/wgperf/internal/probe/icmpburst"
	"github.com/wgperf/wgperf/internal/probe/shaping"
)

// icmpView is an icmp-burst experiment: failures per target and mode.
type icmpView struct {
	*icmpburst.Result
	Rows  []icmpTarget
	Chart chart
}

type icmpTarget struct {
	Addr                string
	OneShot, Persistent int // failed pings
}

func makeICMPView(r *icmpburst.Result) (*icmpView, error) {
	if r == nil {
		return nil, nil
	}
	v := &icmpView{Result: r}
	var one, pers []float64
	for _, t := range r.Targets {
		row := icmpTarget{Addr: t, OneShot: r.OneShot.PerTarget[t], Persistent: r.Persistent.PerTarget[t]}
		v.Rows = append(v.Rows, row)
		one, pers = append(one, float64(row.OneShot)), append(pers, float64(row.Persistent))
	}
	if len(r.Targets) > 0 {
		v.Chart = chart{Title: "ICMP burst: failed pings per target",
			Caption: "one-shot pings (a process each, as health checkers send them) as outlined vermillion bars, one persistent ping as filled blue bars."}
		var err error
		if v.Chart.SVG, v.Chart.Legend, err = barChart(v.Chart.Title, "failed pings", true, r.Targets,
			[]barSet{{Name: "one-shot pings", Values: one, Hollow: true}, {Name: "persistent ping", Values: pers}}); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// sweepView is a shape-sweep: a row and a bar per cap, and the per-second
// runs charted together.
type sweepView struct {
	*shaping.Result
	Rows   []sweepRow
	Chart  chart
	Charts []chart
}

type sweepRow struct {
	Label       string
	Step        shaping.Step
	Stable      bool
	Recommended bool
}

// capLabel names a sweep step as the text output does.
func capLabel(capMbit int) string {
	if capMbit == 0 {
		return "uncapped"
	}
	return fmt.Sprintf("cap %d Mbit/s", capMbit)
}

func makeSweepView(r *shaping.Result) (*sweepView, error) {
	if r == nil {
		return nil, nil
	}
	v := &sweepView{Result: r}
	var names []string
	var mbit []float64
	var runs []BenchRun
	for _, st := range r.Steps {
		label := capLabel(st.CapMbit)
		v.Rows = append(v.Rows, sweepRow{Label: label, Step: st,
			Stable:      st.Stats.CV <= shaping.StableCV && st.Stats.Collapses == 0,
			Recommended: r.Recommended != 0 && st.CapMbit == r.Recommended})
		names, mbit = append(names, label), append(mbit, st.Stats.Mbit)
		if st.Result != nil {
			runs = append(runs, BenchRun{Path: PathTunnel, Direction: Upload, Streams: 1, Label: label, Result: st.Result})
		}
	}
	if len(names) == 0 {
		return v, nil
	}
	var err error
	v.Chart = chart{Title: "Shape sweep: tunnel throughput per rate cap", Caption: "mean upload through the tunnel under each cap, filled blue bars."}
	if v.Chart.SVG, v.Chart.Legend, err = barChart(v.Chart.Title, "Mbit/s", false, names, []barSet{{Name: "mean Mbit/s", Values: mbit}}); err != nil {
		return nil, err
	}
	if v.Charts, err = runCharts(runs, "Shape sweep: "); err != nil {
		return nil, err
	}
	return v, nil
}

// fixView is what "fix --verify" did: the steps, the figure before and after,
// and a bar per direction before and after.
type fixView struct {
	*fix.Journal
	Chart chart
}

func makeFixView(j *fix.Journal, runs []BenchRun) (*fixView, error) {
	if j == nil {
		return nil, nil
	}
	v := &fixView{Journal: j}
	var before, after []float64
	var names []string
	for _, dir := range []string{Upload, Download} {
		var b, a float64
		seen := false
		for _, r := range runs {
			if r.Path != PathTunnel || r.Direction != dir || r.Result == nil || r.Kind() != "1 stream" {
				continue
			}
			switch r.Label {
			case LabelBefore:
				b, seen = r.Result.Mbit(), true
			case LabelAfter:
				a, seen = r.Result.Mbit(), true
			}
		}
		if seen {
			names, before, after = append(names, "tunnel "+dir), append(before, b), append(after, a)
		}
	}
	if len(names) == 0 {
		return v, nil
	}
	v.Chart = chart{Title: "Tunnel throughput before and after the fix",
		Caption: "one stream each way, before the change as outlined vermillion bars, after it as filled blue bars (a stalled run counts as 0)."}
	var err error
	if v.Chart.SVG, v.Chart.Legend, err = barChart(v.Chart.Title, "Mbit/s", false, names,
		[]barSet{{Name: "before", Values: before, Hollow: true}, {Name: "after", Values: after}}); err != nil {
		return nil, err
	}
	return v, nil
}
