package bench

import (
	"testing"

	"github.com/wgperf/wgperf/internal/probe/iperf"
)

func TestStreamView(t *testing.T) {
	for _, tt := range []struct {
		name string
		res  *iperf.Result
		want string
	}{
		{"one stream: nothing to share", recorded(t, "tcp-upload.json"), ""},
		{"four BBR streams at 200 Mbit/s share it evenly", recorded(t, "tcp-parallel.json"),
			"streams 57.2, 40.1, 47.0, 47.0 Mbit/s, retransmits 0, 0, 0, 0"},
		// Recorded through wireguard-go in the lab, the underlay shaped to 100 Mbit/s by tbf.
		{"four CUBIC streams at a drop-tail ceiling: two starve", recorded(t, "tcp-parallel-ceiling-cubic-upload.json"),
			"streams 7.1, 38.9, 6.7, 38.8 Mbit/s, retransmits 2, 53, 36, 62: 2 of 4 got under half an even share (22.9 Mbit/s each)"},
		{"the same, downloading: one starves", recorded(t, "tcp-parallel-ceiling-cubic-download.json"),
			"streams 26.7, 15.6, 10.7, 38.7 Mbit/s, retransmits 96, 0, 33, 108: 1 of 4 got under half an even share (22.9 Mbit/s each)"},
		{"the shaping case's naughty stream", &iperf.Result{PerStream: []iperf.StreamTotal{
			{ReceivedMbit: 110, Retransmits: 1}, {ReceivedMbit: 108, Retransmits: 2}, {ReceivedMbit: 96, Retransmits: 140}, {ReceivedMbit: 111}}},
			"streams 110.0, 108.0, 96.0, 111.0 Mbit/s, retransmits 1, 2, 140, 0: stream 3 took 98% of the retransmits, hitting the ceiling the others rode under"},
		{"a handful of retransmits on one stream says nothing", &iperf.Result{PerStream: []iperf.StreamTotal{
			{ReceivedMbit: 50, Retransmits: 5}, {ReceivedMbit: 50}}},
			"streams 50.0, 50.0 Mbit/s, retransmits 5, 0"},
	} {
		if got := StreamView(tt.res); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}
