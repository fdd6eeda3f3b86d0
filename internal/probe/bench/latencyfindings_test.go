package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// loadedReport is a bench report assembled from one lab recording (tag):
// ping through the tunnel and over the underlay idle and during each single
// stream tunnel run (testdata/probe/latency/TAG-*.txt), the runs' iperf3 -J
// (testdata/probe/iperf/TAG-*.json), and both ends' routes to each other.
func loadedReport(t *testing.T, tag string) *Report {
	t.Helper()
	r := report()
	r.UnderlayAddr = "203.0.113.2"
	r.ClientUplink, _ = ParseRouteGet(latencyFile(t, "route-get-a.txt"))
	r.ServerUplink, _ = ParseRouteGet(latencyFile(t, "route-get-b.txt"))
	r.IdleLatency = &Latency{Tunnel: pingFile(t, tag+"-idle-tunnel.txt"), Underlay: pingFile(t, tag+"-idle-underlay.txt")}
	for _, d := range []struct{ dir, name string }{{Upload, "upload"}, {Download, "download"}} {
		tunnel := run(PathTunnel, d.dir, 1, recorded(t, tag+"-"+d.name+"-tunnel.json"))
		tunnel.Latency = &Latency{Tunnel: pingFile(t, tag+"-"+d.name+"-loaded-tunnel.txt"), Underlay: pingFile(t, tag+"-"+d.name+"-loaded-underlay.txt")}
		r.Runs = append(r.Runs, tunnel, run(PathUnderlay, d.dir, 1, recorded(t, tag+"-"+d.name+"-underlay.json")))
	}
	Analyze(r)
	return r
}

// Recorded in the lab (wireguard-go both ends, A —— R —— B): a healthy
// 200 Mbit/s underlay with BBR senders (+9 ms under load), and R's tbf at
// 20 Mbit/s with its 200 ms queue, a home uplink's deep FIFO, which CUBIC
// senders fill (+181 ms) and BBR senders do not (+6 to +9 ms).
func TestBufferbloatOnRecordings(t *testing.T) {
	type want struct {
		host, iface string
		underlay    string // the run whose rate the shaper is sized from
		title       string
	}
	for _, tt := range []struct {
		tag  string
		want []want // upload first
	}{
		{tag: "healthy-200m-bbr"},
		// The same deep queue with BBR senders, which pace at the
		// bottleneck's rate and leave it nearly empty.
		{tag: "deepqueue-20m-bbr"},
		{tag: "bloat-20m-cubic", want: []want{
			{"netns:a", "eth0", "upload",
				"Latency under load: an upload through the tunnel adds 181 ms to the round trip (0.50 idle, 182 loaded); the queue is on the path"},
			{"netns:b", "eth0", "download",
				"Latency under load: a download through the tunnel adds 181 ms to the round trip (0.50 idle, 182 loaded); the queue is on the path"},
		}},
	} {
		t.Run(tt.tag, func(t *testing.T) {
			r := loadedReport(t, tt.tag)
			got := findingsOf(r.Findings, catalog.LatencyBufferbloat)
			if len(got) != len(tt.want) {
				t.Fatalf("latency findings: %s, want %d", titles(got), len(tt.want))
			}
			for i, w := range tt.want {
				f := got[i]
				if f.Host.String() != w.host || f.Interface != w.iface || f.Title != w.title {
					t.Errorf("finding %d on %s %s: %q, want on %s %s: %q", i, f.Host, f.Interface, f.Title, w.host, w.iface, w.title)
				}
				dir := Upload
				if w.underlay == "download" {
					dir = Download
				}
				bw := fmt.Sprintf("%dmbit", int(math.Floor(find(r, PathUnderlay, dir, 1).Stats.Mbit*SQMShare)))
				if len(f.Fixes) != 1 || f.Fixes[0].Action == nil || f.Fixes[0].Action.Kind != remedy.KindSQM ||
					f.Fixes[0].Action.Params["device"] != w.iface || f.Fixes[0].Action.Params["bandwidth"] != bw {
					t.Errorf("finding %d fixes %+v, want sqm on %s at %s", i, f.Fixes, w.iface, bw)
				}
			}
		})
	}
}

