package bench

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// orderDelta is a lab node's counters around one 8 s TCP run a -> b through
// the tunnel (testdata/probe/counters/README.md): healthy, with 3% of the
// tunnel's datagrams dropped at random and none reordered, or with 2% of
// them 3 ms late and none lost.
func orderDelta(t *testing.T, run, node string) HostDelta {
	t.Helper()
	files := func(when string) map[string]string {
		m := map[string]string{}
		for _, f := range []string{"netstat", "snmp", "stat"} {
			m["/proc/net/"+f] = "counters/order-" + run + "-" + node + "-" + when + "-" + f + ".txt"
		}
		m["/proc/stat"] = m["/proc/net/stat"]
		delete(m, "/proc/net/stat")
		return m
	}
	return recordedDelta(t, "netns:wgl-h10-"+node, files("before"), files("after"))
}

func TestOrderRecorded(t *testing.T) {
	for _, tt := range []struct {
		name, run, node, role string
		want                  TCPOrder
		retrans               int64
		ctxt                  uint64
		reordered             bool
		wantLines             []string
	}{
		{
			name: "healthy: the receiver queued nothing out of order", run: "healthy", node: "b", role: "receiver",
			want: TCPOrder{InSegs: 5278, OutSegs: 4149}, ctxt: 128244,
		},
		{
			name: "3% loss: the receiver queued 90% of its segments out of order", run: "loss3", node: "b", role: "receiver",
			want: TCPOrder{InSegs: 96345, OutSegs: 40846, OFOQueue: 86730}, retrans: 1, ctxt: 488921,
			wantLines: []string{"receiver (netns:wgl-h10-b) received 86,730 of 96,345 segments out of order (90%, TCPOFOQueue): each behind a gap, a lost segment's or a late one's"},
		},
		{
			name: "3% loss: the sender's 8 reorder detections against 4,064 retransmissions are loss", run: "loss3", node: "a", role: "sender",
			want: TCPOrder{InSegs: 39614, OutSegs: 130555, SACKReorder: 8}, retrans: 4064, ctxt: 488848,
			wantLines: []string{"sender (netns:wgl-h10-a) found its segments reordered only 8 times against 4,064 retransmissions: out-of-order arrivals behind them are loss, not reordering"},
		},
		{
			name: "2% of packets 3 ms late, none lost: the receiver queued 67% out of order, no fewer than under loss", run: "reorder", node: "b", role: "receiver",
			want: TCPOrder{InSegs: 106984, OutSegs: 43115, OFOQueue: 71936, OFOMerge: 24}, ctxt: 666719,
			wantLines: []string{"receiver (netns:wgl-h10-b) received 71,936 of 106,984 segments out of order (67%, TCPOFOQueue): each behind a gap, a lost segment's or a late one's",
				"receiver (netns:wgl-h10-b) had CPU 0 at 93% busy"}, // /proc/stat is the machine's: the router's element shares it
		},
		{
			name: "2% of packets 3 ms late: the sender's 2,363 detections against 758 retransmissions are reordering", run: "reorder", node: "a", role: "sender",
			want: TCPOrder{InSegs: 43115, OutSegs: 129613, SACKReorder: 2141, TSReorder: 222}, retrans: 758, ctxt: 666712, reordered: true,
			wantLines: []string{"sender (netns:wgl-h10-a) found its segments reordered 2,363 times against 758 retransmissions (TCPSACKReorder 2,141, TCPTSReorder 222, TCPRenoReorder 0): " +
				"the path delivers packets out of order: per-packet balancing over unequal links (a bond in balance-rr, per-packet ECMP) or a receive path that spreads one flow over CPUs",
				"sender (netns:wgl-h10-a) had CPU 0 at 93% busy"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := orderDelta(t, tt.run, tt.node)
			if d.TCP == nil {
				t.Fatal("no TCP order counters")
			}
			if d := cmp.Diff(tt.want, *d.TCP); d != "" {
				t.Errorf("order (-want +got)\n%s", d)
			}
			if d.TCPRetransSegs != tt.retrans || d.ContextSwitches != tt.ctxt {
				t.Errorf("retransmitted %d, context switches %d; want %d, %d", d.TCPRetransSegs, d.ContextSwitches, tt.retrans, tt.ctxt)
			}
			if got := d.Reordered(); got != tt.reordered {
				t.Errorf("Reordered() = %v, want %v", got, tt.reordered)
			}
			if d := cmp.Diff(tt.wantLines, d.Attribution(tt.role)); d != "" {
				t.Errorf("attribution (-want +got)\n%s", d)
			}
		})
	}
}

