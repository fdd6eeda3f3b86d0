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
