package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/wgperf/wgperf/internal/diagnose"
	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/fix"
	"github.com/wgperf/wgperf/internal/fleet"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/icmpburst"
	"github.com/wgperf/wgperf/internal/probe/mtu"
	"github.com/wgperf/wgperf/internal/probe/shaping"
)

// FromDiagnosis is the report of "wgperf diagnose": findings, hosts and the
// checks that could not run.
func FromDiagnosis(d diagnose.Diagnosis) Document {
	return Document{Title: "wgperf diagnose", Hosts: d.Hosts, Findings: d.Findings, Skipped: d.Skipped}
}

// FromBench is the report of "wgperf bench": the bench matrix, the per-second
// charts of every run and the bench's findings.
func FromBench(rep *bench.Report) Document {
	return Document{
		Title:    fmt.Sprintf("wgperf bench: %s → %s (%s)", rep.Client, rep.Server, rep.TunnelAddr),
		Hosts:    []diagnose.Host{{Host: rep.Client}, {Host: rep.Server}},
		Findings: orEmpty(rep.Findings),
		Runs:     BenchRuns(rep, ""),
		Clients:  rep.Clients,
	}
}

// BenchRuns turns a bench's finished runs into report runs with label; runs
// that failed (no result) are left out.
func BenchRuns(rep *bench.Report, label string) []BenchRun {
	if rep == nil {
		return nil
	}
	var out []BenchRun
	for _, r := range rep.Runs {
		if r.Result == nil {
			continue
		}
		l := label
		if r.Hop > 0 { // --via: a hop's own underlay, told apart from the others'
			l = strings.TrimSpace(fmt.Sprintf("hop %d %s", r.Hop, label))
		}
		out = append(out, BenchRun{Path: r.Path, Direction: r.Direction, Streams: r.Streams, UDPMbit: r.UDPMbit,
			Label: l, Result: r.Result})
	}
	return out
}

// FromMTU is the report of "wgperf mtu": the DF probes, the MSS steps and the
// recommended WireGuard MTU and MSS clamp.
func FromMTU(res *mtu.Result) Document {
	return Document{
		Title:    fmt.Sprintf("wgperf mtu: %s → %s", res.Client, res.Addr),
		Hosts:    []diagnose.Host{{Host: res.Client}},
		Findings: orEmpty(res.Findings),
		MTU:      res,
	}
}

// FromICMPBurst is the report of "wgperf icmp-burst": the pings per mode and
// target, the firewall counters that grew and the findings.
func FromICMPBurst(res *icmpburst.Result) Document {
	return Document{
		Title:     fmt.Sprintf("wgperf icmp-burst: %s → %s", res.Host, strings.Join(res.Targets, ", ")),
		Hosts:     []diagnose.Host{{Host: res.Host}},
		Findings:  orEmpty(res.Findings),
		ICMPBurst: res,
	}
}

// FromShapeSweep is the report of "wgperf shape-sweep": each cap's
// throughput and steadiness, the per-second runs and the recommendation.
func FromShapeSweep(res *shaping.Result) Document {
	return Document{
		Title:    fmt.Sprintf("wgperf shape-sweep: %s %s", res.Client, res.Device),
		Hosts:    []diagnose.Host{{Host: res.Client}},
		Findings: orEmpty(res.Findings),
		Sweep:    res,
	}
}

// FromFix is the report of "wgperf fix --apply --verify": the steps and the
// figure before and after, the findings it fixed, the bench runs of each
// measurement (before, then after; an MTU fix's stalled runs are missing)
// and the path MTU probe of an MTU fix.
func FromFix(j *fix.Journal, fixed []finding.Finding, measured []*bench.Report, path *mtu.Result) Document {
	title := "wgperf fix --verify on " + j.Host.String()
	if j.Verify != nil {
		title += map[bool]string{true: ": kept", false: ": rolled back"}[j.Verify.Kept]
	}
	doc := Document{Title: title, Hosts: []diagnose.Host{{Host: j.Host}}, Findings: orEmpty(fixed), Fix: j, MTU: path}
	for i, rep := range measured {
		label := LabelBefore
		if i > 0 {
			label = LabelAfter
		}
		doc.Runs = append(doc.Runs, BenchRuns(rep, label)...)
	}
	return doc
}

func orEmpty(fs []finding.Finding) []finding.Finding {
	if fs == nil {
		return []finding.Finding{}
	}
	return fs
}

// ReadDocument reads the JSON one of "wgperf bench", "mtu", "diagnose" (also
// with --inventory), "icmp-burst" or "shape-sweep" printed with --json and
// returns its report ("lab run"'s is scenario.ReadReport). A document names
// what it is in "kind", and that decides how it is read (document.Read); one
// without is told by its fields. Malformed input, input over
// document.MaxBytes, a kind that has no report here and JSON that is none of
// them are refused.
func ReadDocument(r io.Reader) (*Document, error) {
	d, err := document.Read(r, "results")
	if err != nil {
		return nil, err
	}
	return FromDocument(d)
}

// FromDocument is ReadDocument of a document already read.
func FromDocument(d *document.Doc) (*Document, error) {
	data, kind := d.Data, string(d.Kind)
	var doc Document
	switch kind {
	case "bench":
		var rep bench.Report
		if err := json.Unmarshal(data, &rep); err != nil {
			return nil, document.JSONError("bench results", err)
		}
		if len(BenchRuns(&rep, "")) == 0 {
			return nil, errors.New("bench results: no finished runs")
		}
		doc = FromBench(&rep)
	case "icmp-burst":
		var res icmpburst.Result
		if err := json.Unmarshal(data, &res); err != nil {
			return nil, document.JSONError("icmp-burst results", err)
		}
		doc = FromICMPBurst(&res)
	case "shape-sweep":
		var res shaping.Result
		if err := json.Unmarshal(data, &res); err != nil {
			return nil, document.JSONError("shape-sweep results", err)
		}
		doc = FromShapeSweep(&res)
	case "mtu":
		var res mtu.Result
		if err := json.Unmarshal(data, &res); err != nil {
			return nil, document.JSONError("mtu results", err)
		}
		doc = FromMTU(&res)
	case "diagnose", "diagnose-fleet":
		var d diagnose.Diagnosis
		if err := json.Unmarshal(data, &d); err != nil {
			return nil, document.JSONError("diagnose results", err)
		}
		// "diagnose --inventory" adds the hosts it could not reach.
		var inv struct {
			Unreachable []fleet.Unreachable `json:"unreachable"`
		}
		if err := json.Unmarshal(data, &inv); err != nil {
			return nil, document.JSONError("diagnose results", err)
		}
		doc = FromDiagnosis(d)
		doc.Unreachable = inv.Unreachable
	case "doctor":
		return nil, errors.New(`results: "doctor" output has no report here: run wgperf doctor with --html FILE`)
	case "snapshot":
		return nil, errors.New("results: a collect snapshot has no report of its own: wgperf diagnose --from FILE --html report.html")
	default:
		return nil, fmt.Errorf("results: %q output has no report here (report reads bench, mtu, diagnose, icmp-burst, shape-sweep and lab run --json; doctor and fix --verify write their own with --html)", kind)
	}
	return &doc, nil
}
