package bench

import (
	"context"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/drops"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// dropReport is a bench whose download's receiver (the client) dropped
// WireGuard datagrams at its socket and, for a reason no check covers,
// at rp_filter; the underlay run's drops do not count.
func dropReport() *Report {
	return &Report{Client: targettest.Spec("netns:a"), Server: targettest.Spec("netns:b"), Runs: []Run{
		{Spec: Spec{Path: PathTunnel, Direction: Download, Streams: 1},
			Client: HostDelta{Host: targettest.Spec("netns:a")}, Server: HostDelta{Host: targettest.Spec("netns:b")},
			ClientDrops: []drops.Count{
				{Reason: "SOCKET_RCVBUFF", Function: "__udp_enqueue_schedule_skb", Packets: 9312},
				{Reason: "IP_RPFILTER", Function: "ip_rcv_finish_core", Interface: "eth0", Packets: 1500},
				{Reason: "TCP_CLOSE", Function: "tcp_rcv_state_process", Packets: 3},
				// the bench's own segments still queued when its socket closed
				{Reason: "NO_SOCKET", Function: "tcp_v4_rcv", Interface: "wg0", Packets: 1210},
			}},
		{Spec: Spec{Path: PathUnderlay, Direction: Download, Streams: 1},
			Client: HostDelta{Host: targettest.Spec("netns:a")}, Server: HostDelta{Host: targettest.Spec("netns:b")},
			ClientDrops: []drops.Count{{Reason: "NO_SOCKET", Function: "__udp4_lib_rcv", Packets: 77}}},
	}}
}

func TestKernelDropFindings(t *testing.T) {
	rcvbuf := finding.Finding{ID: catalog.UDPRcvbufErrors, Severity: finding.Warning, Host: targettest.Spec("netns:a")}
	elsewhere := finding.Finding{ID: catalog.UDPRcvbufErrors, Severity: finding.Warning, Host: targettest.Spec("netns:b")}
	got := KernelDropFindings(dropReport(), []finding.Finding{rcvbuf, elsewhere})
	if len(got) != 3 {
		t.Fatalf("%d findings, want 3: %+v", len(got), got)
	}
	if len(got[0].Evidence) != 1 || got[0].Evidence[0].Source != "kernel drop reason" ||
		!strings.Contains(got[0].Evidence[0].Key, "SOCKET_RCVBUFF in __udp_enqueue_schedule_skb") || got[0].Evidence[0].Number != 9312 {
		t.Errorf("udp.rcvbuf-errors on netns:a evidence = %+v", got[0].Evidence)
	}
	if len(got[1].Evidence) != 0 {
		t.Errorf("the other host's finding got evidence: %+v", got[1].Evidence)
	}
	k := got[2]
	if k.ID != catalog.KernelDrops || k.Host.String() != "netns:a" || k.Severity != finding.Warning {
		t.Errorf("kernel.drops = %s %s %s", k.ID, k.Host, k.Severity)
	}
	if !strings.Contains(k.Title, "IP_RPFILTER ×1,500") || strings.Contains(k.Title, "TCP_CLOSE") || strings.Contains(k.Title, "NO_SOCKET") {
		t.Errorf("kernel.drops title = %q", k.Title)
	}
	if rcvbuf.Evidence != nil {
		t.Error("the findings passed in were changed")
	}
	// Again over its own output: the same findings, no evidence twice.
	again := KernelDropFindings(dropReport(), got)
	if len(again) != 3 || len(again[0].Evidence) != 1 {
		t.Errorf("a second pass changed the findings: %+v", again)
	}
	// Without a check that covers SOCKET_RCVBUFF, it is kernel.drops too, naming the finding it would support.
	alone := KernelDropFindings(dropReport(), nil)
	if len(alone) != 1 || !strings.Contains(alone[0].Title, "SOCKET_RCVBUFF") {
		t.Fatalf("alone = %+v", alone)
	}
	if !strings.Contains(alone[0].Evidence[1].Value, string(catalog.UDPRcvbufErrors)) {
		t.Errorf("kernel.drops does not name udp.rcvbuf-errors: %+v", alone[0].Evidence)
	}
	// A few drops are a note.
	small := dropReport()
	small.Runs[0].ClientDrops = []drops.Count{{Reason: "IP_RPFILTER", Packets: 12}}
	if fs := KernelDropFindings(small, nil); len(fs) != 1 || fs[0].Severity != finding.Info {
		t.Errorf("12 drops = %+v, want one info finding", fs)
	}
	// Drops the kernel gives no reason for (6.1 frees much with NOT_SPECIFIED) are shown, never a warning.
	small.Runs[0].ClientDrops = []drops.Count{{Reason: "NOT_SPECIFIED", Function: "skb_release_data", Packets: 5000}}
	if fs := KernelDropFindings(small, nil); len(fs) != 1 || fs[0].Severity != finding.Info {
		t.Errorf("5,000 unspecified drops = %+v, want one info finding", fs)
	}
	if fs := KernelDropFindings(nil, []finding.Finding{rcvbuf}); len(fs) != 1 {
		t.Errorf("no bench: %+v", fs)
	}
}

func TestKernelDropNotes(t *testing.T) {
	run := dropReport().Runs[0]
	got := kernelDropNotes(&run)
	want := []string{
		"receiver (netns:a) kernel dropped 9,312 packets: SOCKET_RCVBUFF in __udp_enqueue_schedule_skb",
		"receiver (netns:a) kernel dropped 1,500 packets: IP_RPFILTER in ip_rcv_finish_core on eth0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("notes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// countingSampler counts one more packet at every snapshot.
type countingSampler struct {
	host   string
	n      uint64
	closed bool
}

func (s *countingSampler) Status() drops.Status {
	return drops.Status{Host: s.host, Tier: drops.TierBTF, Scope: "test"}
}
func (s *countingSampler) Snapshot(context.Context) (drops.Snapshot, error) {
	s.n += 5
	return drops.Snapshot{Counts: []drops.Count{{Reason: "IP_RPFILTER", Packets: s.n}}}, nil
}
func (s *countingSampler) Close() error { s.closed = true; return nil }

func TestSamplersAroundARun(t *testing.T) {
	var opened []*countingSampler
	c := Config{Client: target.Netns("a"), Server: target.Netns("b"), Drops: func(_ context.Context, t target.Target) drops.Sampler {
		s := &countingSampler{host: t.String()}
		opened = append(opened, s)
		return s
	}}
	e := openSamplers(context.Background(), c)
	if st := e.statuses(); len(st) != 2 || st[0].Host != "netns:a" || st[1].Host != "netns:b" {
		t.Fatalf("statuses = %+v", st)
	}
	var run Run
	before := e.snapshot(context.Background())
	e.record(&run, before, e.snapshot(context.Background()))
	if len(run.ClientDrops) != 1 || run.ClientDrops[0].Packets != 5 || len(run.ServerDrops) != 1 {
		t.Errorf("run drops = %+v / %+v", run.ClientDrops, run.ServerDrops)
	}
	e.Close()
	for _, s := range opened {
		if !s.closed {
			t.Errorf("%s not closed", s.host)
		}
	}
	var none *endSamplers // no sampler: nothing recorded, nothing to close
	none.record(&run, none.snapshot(context.Background()), none.snapshot(context.Background()))
	none.Close()
}
