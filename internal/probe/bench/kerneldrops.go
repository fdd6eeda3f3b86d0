package bench

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/drops"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// This file holds what the kernel's drop reasons add to a bench: a sampler
// on each end (Config.Drops), the counts of every run, the notes that name
// them and the evidence and findings they support.

// Samplers opens a drop sampler for a host (drops.ForTarget in the commands).
type Samplers func(context.Context, target.Target) drops.Sampler

// KernelDropWarning is how many packets dropped for reasons no other finding
// covers, over the tunnel runs on one host, make kernel.drops a warning.
const KernelDropWarning = 1000

// unspecified is the reason of a drop the kernel gave none for.
const unspecified = "NOT_SPECIFIED"

// maxDropNotes is how many reasons a run's notes name per host.
const maxDropNotes = 3

// endSamplers are the two ends' samplers of one bench.
type endSamplers struct{ client, server drops.Sampler }

func openSamplers(ctx context.Context, c Config) *endSamplers {
	if c.Drops == nil {
		return nil
	}
	var e endSamplers
	done := make(chan struct{})
	go func() { defer close(done); e.server = c.Drops(ctx, c.Server) }()
	e.client = c.Drops(ctx, c.Client)
	<-done
	return &e
}

func (e *endSamplers) statuses() []drops.Status {
	if e == nil {
		return nil
	}
	return []drops.Status{e.client.Status(), e.server.Status()}
}

func (e *endSamplers) Close() {
	if e != nil {
		e.client.Close()
		e.server.Close()
	}
}

// snapshot takes both ends' counts; a sampler that fails gives none.
func (e *endSamplers) snapshot(ctx context.Context) [2]drops.Snapshot {
	var out [2]drops.Snapshot
	if e == nil {
		return out
	}
	done := make(chan struct{})
	go func() { defer close(done); out[1], _ = e.server.Snapshot(ctx) }()
	out[0], _ = e.client.Snapshot(ctx)
	<-done
	return out
}

// record keeps what grew on each end during a run.
func (e *endSamplers) record(run *Run, before, after [2]drops.Snapshot) {
	if e == nil {
		return
	}
	run.ClientDrops = drops.Delta(before[0], after[0])
	run.ServerDrops = drops.Delta(before[1], after[1])
}

// kernelDropNotes names the biggest reasons each end dropped for during a
// run: "receiver (netns:b) kernel dropped 9,312 packets: SOCKET_RCVBUFF in
// __udp_enqueue_schedule_skb".
func kernelDropNotes(run *Run) []string {
	recv, send := run.ServerDrops, run.ClientDrops
	rh, sh := run.Server.Host, run.Client.Host
	if run.Direction == Download {
		recv, send, rh, sh = send, recv, sh, rh
	}
	var out []string
	for _, end := range []struct {
		role   string
		host   target.Spec
		counts []drops.Count
	}{{"receiver", rh, recv}, {"sender", sh, send}} {
		n := 0
		for _, c := range drops.ByReason(withoutNoise(end.counts)) {
			if n == maxDropNotes {
				continue
			}
			n++
			out = append(out, fmt.Sprintf("%s (%s) kernel dropped %s packets: %s", end.role, end.host, Commas(int64(c.Packets)), shell.Comment(where(c))))
		}
	}
	return out
}

// where is a count's reason with the function and interface it happened in.
func where(c drops.Count) string {
	s := c.Reason
	if c.Function != "" {
		s += " in " + c.Function
	}
	if c.Interface != "" {
		s += " on " + c.Interface
	}
	return s
}

// hostDrop is one reason's drops on one host over the tunnel runs.
type hostDrop struct {
	host    target.Spec
	reason  string
	packets uint64
	top     drops.Count // the biggest site
	runs    []string    // "download, receiver"
}

// tunnelDrops sums each host's drops over the tunnel runs, by reason.
func tunnelDrops(r *Report) []hostDrop {
	type key struct {
		host   target.Key
		reason string
	}
	at := map[key]*hostDrop{}
	var order []key
	for _, run := range r.Runs {
		if run.Path != PathTunnel {
			continue
		}
		for _, end := range []struct {
			host   target.Spec
			counts []drops.Count
			sender bool
		}{{run.Client.Host, run.ClientDrops, run.Direction == Upload}, {run.Server.Host, run.ServerDrops, run.Direction == Download}} {
			role := "receiver"
			if end.sender {
				role = "sender"
			}
			for _, c := range drops.ByReason(withoutNoise(end.counts)) {
				if end.host.IsZero() {
					continue
				}
				k := key{end.host.Key(), c.Reason}
				d := at[k]
				if d == nil {
					d = &hostDrop{host: end.host, reason: c.Reason}
					at[k] = d
					order = append(order, k)
				}
				d.packets += c.Packets
				if c.Packets > d.top.Packets {
					d.top = c
				}
				if w := run.Direction + ", " + role; !slices.Contains(d.runs, w) {
					d.runs = append(d.runs, w)
				}
			}
		}
	}
	out := make([]hostDrop, 0, len(order))
	for _, k := range order {
		out = append(out, *at[k])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].packets > out[j].packets })
	return out
}

