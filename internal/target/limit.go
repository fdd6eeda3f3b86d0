package target

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"sync/atomic"
)

// MaxOutput bounds what wgperf keeps of one command's standard output (and
// of one file read). The largest real outputs are nft rulesets with big
// block lists, a few MiB; a host that prints more is broken or hostile, and
// must not exhaust the memory of the machine that reads it (an exporter
// collecting many routers above all).
const MaxOutput = 32 << 20

// ErrOutputTooLarge is wrapped by the error of a command whose output was cut
// at MaxOutput or at its context's read budget. The command is stopped.
var ErrOutputTooLarge = errors.New("output cut")

// budget is what the commands run under one context may read together. A
// budget set under another draws from both.
type budget struct {
	size   int64
	left   atomic.Int64
	parent *budget
	drawn  atomic.Int64 // taken from parent and not given back
	spent  string       // what ran out, for the error
}

type budgetKey struct{}

// WithReadBudget returns a context under which every command and file read
// on any target draws from one budget of n bytes of output, on top of
// MaxOutput per command and of any budget ctx has already: a collection
// reads at most n bytes from a host, however its output is spread over
// commands.
func WithReadBudget(ctx context.Context, n int64) context.Context {
	b := &budget{size: n, spent: fmt.Sprintf("the %d MiB all commands of this collection may print together are spent", n>>20)}
	b.left.Store(n)
	b.parent, _ = ctx.Value(budgetKey{}).(*budget)
	return context.WithValue(ctx, budgetKey{}, b)
}

// ReadPool is one read budget for the collections a process runs at once
// (an exporter's): each draws its commands' output from it while it runs
// and gives it back when done, so together they hold at most its size
// however many run and whatever their hosts print.
type ReadPool struct{ b budget }

// NewReadPool returns a pool of n bytes.
func NewReadPool(n int64) *ReadPool {
	p := &ReadPool{}
	p.b.size = n
	p.b.spent = fmt.Sprintf("the %d MiB all collections running at once may read together are spent", n>>20)
	p.b.left.Store(n)
	return p
}

// Use returns a context whose commands draw from the pool, and the function
// that gives back what they drew, to call once their output is no longer
// held. A collection's own budget goes under it (collect.Collect sets one):
// ctx must carry none yet.
func (p *ReadPool) Use(ctx context.Context) (context.Context, func()) {
	if _, ok := ctx.Value(budgetKey{}).(*budget); ok {
		panic("target: ReadPool.Use under a read budget")
	}
	u := &budget{size: math.MaxInt64, parent: &p.b}
	u.left.Store(math.MaxInt64)
	var once sync.Once
	return context.WithValue(ctx, budgetKey{}, u), func() { once.Do(func() { p.b.left.Add(u.drawn.Swap(0)) }) }
}

// Left is what the pool still has (tests, metrics).
func (p *ReadPool) Left() int64 { return p.b.left.Load() }

// avail is what b and its parents still allow.
func (b *budget) avail() int64 {
	left := b.left.Load()
	if b.parent != nil {
		left = min(left, b.parent.avail())
	}
	return left
}

// take returns how many of n bytes the budget (and its parents) still
// allow, and spends them; short is the budget that allowed fewer than n.
func (b *budget) take(n int64) (got int64, short *budget) {
	for {
		left := b.left.Load()
		got = min(n, left)
		if b.left.CompareAndSwap(left, left-got) {
			break
		}
	}
	if got < n {
		short = b
	}
	if b.parent != nil && got > 0 {
		pgot, pshort := b.parent.take(got)
		if pgot < got {
			b.left.Add(got - pgot)
			got, short = pgot, pshort
		}
		b.drawn.Add(pgot)
	}
	return got, short
}

// limitedBuffer keeps a command's output up to MaxOutput and its context's
// budget. At the limit it keeps what fits, records why it stopped, stops the
// command through stop and refuses further writes.
type limitedBuffer struct {
	data   []byte
	max    int64
	budget *budget // nil: none
	stop   func()
	cut    string // why the output was cut; "" while it was not
}

func newLimitedBuffer(ctx context.Context, stop func()) *limitedBuffer {
	b, _ := ctx.Value(budgetKey{}).(*budget)
	return &limitedBuffer{max: MaxOutput, budget: b, stop: stop}
}

func (w *limitedBuffer) Write(p []byte) (int, error) {
	if w.cut != "" {
		return 0, ErrOutputTooLarge
	}
	n := int64(len(p))
	if room := w.max - int64(len(w.data)); n > room {
		n = room
		w.cut = fmt.Sprintf("more than %d MiB from one command", w.max>>20)
	}
	if w.budget != nil {
		if got, short := w.budget.take(n); got < n {
			n = got
			w.cut = short.spent
		}
	}
	w.grow(int(n))
	w.data = append(w.data, p[:n]...)
	if w.cut != "" {
		if w.stop != nil {
			w.stop()
		}
		return int(n), ErrOutputTooLarge
	}
	return int(n), nil
}

// grow makes room for n more bytes, doubling as a buffer does but never past
// max: a hostile output costs at most about twice max in allocations, not
// a doubling past it.
func (w *limitedBuffer) grow(n int) {
	need := len(w.data) + n
	if need <= cap(w.data) {
		return
	}
	size := min(max(2*cap(w.data), need, 64<<10), int(w.max))
	if w.budget != nil {
		// Never room for more than the budget still allows.
		size = int(min(int64(size), int64(need)+w.budget.avail()))
	}
	grown := make([]byte, len(w.data), max(size, need))
	copy(grown, w.data)
	w.data = grown
}

// Bytes is what was kept.
func (w *limitedBuffer) Bytes() []byte { return w.data }

// err is the reason the output was cut, or nil.
func (w *limitedBuffer) err() error {
	if w.cut == "" {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrOutputTooLarge, w.cut)
}

// readLimited reads r as a command's output would be read: up to MaxOutput
// and ctx's budget.
func readLimited(ctx context.Context, r io.Reader) ([]byte, error) {
	w := newLimitedBuffer(ctx, nil)
	if _, err := io.Copy(w, r); err != nil && w.cut == "" {
		return nil, err
	}
	return w.Bytes(), w.err()
}
