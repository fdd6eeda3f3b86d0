package bench

import (
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/target/targettest"
)

// The lab's 3% loss run, its samples 10 s apart (the clock fixed here), and
// a report from before the counters were kept: the table says per host what
// each did (its uplink's interrupts), and is left out where nothing was kept.
func TestWriteHostLoad(t *testing.T) {
	sender, receiver := orderDelta(t, "loss3", "a"), orderDelta(t, "loss3", "b")
	sender.Seconds, receiver.Seconds = 10, 10
	// The uplink's interrupts are shown, not a busier NIC's.
	receiver.NICInterrupts = []NICInterrupts{{Device: "eth1", PerCPU: []uint64{400000, 400000}, Total: 800000},
		{Device: "eth0", PerCPU: []uint64{0, 337000}, Total: 337000}}
	r := &Report{ServerUplink: "eth0", Runs: []Run{{Spec: Spec{Path: PathTunnel, Direction: Upload, Streams: 1}, Client: sender, Server: receiver}}}
	var b strings.Builder
	if err := r.writeHostLoad(&b); err != nil {
		t.Fatal(err)
	}
	want := `
RUN                      HOST             CTXT/S  NIC INTERRUPTS/S PER CPU  RECEIVED OUT OF ORDER   REORDERS SEEN SENDING
tunnel upload, 1 stream  netns:wgl-h10-a  48.9K   -                         0 of 39,614 (0%)        8 against 4,064 retransmits
tunnel upload, 1 stream  netns:wgl-h10-b  48.9K   eth0: 0, 33.7K            86,730 of 96,345 (90%)  0 against 1 retransmits
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	old := &Report{Runs: []Run{{Spec: Spec{Path: PathTunnel, Direction: Upload, Streams: 1}, Client: HostDelta{Host: targettest.Spec("a")}, Server: HostDelta{Host: targettest.Spec("b")}}}}
	if err := old.writeHostLoad(&b); err != nil || b.Len() != 0 {
		t.Errorf("a report without the counters printed %q, %v", b.String(), err)
	}
}
