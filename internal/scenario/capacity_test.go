package scenario

import (
	"context"
	"testing"
)

// TestCappedBuffersKeepTheirShareOfThePath: a lab shaped below its case's
// rate gives capped UDP buffers the same share of what rmem_max allows,
// so they last as long and drop as often as at the catalog's rate.
func TestCappedBuffersKeepTheirShareOfThePath(t *testing.T) {
	rcvbuf, _ := Lookup("udp-rcvbuf")
	healthy, _ := Lookup("healthy")
	for _, tc := range []struct {
		sc          Scenario
		rate, share int
	}{
		{rcvbuf, 20, 20},
		{rcvbuf, 50, 50},
		{rcvbuf, 100, 0}, // the catalog's own rate: all rmem_max allows
		{rcvbuf, 400, 0},
		{healthy, 20, 0}, // wireguard-go's forced buffers are not capped
	} {
		cfg, _, err := sizeLab(context.Background(), tc.sc, Options{RateMbit: tc.rate})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.UDPBufferPercent != tc.share {
			t.Errorf("%s at %d Mbit/s: buffer share %d%%, want %d%%", tc.sc.Name, tc.rate, cfg.UDPBufferPercent, tc.share)
		}
	}
}

// TestQueueLengthsShrinkWithTheRate: a host queue a case overflows at its
// catalog rate is shortened in proportion at a lower sized rate.
func TestQueueLengthsShrinkWithTheRate(t *testing.T) {
	backlog, _ := Lookup("receive-backlog")
	const key = "net.core.netdev_max_backlog"
	none := func(string) (string, error) { return "reno cubic bbr", nil }
	for _, tc := range []struct {
		rate int
		want string
	}{{100, "8"}, {200, "8"}, {50, "4"}, {20, "2"}} {
		got := hostSysctlsFor(backlog, Sizing{CatalogMbit: 100, RateMbit: tc.rate}, "bbr", none)[key]
		if got != tc.want {
			t.Errorf("at %d Mbit/s: %s=%s, want %s", tc.rate, key, got, tc.want)
		}
	}
	if backlog.HostSysctls[key] != "8" {
		t.Errorf("the catalog's own value changed: %s", backlog.HostSysctls[key])
	}
}
