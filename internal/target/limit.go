package target

import (
	"context"
	"errors"
	"fmt"
	"io"
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

// budget is what the commands run under one context may read together.
type budget struct {
	size int64
	left atomic.Int64
}

type budgetKey struct{}

// WithReadBudget returns a context under which every command and file read
// on any target draws from one budget of n bytes of output, on top of
// MaxOutput per command: a collection reads at most n bytes from a host,
// however its output is spread over commands.
func WithReadBudget(ctx context.Context, n int64) context.Context {
	b := &budget{size: n}
	b.left.Store(n)
	return context.WithValue(ctx, budgetKey{}, b)
}

// take returns how many of n bytes the budget still allows, and spends them.
func (b *budget) take(n int64) int64 {
	for {
		left := b.left.Load()
		got := min(n, left)
		if b.left.CompareAndSwap(left, left-got) {
			return got
		}
	}
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
		if got := w.budget.take(n); got < n {
			n = got
			w.cut = fmt.Sprintf("the %d MiB all commands of this collection may print together are spent", w.budget.size>>20)
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
