package exporter

import (
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