// TestReordered holds the verdict to its two shares: detections against
// retransmissions, and against segments sent.
func TestReordered(t *testing.T) {
	for _, tt := range []struct {
		name    string
		d       HostDelta
		want    bool
		wantHas string
		quiet   bool // no line at all
	}{
		{name: "the lab's 3% loss: 8 against 4,064", d: HostDelta{TCPRetransSegs: 4064, TCP: &TCPOrder{OutSegs: 130555, SACKReorder: 8}}},
		{name: "a balance-rr bond: 600 detections against 900 retransmissions", want: true, wantHas: "reordered 600 times against 900 retransmissions (TCPSACKReorder 550, TCPTSReorder 50, TCPRenoReorder 0)",
			d: HostDelta{Host: targettest.Spec("h"), TCPRetransSegs: 900, TCP: &TCPOrder{OutSegs: 130555, SACKReorder: 550, TSReorder: 50}}},
		{name: "reordering RACK absorbed: detections, no retransmission", want: true, wantHas: "against 0 retransmissions",
			d: HostDelta{Host: targettest.Spec("h"), TCP: &TCPOrder{OutSegs: 130555, SACKReorder: 40}}},
		{name: "at the share of retransmissions exactly", want: true, wantHas: "reordered 100 times",
			d: HostDelta{Host: targettest.Spec("h"), TCPRetransSegs: 1000, TCP: &TCPOrder{OutSegs: 130555, SACKReorder: 100}}},
		{name: "just under it", d: HostDelta{TCPRetransSegs: 1000, TCP: &TCPOrder{OutSegs: 130555, SACKReorder: 99}}},
		{name: "a stray detection in a long clean run", d: HostDelta{TCP: &TCPOrder{OutSegs: 10_000_000, SACKReorder: 3}}},
		{name: "netstat unread", d: HostDelta{TCPRetransSegs: 5}},
		{name: "one stray detection beside one retransmission: no line", quiet: true,
			d: HostDelta{TCPRetransSegs: 1, TCP: &TCPOrder{OutSegs: 130555, SACKReorder: 1}}},
		{name: "sent nothing", d: HostDelta{TCP: &TCPOrder{InSegs: 5000, TSReorder: 3}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.d.Reordered(); got != tt.want {
				t.Errorf("Reordered() = %v, want %v", got, tt.want)
			}
			lines := strings.Join(tt.d.Attribution("sender"), "\n")
			if tt.quiet && lines != "" {
				t.Errorf("attribution %q, want none", lines)
			}
			if tt.want != strings.Contains(lines, "the path delivers packets out of order") || !strings.Contains(lines, tt.wantHas) {
				t.Errorf("attribution %q: want the reordering line %v, with %q", lines, tt.want, tt.wantHas)
			}
		})
	}
}

// A busy host's few late segments (under 1% of those received) are no line.
func TestOutOfOrderNoteShare(t *testing.T) {
	for _, tt := range []struct {
		t    TCPOrder
		want int
	}{{TCPOrder{InSegs: 10000, OFOQueue: 99}, 0}, {TCPOrder{InSegs: 10000, OFOQueue: 100}, 1}} {
		d := HostDelta{Host: targettest.Spec("h"), TCP: &tt.t}
		if got := len(d.Attribution("receiver")); got != tt.want {
			t.Errorf("%d of %d out of order: %d lines, want %d", tt.t.OFOQueue, tt.t.InSegs, got, tt.want)
		}
	}
}

// The VM's eth0 is a virtio NIC whose queue rows ("virtio2-input.0") only
// sysfs ties to it; two recordings of its /proc/interrupts 20 minutes apart:
// eth0's receive queue interrupted CPU 1, its transmit queue CPU 0; vsock's
// virtio3 rows grew too but belong to no network device, and the disk's are
// no NIC's.
func TestNICInterruptsRecorded(t *testing.T) {
	host := func(interrupts string) *targettest.Host {
		h := recordedHost(t, "ssh:vm", map[string]string{"/proc/interrupts": interrupts, "/proc/net/dev": "counters/flood-a-before-net_dev.txt"})
		grep, err := os.ReadFile(testdata("counters", "nic-vm-msi_irqs.grep.txt"))
		if err != nil {
			t.Fatal(err)
		}
		h.Fallback = func(line string) (targettest.Answer, bool) {
			if strings.HasPrefix(line, "sh -c 'grep -H") && strings.Contains(line, "/sys/class/net/*/device/../msi_irqs/*") {
				return targettest.Answer{Out: string(grep)}, true
			}
			return targettest.Answer{}, false
		}
		return h
	}
	ctx := t.Context()
	d := Delta(End{Host: targettest.Spec("ssh:vm")}, TakeSample(ctx, host("counters/nic-vm-before-interrupts.txt"), Baseline),
		TakeSample(ctx, host("counters/nic-vm-after-interrupts.txt"), Named))
	want := []NICInterrupts{{Device: "eth0", PerCPU: []uint64{188, 199}, Total: 387}}
	if diff := cmp.Diff(want, d.NICInterrupts); diff != "" {
		t.Errorf("NIC interrupts (-want +got)\n%s", diff)
	}
	b, err := json.Marshal(d)
	if err != nil || !strings.Contains(string(b), `"nic_interrupts":[{"device":"eth0","per_cpu":[188,199],"total":387}]`) {
		t.Errorf("JSON %s, %v", b, err)
	}
}
