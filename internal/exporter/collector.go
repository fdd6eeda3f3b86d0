package exporter

import (
	"errors"
	"slices"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/facts"
)

// collector turns one kind of collected fact into metrics, as one value in
// its own file (collector_NAME.go), the way node_exporter has one collector
// per source: the metric families it declares and how it emits them from a
// collection. A metric for a fact wgperf already collects is one such file
// plus its line in collectors.
type collector struct {
	name  string  // unique, lower case; collectors is sorted by it
	doc   string  // what it reads and what its metrics tell about a slow tunnel
	descs []*Desc // every family it may emit, and no other
	emit  func(h hostFacts, e *emitter)
}

// collectors are every host metric's source, sorted by name: TestCollectors
// holds the order, TestEveryCollectorIsRegistered fails on a collector
// declared but not listed here.
var collectors = []collector{
	skippedChecksCollector,
	findingsCollector,
	shapersCollector,
	softnetCollector,
	tcpCollector,
	udpCollector,
	endpointsCollector,
	handshakesCollector,
	interfacesCollector,
	peersCollector,
	tunnelsCollector,
}

// hostFacts is what one collection gives every collector: the snapshot, the
// passive checks' result on it, and how peers are labelled.
type hostFacts struct {
	snap      *facts.Snapshot
	wireguard []facts.WGInterface // snap.WireGuard without repeats (see uniqueWireGuard)
	result    check.Result
	labels    peerLabels
	// exported are the peers of each interface (by name) that have series
	// of their own, at most labels.max (exportedPeers).
	exported map[string][]facts.WGPeer
}

func newHostFacts(s *facts.Snapshot, res check.Result, pl peerLabels) hostFacts {
	h := hostFacts{snap: s, wireguard: uniqueWireGuard(s.WireGuard), result: res, labels: pl, exported: map[string][]facts.WGPeer{}}
	for _, w := range h.wireguard {
		h.exported[w.Name] = exportedPeers(w.Peers, pl, s.CollectedAt)
	}
	return h
}

// peers are w's peers that have series of their own.
func (h hostFacts) peers(w facts.WGInterface) []facts.WGPeer { return h.exported[w.Name] }

// emitter gathers the samples collectors emit, up to max of them (0: no
// bound): past it, emitting stops the collectors (errFull), so a host with
// more costs no more than max.
type emitter struct {
	out []metric
	max int
}

// errFull is the panic that ends an emitter's collectors past its max.
var errFull = errors.New("series budget full")

func (e *emitter) add(m metric) {
	if e.max > 0 && len(e.out) >= e.max {
		panic(errFull)
	}
	e.out = append(e.out, m)
}

func (e *emitter) gauge(d *Desc, v float64, labels ...string) {
	e.add(constMetric(d, gauge, v, labels...))
}

func (e *emitter) counter(d *Desc, v float64, labels ...string) {
	e.add(constMetric(d, counter, v, labels...))
}

// hostMetrics turns one snapshot and its check results into const metrics.
// It runs once per collection, so a scrape only copies the slice.
func hostMetrics(s *facts.Snapshot, res check.Result, pl peerLabels) []metric {
	out, _ := hostMetricsWithin(s, res, pl, 0)
	return out
}

// hostMetricsWithin is hostMetrics with at most max samples (0: any
// number); full says the host has more, and then out is nil. Every peer is
// at least one series (wgperf_wireguard_peer_info), so a host with more
// peers than max is refused before anything is emitted.
func hostMetricsWithin(s *facts.Snapshot, res check.Result, pl peerLabels, max int) (out []metric, full bool) {
	if max > 0 {
		peers := 0
		for _, w := range s.WireGuard {
			peers += len(w.Peers)
		}
		if peers > max {
			return nil, true
		}
	}
	defer func() {
		if r := recover(); r != nil {
			if r != errFull {
				panic(r)
			}
			out, full = nil, true
		}
	}()
	h := newHostFacts(s, res, pl)
	e := emitter{max: max}
	for _, c := range collectors {
		c.emit(h, &e)
	}
	return e.out, false
}

// uniqueWireGuard keeps the first interface of each name and, on it, the
// first peer of each public key: a series repeated would break the scrape.
// Kernel facts are read through the target's namespace, but "wg show all
// dump" lists interfaces of every namespace; collect already keeps only
// local ones, so this is a guard.
func uniqueWireGuard(ifaces []facts.WGInterface) []facts.WGInterface {
	out := firstOfEach(ifaces, func(w facts.WGInterface) string { return w.Name })
	for i := range out {
		out[i].Peers = firstOfEach(out[i].Peers, func(p facts.WGPeer) string { return p.PublicKey })
	}
	return out
}

// firstOfEach is a copy of s with only the first element of each key, in order.
func firstOfEach[T any](s []T, key func(T) string) []T {
	seen := make(map[string]bool, len(s))
	return slices.DeleteFunc(slices.Clone(s), func(v T) bool {
		k := key(v)
		repeat := seen[k]
		seen[k] = true
		return repeat
	})
}