func (d hostDrop) evidence() finding.Evidence {
	return finding.Evidence{Source: "kernel drop reason", Key: fmt.Sprintf("%s during the tunnel runs (%s)", shell.Comment(where(d.top)), strings.Join(d.runs, "; ")),
		Value: Commas(int64(d.packets)) + " packets"}.Of(float64(d.packets), finding.Packets)
}

// KernelDropFindings adds the kernel's drop reasons to fs, the findings
// about the bench's hosts: a reason a finding on the same host explains
// (check.DropReasonFindings) becomes evidence on it; the others make one
// kernel.drops finding per host. fs is not changed; kernel.drops findings in
// it are replaced. It is pure.
func KernelDropFindings(r *Report, fs []finding.Finding) []finding.Finding {
	out := make([]finding.Finding, 0, len(fs))
	for _, f := range fs {
		if f.ID != catalog.KernelDrops {
			f.Evidence = slices.Clone(f.Evidence)
			out = append(out, f)
		}
	}
	if r == nil {
		return out
	}
	uncovered := map[target.Key][]hostDrop{}
	var hosts []target.Spec
	for _, d := range tunnelDrops(r) {
		covered := false
		for i := range out {
			if out[i].Host.Same(d.host) && slices.Contains(check.DropReasonFindings[d.reason], out[i].ID) {
				if e := d.evidence(); !slices.Contains(out[i].Evidence, e) {
					out[i].Evidence = append(out[i].Evidence, e)
				}
				covered = true
			}
		}
		if !covered {
			if uncovered[d.host.Key()] == nil {
				hosts = append(hosts, d.host)
			}
			uncovered[d.host.Key()] = append(uncovered[d.host.Key()], d)
		}
	}
	for _, h := range hosts {
		out = append(out, kernelDropsFinding(h, uncovered[h.Key()]))
	}
	return out
}

func kernelDropsFinding(host target.Spec, ds []hostDrop) finding.Finding {
	var total uint64
	var names []string
	f := finding.Finding{ID: catalog.KernelDrops, Severity: finding.Info, Host: host,
		Detail: "The kernel dropped these packets while the tunnel carried a bench run, for reasons no other finding explains; " +
			"the reason and the function name where to look (wgperf explain kernel.drops)."}
	var named uint64 // drops with a reason: NOT_SPECIFIED says nothing, and older kernels free much with it
	for _, d := range ds {
		total += d.packets
		if d.reason != unspecified {
			named += d.packets
		}
		names = append(names, fmt.Sprintf("%s ×%s", d.reason, Commas(int64(d.packets))))
		f.Evidence = append(f.Evidence, d.evidence())
		if mapped := check.DropReasonFindings[d.reason]; len(mapped) > 0 {
			ids := make([]string, len(mapped))
			for i, id := range mapped {
				ids[i] = string(id)
			}
			f.Evidence = append(f.Evidence, finding.Evidence{Source: "kernel drop reason", Key: d.reason + " would be evidence for",
				Value: strings.Join(ids, ", ") + " (none of them found on this host)"})
		}
	}
	if named >= KernelDropWarning {
		f.Severity = finding.Warning
	}
	if len(names) > maxDropNotes {
		names = append(names[:maxDropNotes], "...")
	}
	f.Title = fmt.Sprintf("The kernel dropped %s tunnel-run packets: %s", Commas(int64(total)), shell.Comment(strings.Join(names, ", ")))
	f.Fixes = []finding.Fix{{
		Description: "Watch the drops by reason while traffic flows, and look at the setting the reason names",
		Commands:    []string{shell.Join("wgperf", "drops", "--host", host.String(), "--duration", "30s")},
	}}
	return f
}

// withoutNoise leaves out the drops that cost a tunnel nothing
// (check.DropNoise), before a reason's sites are summed: NO_SOCKET is noise
// in TCP's receive and evidence in UDP's.
func withoutNoise(cs []drops.Count) []drops.Count {
	return slices.DeleteFunc(slices.Clone(cs), func(c drops.Count) bool { return check.DropNoise(c.Reason, c.Function) })
}
