package clock

import (
	"testing"
	"time"
)

func TestWaitUntil(t *testing.T) {
	f := &Fake{T: time.Unix(1000, 0)}
	c := f.Clock()
	calls := 0
	if c.WaitUntil(time.Second, 100*time.Millisecond, func() bool { calls++; return calls == 3 }) != true || calls != 3 {
		t.Errorf("done on the third check: got %d checks", calls)
	}
	if got := c.Since(time.Unix(1000, 0)); got != 200*time.Millisecond {
		t.Errorf("two sleeps of 100ms, clock moved %s", got)
	}
	start := f.T
	if c.WaitUntil(time.Second, 100*time.Millisecond, func() bool { return false }) {
		t.Error("never done, reported done")
	}
	if got := f.T.Sub(start); got != time.Second {
		t.Errorf("gave up after %s, want the 1s deadline", got)
	}
}

func TestZeroIsRealTime(t *testing.T) {
	var c Clock
	before := time.Now()
	c.Sleep(time.Millisecond)
	if c.Since(before) < time.Millisecond {
		t.Error("zero Clock did not sleep")
	}
}
