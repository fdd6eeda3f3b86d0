package exporter

import (
	"context"
	"sync"
	"time"
)

// A collection holds one of Concurrent working slots while it runs. One
// still running after a quarter of its time is most likely waiting, not
// working: on a router that does not answer (ssh waits its connect timeout)
// or answers slowly. It then moves to one of WaitingFactor×Concurrent
// waiting slots and frees its working slot, so unreachable and slow routers
// cost their own scrapes only, not a queue for the healthy routers behind
// them (issue 54: 2 dead and 2 slow of 40 routers kept 4 of the 8 slots
// for 9.5 s each and the healthy routers' median scrape took 6.5 s). Both
// bounds hold: when the waiting slots are full, the collection keeps its
// working slot. The quarter adapts to the scrape timeout Prometheus sends.

// A collection queued for a working slot a quarter of its time is waiting
// too, in the queue instead of on its router: the working slots are all
// held by collections that take longer than the interval's share allows
// (a fleet of 1,000 routers every 60 s at 0.5 s a collection needs about
// 8 at once, more on a loaded machine). It then takes a waiting slot, if
// one is free, and runs there: the collections at once stay bounded by
// (1+WaitingFactor)×Concurrent, and the queue cannot outgrow the scrape
// timeout while slots stand free.

// WaitingFactor is how many waiting collections a working slot allows.
const WaitingFactor = 4

// minWaitAfter is the least time a collection works before it may move to
// a waiting slot: a healthy router's collection over ssh takes 0.5 to 1 s.
const minWaitAfter = time.Second

// holdSlot is called with a working slot held (p.sem) for a collection that
// may take until deadline; the returned release frees whichever slot the
// collection holds by then.
func (p *Prober) holdSlot(deadline time.Time) (release func()) {
	after := max(time.Until(deadline)/4, minWaitAfter)
	var mu sync.Mutex
	waiting, done := false, false
	timer := time.AfterFunc(after, func() {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return
		}
		select {
		case p.waitSem <- struct{}{}:
			waiting = true
			<-p.sem
		default: // every waiting slot taken: keep the working one
		}
	})
	return func() {
		timer.Stop()
		mu.Lock()
		defer mu.Unlock()
		done = true
		if waiting {
			<-p.waitSem
		} else {
			<-p.sem
		}
	}
}

// takeSlot waits for a working slot, or after a quarter of the time until
// deadline for a waiting one, until ctx is done; release frees whichever
// slot the collection holds when it ends.
func (p *Prober) takeSlot(ctx context.Context, deadline time.Time) (release func(), ok bool) {
	select {
	case p.sem <- struct{}{}:
		return p.holdSlot(deadline), true
	default:
	}
	queued := time.NewTimer(max(time.Until(deadline)/4, minWaitAfter))
	defer queued.Stop()
	select {
	case p.sem <- struct{}{}:
		return p.holdSlot(deadline), true
	case <-queued.C:
	case <-ctx.Done():
		return nil, false
	}
	select {
	case p.sem <- struct{}{}:
		return p.holdSlot(deadline), true
	case p.waitSem <- struct{}{}:
		return func() { <-p.waitSem }, true
	case <-ctx.Done():
		return nil, false
	}
}