// The queue's place comes from the underlay's pings of the same moment: the
// deep FIFO's tunnel pings beside the healthy lab's underlay pings (which
// stayed near idle) put it at the tunnel's end, on the WireGuard interface
// at the tunnel's own rate; without underlay pings it is not located.
func TestBufferbloatLocatesTheQueue(t *testing.T) {
	healthy, bloated := loadedReport(t, "healthy-200m-bbr"), loadedReport(t, "bloat-20m-cubic")
	atEnds := loadedReport(t, "bloat-20m-cubic")
	atEnds.IdleLatency.Underlay = healthy.IdleLatency.Underlay
	for i := range atEnds.Runs {
		if l := atEnds.Runs[i].Latency; l != nil {
			l.Underlay = find(healthy, PathTunnel, atEnds.Runs[i].Spec.Direction, 1).Latency.Underlay
		}
	}
	unplaced := loadedReport(t, "bloat-20m-cubic")
	unplaced.IdleLatency.Underlay = nil
	// The same path's queue met shallower by the underlay's few pings, as in
	// the kernel guest's stale-endpoint-route under load (tunnel +407 ms, the
	// underlay under half of it): a quarter as long at the median, or half as
	// long at its p90, is still the path's queue.
	shallower := func(median, p90 float64) *Report {
		r := loadedReport(t, "bloat-20m-cubic")
		idle := r.IdleLatency.Underlay.MedianMs
		for i := range r.Runs {
			if l := r.Runs[i].Latency; l != nil && l.Tunnel != nil && l.Underlay != nil {
				added := l.Tunnel.MedianMs - r.IdleLatency.Tunnel.MedianMs
				u := *l.Underlay
				u.MedianMs, u.P90Ms, u.MaxMs = idle+added*median, idle+added*p90, idle+added*p90
				l.Underlay = &u
			}
		}
		return r
	}
	for _, tt := range []struct {
		name  string
		r     *Report
		where string
		iface string
		kind  string // the upload's fix
		why   string // in the upload's detail: the measure that placed the queue
	}{
		{"deep FIFO on the path", bloated, QueueOnPath, "eth0", remedy.KindSQM, "at the median, against the tunnel's"},
		{"tunnel delayed, underlay near idle", atEnds, QueueTunnelEnds, "wg-a", remedy.KindSQM, "stayed near idle"},
		{"no underlay pings", unplaced, QueueUnknown, "", "", "cannot be placed"},
		{"the underlay met the path's queue shallower: a third at the median", shallower(0.3, 0.4), QueueOnPath, "eth0", remedy.KindSQM, "at the median, against the tunnel's"},
		{"the underlay met the path's queue late: a tenth at the median, two thirds at its p90", shallower(0.1, 0.66), QueueOnPath, "eth0", remedy.KindSQM, "slowest tenth"},
		{"a tenth at the median and at its p90: not the same queue", shallower(0.1, 0.1), QueueTunnelEnds, "wg-a", remedy.KindSQM, "stayed near idle"},
	} {
		fs := bufferbloatFindings(tt.r)
		if len(fs) != 2 {
			t.Fatalf("%s: %s, want both directions", tt.name, titles(fs))
		}
		up := fs[0]
		kind := ""
		if a := up.Fixes[0].Action; a != nil {
			kind = a.Kind
		}
		if !strings.HasSuffix(up.Title, "the queue is "+tt.where) || up.Interface != tt.iface || kind != tt.kind {
			t.Errorf("%s: %q on %q, fix %q; want the queue %s, on %q, fix %q", tt.name, up.Title, up.Interface, kind, tt.where, tt.iface, tt.kind)
		}
		if !strings.Contains(up.Detail, tt.why) {
			t.Errorf("%s: the detail does not say %q: %s", tt.name, tt.why, up.Detail)
		}
		p90 := slices.ContainsFunc(up.Evidence, func(e finding.Evidence) bool { return strings.Contains(e.Key, "(p90)") })
		if want := tt.why == "slowest tenth"; p90 != want {
			t.Errorf("%s: the underlay's p90 in the evidence %v, want %v", tt.name, p90, want)
		}
	}
	if tun := find(atEnds, PathTunnel, Upload, 1).Stats.Mbit; !strings.Contains(bufferbloatFindings(atEnds)[0].Fixes[0].Description, fmt.Sprintf("of the %.1f Mbit/s measured", tun)) {
		t.Errorf("the tunnel's end is shaped from the tunnel's rate (%.1f Mbit/s): %q", tun, bufferbloatFindings(atEnds)[0].Fixes[0].Description)
	}
}

func findingsOf(fs []finding.Finding, id finding.ID) []finding.Finding {
	var out []finding.Finding
	for _, f := range fs {
		if f.ID == id {
			out = append(out, f)
		}
	}
	return out
}

func titles(fs []finding.Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Host.String()+": "+f.Title)
	}
	return "[" + strings.Join(out, "; ") + "]"
}
