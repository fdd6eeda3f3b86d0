package doctor

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe"
)

// This file is how doctor's plan runs: a Step declares what it needs (the far
// end, a bench that measured, a finding) and what it may raise; rounds of
// steps run in order and are judged together. The plan itself, which steps
// and in what order, is Plan (plansteps.go).

// Needs are what a step needs before it can run.
type Needs struct {
	// FarEnd: the other end of the tunnel (--server).
	FarEnd bool
	// Bench: a bench that measured the tunnel (Measured.Benched).
	Bench bool
	// Unreachable: a bench that could not cross the tunnel at all.
	Unreachable bool
	// Found: a finding of one of these IDs among those found so far.
	Found []catalog.ID
}

// Step is one part of doctor's plan: the bench, an analysis of what it found
// (a finding judged against the bench), or a targeted probe of probes.All.
type Step struct {
	Name string
	// Doc says what the step does and what it can explain, one line.
	Doc   string
	Needs Needs
	// Raises are the findings the step may add (a probe's are its
	// definition's). A step that adds another is recorded (Report.undeclared)
	// and fails the tests that play the plan.
	Raises []catalog.ID
	// Probe is a targeted probe's definition, nil for the bench and the
	// analyses; its step runs it with measure and records the run in the
	// report's probes.
	Probe *probe.Def
	// when plans the step on what was found so far: ok false skips it; a
	// probe's plan says why it runs and on what. nil runs an analysis
	// whenever its needs are met, and a probe when its round's start planned
	// it.
	when func(p *play) (ProbePlan, bool)
	// analyse is the bench's or an analysis' work on what was found.
	analyse func(ctx context.Context, p *play)
	// measure runs the targeted probe on doctor's evidence.
	measure runner
}

// runner runs one targeted probe on what doctor measured so far and returns
// its findings and its line in the report.
type runner func(r *Report, ctx context.Context, c *Config, p ProbePlan, snaps []*facts.Snapshot) ([]finding.Finding, string, error)

// Round is steps that run in order and are judged together: the findings
// merged and ranked, the status set.
type Round struct {
	Name  string
	Steps []Step
	// start prepares the round on the judged state before its steps: the
	// targeted probes' plan (PlanProbes), what cannot be judged.
	start func(p *play)
	// Always judges the round whether or not a step of it ran.
	Always bool
}

// play is one doctor run going through the plan.
type play struct {
	r     *Report
	c     *Config
	snaps []*facts.Snapshot
	found []finding.Finding
	// planned are the round's targeted probes, as its start planned them.
	planned []ProbePlan
}

// meets says whether what the run holds now meets n.
func (p *play) meets(n Needs) bool {
	switch {
	case n.FarEnd && p.c.Server == nil,
		n.Bench && !p.r.Measured.Benched,
		n.Unreachable && p.r.Unreachable == nil:
		return false
	case len(n.Found) > 0:
		return slices.ContainsFunc(p.found, func(f finding.Finding) bool { return slices.Contains(n.Found, f.ID) })
	}
	return true
}

// run plays the rounds in order.
func (p *play) run(ctx context.Context, rounds []Round) {
	for _, rd := range rounds {
		p.planned = nil
		if rd.start != nil {
			rd.start(p)
		}
		ran := false
		for _, st := range rd.Steps {
			if p.step(ctx, st) {
				ran = true
			}
		}
		if rd.Always || ran {
			p.r.judge(p.found)
		}
	}
}

// step runs one step when its needs are met and its plan calls for it, and
// holds what it added to its Raises; it reports whether it ran.
func (p *play) step(ctx context.Context, st Step) bool {
	needs := st.Needs
	if st.Probe != nil {
		needs.FarEnd = needs.FarEnd || st.Probe.FarEnd
	}
	if !p.meets(needs) {
		return false
	}
	var pp ProbePlan
	if st.Probe != nil && st.when == nil {
		i := slices.IndexFunc(p.planned, func(x ProbePlan) bool { return x.Probe == st.Probe.Name })
		if i < 0 {
			return false
		}
		pp = p.planned[i]
	} else if st.when != nil {
		var ok bool
		if pp, ok = st.when(p); !ok {
			return false
		}
	}
	before := map[causeKey]bool{}
	for _, f := range p.found {
		before[key(f)] = true
	}
	if st.Probe != nil {
		pp.Probe = st.Probe.Name
		p.found = append(p.found, p.r.probe(ctx, p.c, pp, st.measure, p.snaps)...)
	} else {
		st.analyse(ctx, p)
	}
	for _, f := range p.found {
		if !before[key(f)] && !slices.Contains(st.Raises, f.ID) {
			p.r.undeclared = append(p.r.undeclared, fmt.Sprintf("step %s raised %s, which its Raises do not declare", st.Name, f.ID))
		}
	}
	return true
}

// probe runs one targeted probe and returns what it proved; the run, its
// line and its time go in the report's probes.
func (r *Report) probe(ctx context.Context, c *Config, p ProbePlan, measure runner, snaps []*facts.Snapshot) []finding.Finding {
	c.progress("%s: %s", p.Probe, p.Why)
	run := ProbeRun{ProbePlan: p}
	start := time.Now()
	fs, summary, err := measure(r, ctx, c, p, snaps)
	run.Summary = summary
	run.Seconds = time.Since(start).Seconds()
	if err != nil {
		run.Error = err.Error()
		r.NotJudged = append(r.NotJudged, string(p.Probe)+" could not run: "+err.Error())
	}
	r.Probes = append(r.Probes, run)
	return fs
}

// Replay plays again, on the tunnel as it is now, the targeted probes named
// that doctor's plan ran, each as it was planned (the evidence that called
// for it, its targets, its directions) and through the same step: the lab's
// recheck after a fix. It returns the runs and what they proved, and fails
// for a probe the plan did not run or that could not run again; the report
// itself is left as it was.
func (r *Report) Replay(ctx context.Context, names []catalog.Probe) ([]ProbeRun, []finding.Finding, error) {
	again := *r
	again.Probes, again.NotJudged = nil, nil
	c := r.cfg
	var found []finding.Finding
	for _, name := range names {
		i := slices.IndexFunc(r.Probes, func(p ProbeRun) bool { return p.Probe == name })
		st, ok := stepOf(name)
		if i < 0 || !ok {
			return again.Probes, found, fmt.Errorf("doctor's plan did not run %s: nothing to play again", name)
		}
		found = append(found, again.probe(ctx, &c, r.Probes[i].ProbePlan, st.measure, r.snaps)...)
		if last := again.Probes[len(again.Probes)-1]; last.Error != "" {
			return again.Probes, found, fmt.Errorf("%s: %s", name, last.Error)
		}
	}
	return again.Probes, found, nil
}

// stepOf is the plan's step of a targeted probe.
func stepOf(name catalog.Probe) (Step, bool) {
	for _, rd := range Plan() {
		for _, st := range rd.Steps {
			if st.Probe != nil && st.Probe.Name == name {
				return st, true
			}
		}
	}
	return Step{}, false
}
