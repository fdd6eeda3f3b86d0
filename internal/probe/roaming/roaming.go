// Package roaming samples, while doctor's bench runs, the endpoint and latest
// handshake that a WireGuard interface holds for each of its peers, and
// judges what the samples show. WireGuard sends to the address the last
// authenticated packet of a key came from: one device that moves (a phone
// between networks) changes it once; two devices that hold the same private
// key (a cloned VM, a second laptop set up from the same config) take turns,
// each pulling the far end's replies to itself, and the tunnel barely works.
//
// Watch is the I/O shell (one "wg show all dump" per sample through the
// Target); Findings is pure.
package roaming

import (
	"bytes"
	"context"
	"sync"
	"time"

	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/target"
)

// Every is how often Watch samples at most: a device's keepalive (25 s) or
// its own traffic moves the endpoint, and a bench lasts tens of seconds. A
// host where one sample is slow (a router, an emulated guest: each is a
// process, and over ssh a round trip) is sampled less often, so the watch
// takes at most a tenth of the time the bench measures on it.
const Every = 2 * time.Second

// share is the most of its time the watch spends sampling.
const share = 10

// Peer is what an interface held for one peer at a sample.
type Peer struct {
	Endpoint  string    `json:"endpoint"` // "" when none
	Handshake time.Time `json:"latest_handshake"`
}

// Sample is one reading of an interface's peers, by public key.
type Sample struct {
	At    time.Time       `json:"at"`
	Peers map[string]Peer `json:"peers"`
}

// Watch samples one interface of one host until Stop.
type Watch struct {
	Host      target.Spec
	Interface string
	cancel    context.CancelFunc
	done      chan struct{}
	mu        sync.Mutex
	samples   []Sample
}

// Start samples iface on t every Every (and once at once) until Stop; a
// sample that fails is skipped: the watch is evidence, not the bench.
func Start(ctx context.Context, t target.Target, iface string) *Watch {
	ctx, cancel := context.WithCancel(ctx)
	w := &Watch{Host: target.Of(t), Interface: iface, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			began := time.Now()
			if s, ok := read(ctx, t, iface); ok {
				w.mu.Lock()
				w.samples = append(w.samples, s)
				w.mu.Unlock()
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(max(Every, share*time.Since(began))):
			}
		}
	}()
	return w
}

// Stop ends the watch and returns its samples, oldest first.
func (w *Watch) Stop() []Sample {
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.samples
}

// read takes one sample of iface.
func read(ctx context.Context, t target.Target, iface string) (Sample, bool) {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	// One interface's dump: a hub's other interfaces are not read a second
	// at a time. Its lines lack "all dump"'s interface column.
	out, err := t.Run(rctx, "wg", "show", iface, "dump")
	if err != nil {
		return Sample{}, false
	}
	var all bytes.Buffer
	for _, l := range bytes.SplitAfter(out, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			all.WriteString(iface + "\t")
			all.Write(l)
		}
	}
	wgs, err := parse.ParseWGDump(&all)
	if err != nil || len(wgs) != 1 {
		return Sample{}, false
	}
	s := Sample{At: time.Now(), Peers: map[string]Peer{}}
	for _, p := range wgs[0].Peers {
		s.Peers[p.PublicKey] = Peer{Endpoint: p.Endpoint, Handshake: p.LatestHandshake}
	}
	return s, len(s.Peers) > 0
}
