//go:build !router

package drops

import (
	"context"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/target"
)

// TestWatchDuration: a duration outside 1 s to 24 h is refused before any
// sampler is opened on the host.
func TestWatchDuration(t *testing.T) {
	host, err := target.Parse("netns:hc-none")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []time.Duration{0, 500 * time.Millisecond, 25 * time.Hour} {
		if _, err := Watch(context.Background(), host, d); err == nil || err.Error() != "--duration must be between 1s and 24h" {
			t.Errorf("%s: %v", d, err)
		}
	}
}
