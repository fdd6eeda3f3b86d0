// Package clock is the time source probes wait with. The zero Clock is the
// real one; tests set Now and Sleep so waiting for a process or a deadline
// takes no wall time and is deterministic.
package clock

import "time"

// Clock reads and waits on time.
type Clock struct {
	NowFunc   func() time.Time    // nil: time.Now
	SleepFunc func(time.Duration) // nil: time.Sleep
}

// Now is the current time.
func (c Clock) Now() time.Time {
	if c.NowFunc == nil {
		return time.Now()
	}
	return c.NowFunc()
}

// Sleep waits for d.
func (c Clock) Sleep(d time.Duration) {
	if c.SleepFunc == nil {
		time.Sleep(d)
		return
	}
	c.SleepFunc(d)
}

// Since is the time passed since t.
func (c Clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// WaitUntil checks done every step until it holds or d has passed, and
// reports whether it held.
func (c Clock) WaitUntil(d, step time.Duration, done func() bool) bool {
	for deadline := c.Now().Add(d); c.Now().Before(deadline); c.Sleep(step) {
		if done() {
			return true
		}
	}
	return done()
}

// Fake is a clock that only moves when it sleeps, for tests.
type Fake struct{ T time.Time }

// Clock returns a Clock reading and advancing f.
func (f *Fake) Clock() Clock {
	return Clock{NowFunc: func() time.Time { return f.T }, SleepFunc: func(d time.Duration) { f.T = f.T.Add(d) }}
}
