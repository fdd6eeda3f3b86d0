package lab

import (
	"math"
	"testing"
	"time"
)

// A knee trips when a second's worth goes past it, then passes half the knee
// for its hold, whatever the rate: offered the link's rate in a userspace
// sender's batches (45 datagrams at once), it passes about half the knee at
// 20 Mbit/s as at 200.
func TestKneeCollapsesToHalfAtAnyRate(t *testing.T) {
	const pkt = 1400
	for _, linkMbit := range []int{20, 200} {
		k := &Knee{Mbit: linkMbit * 60 / 100, Hold: 4 * time.Second}
		now := time.Unix(1000, 0)
		// A second above the knee, packet by packet: it trips.
		gap := time.Duration(float64(time.Second) * pkt * 8 / (float64(linkMbit) * 1e6))
		tripped := false
		for end := now.Add(time.Second); now.Before(end) && !tripped; now = now.Add(gap) {
			k.Pass(now, pkt)
			tripped = now.Before(k.until)
		}
		if !tripped {
			t.Fatalf("%d Mbit/s: a second at the link's rate did not trip a knee at %d", linkMbit, k.Mbit)
		}
		// Collapsed: batches of 45 datagrams at the link's rate for two seconds.
		passed := 0
		for end := now.Add(2 * time.Second); now.Before(end); now = now.Add(45 * gap) {
			for range 45 {
				if k.Pass(now, pkt) {
					passed += pkt
				}
			}
		}
		got, want := float64(passed)*8/2/1e6, float64(k.Mbit)/2
		if math.Abs(got-want) > 0.15*want {
			t.Errorf("%d Mbit/s: collapsed knee passed %.1f Mbit/s, want about half the knee's %d (%.1f)", linkMbit, got, k.Mbit, want)
		}
	}
}
