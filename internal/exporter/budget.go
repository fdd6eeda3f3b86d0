package exporter

import (
	"errors"
	"fmt"
)

// What the exporter renders and holds is bounded, not only what it reads: a
// valid target whose "wg show all dump" fits the 8 MiB read budget (139,141
// peers) rendered a 58 MB scrape and took the process to 285 MB, against the
// packaged unit's MemoryMax=64M (deploy/systemd/wgperf-exporter.service).
//
//   - Per target (the watched host, and each /probe target): at most
//     Limits.Series series and Limits.Bytes bytes of text. A collection over
//     either fails (wgperf_collect_success 0, one log line naming the limit
//     and its flag; wgperf_collect_series is one more than the limit): it
//     stops at the limit, so it costs no more than a target within it.
//   - In total: the /probe cache holds at most ProbeOptions.CacheBytes of
//     rendered text (the least recently scraped targets' collections go
//     first, and a collection older than --probe.cache-ttl is dropped at
//     once), the watched host's latest collection one target's worth, and
//     collections being turned into metrics are at most renderSlots at once.
//     With the read budget (ReadBudget) that keeps the heap within the
//     unit's GOMEMLIMIT=40MiB: 16 MiB read, 2 × (4 MiB of text and its
//     30,000 samples) being rendered, 4 + 8 MiB held. The full build keeps
//     the watched host's samples instead of their text (2.3 MiB for the
//     hub of 3,500 peers, against 3.2 MiB of text) and, from its first
//     scrape, client_golang's model of them (7.4 MiB), shared by every
//     scrape until the next collection (metrics_lib.go).
//   - Answers are written from the rendered text itself (or the full
//     build's shared model of it), never copied per scrape (reply.parts), and a client gets DefaultWriteTimeout to take
//     its answer; at most DefaultMaxConnections are served at once.
const (
	// DefaultMaxSeries is a target's series budget: 7 or 8 series a peer
	// (with a finding), so a hub of 3,500 peers fits.
	DefaultMaxSeries = 30_000
	// DefaultMaxBytes is a target's budget of rendered text: a peer's
	// series take about 940 bytes, so the same hub fits.
	DefaultMaxBytes = 4 << 20
	// DefaultProbeCacheBytes is what the /probe cache holds of rendered text
	// for all its targets together.
	DefaultProbeCacheBytes = 8 << 20
	// renderSlots is how many collections turn their facts into metrics at
	// once (each up to one target's budget); the others wait their turn.
	renderSlots = 2
)

// Limits bound what one target's collection may render.
type Limits struct {
	Series int // series; 0 means DefaultMaxSeries
	Bytes  int // bytes of text; 0 means DefaultMaxBytes
	// keepSamples keeps a collection's samples instead of their text, once
	// the text was measured against Bytes: the watched host's, in the full
	// build, which serves /metrics through client_golang (New sets it).
	keepSamples bool
}

func (l Limits) orDefault() Limits {
	if l.Series <= 0 {
		l.Series = DefaultMaxSeries
	}
	if l.Bytes <= 0 {
		l.Bytes = DefaultMaxBytes
	}
	return l
}

// CheckLimits refuses budgets that are not positive, so a typo fails at start.
func CheckLimits(l Limits, cacheBytes int) error {
	switch {
	case l.Series < 0:
		return fmt.Errorf("--metrics.max-series %d: want a positive number of series", l.Series)
	case l.Bytes < 0:
		return fmt.Errorf("--metrics.max-bytes %d: want a positive number of bytes", l.Bytes)
	case cacheBytes < 0:
		return fmt.Errorf("--probe.cache-bytes %d: want a positive number of bytes", cacheBytes)
	}
	return nil
}

// errOverBudget is a collection that renders more than its target may.
var errOverBudget = errors.New("over the exporter's budget")

// seriesError is a collection with more series than Limits.Series.
func seriesError(limit int) error {
	return fmt.Errorf("more than the %d series a target may have (--metrics.max-series): %w", limit, errOverBudget)
}

// bytesError is a collection whose text passes Limits.Bytes.
func bytesError(limit int) error {
	return fmt.Errorf("metrics text longer than the %d bytes a target may have (--metrics.max-bytes): %w", limit, errOverBudget)
}

// renderSem holds renderSlots for every collection of the process.
var renderSem = make(chan struct{}, renderSlots)
