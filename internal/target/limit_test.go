package target

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// allocated runs f and returns the bytes it allocated on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// hostile prints n bytes on standard output (and as many on standard error
// with both set), as a broken or hostile host would.
func hostile(n int, stderrToo bool) string {
	s := "head -c " + strconv.Itoa(n) + " /dev/zero | tr '\\0' x"
	if stderrToo {
		s += "; head -c " + strconv.Itoa(n) + " /dev/zero | tr '\\0' y >&2"
	}
	return s
}

// TestRunCapsHostileOutput is issue 30 item 4: a host that prints 100 MB (on
// both streams) costs at most about MaxOutput of memory, not 6.5 times what
// it printed; the command is stopped and its error names it and says why, on
// one line.
func TestRunCapsHostileOutput(t *testing.T) {
	const printed = 100 << 20
	var out []byte
	var err error
	start := time.Now()
	alloc := allocated(func() {
		out, err = Local().Run(context.Background(), "sh", "-c", hostile(printed, true))
	})
	t.Logf("100 MiB printed: kept %d MiB, allocated %d MiB in %v", len(out)>>20, alloc>>20, time.Since(start).Round(time.Millisecond))
	if err == nil || !strings.Contains(err.Error(), "output cut: more than 32 MiB from one command") ||
		!strings.Contains(err.Error(), "local: sh -c ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("err = %v, want one line naming the command and the cut", err)
	}
	if len(out) != 32<<20 {
		t.Errorf("kept %d bytes, want the first 32 MiB", len(out))
	}
	// A buffer that doubles up to 32 MiB allocates about 64 MiB in all;
	// reading everything allocates over 256 MiB.
	if alloc > 80<<20 {
		t.Errorf("allocated %d MiB for a 100 MiB output, want at most 80", alloc>>20)
	}
}

// TestReadBudgetSharedByCommands: commands under one read budget (a
// collection) together keep at most the budget, and the one that overdraws
// it says so.
func TestReadBudgetSharedByCommands(t *testing.T) {
	ctx := WithReadBudget(context.Background(), 3<<20)
	run := func() ([]byte, error) { return Local().Run(ctx, "sh", "-c", hostile(5<<19, false)) } // 2.5 MiB
	if out, err := run(); err != nil || len(out) != 5<<19 {
		t.Fatalf("command 1: %d bytes, %v; want all of it", len(out), err)
	}
	const spent = "output cut: the 3 MiB all commands of this collection may print together are spent"
	if out, err := run(); err == nil || !strings.Contains(err.Error(), spent) || len(out) != 1<<19 {
		t.Errorf("command 2: %d bytes, %v; want the 0.5 MiB left and %q", len(out), err, spent)
	}
	if out, err := run(); err == nil || len(out) != 0 {
		t.Errorf("command 3: %d bytes, %v; want nothing and the cut", len(out), err)
	}
	// A file read on the local target counts the same way.
	if b, err := Local().ReadFile(WithReadBudget(context.Background(), 1<<20), "/dev/zero"); err == nil || len(b) != 1<<20 {
		t.Errorf("ReadFile(/dev/zero) = %d bytes, %v; want 1 MiB and the cut", len(b), err)
	}
}

// TestReadPoolSharedAndGivenBack: collections that run at once under one
// pool hold at most the pool together, each within its own budget; the one
// that finds the pool spent says so, and a finished collection gives back
// what it drew.
func TestReadPoolSharedAndGivenBack(t *testing.T) {
	pool := NewReadPool(3 << 20)
	run := func(ctx context.Context) ([]byte, error) {
		return Local().Run(ctx, "sh", "-c", hostile(2<<20, false))
	}
	ctx1, release1 := pool.Use(context.Background())
	ctx1 = WithReadBudget(ctx1, 8<<20)
	if out, err := run(ctx1); err != nil || len(out) != 2<<20 {
		t.Fatalf("collection 1: %d bytes, %v; want all of it", len(out), err)
	}
	ctx2, release2 := pool.Use(context.Background())
	ctx2 = WithReadBudget(ctx2, 8<<20)
	const spent = "output cut: the 3 MiB all collections running at once may read together are spent"
	if out, err := run(ctx2); err == nil || !strings.Contains(err.Error(), spent) || len(out) != 1<<20 {
		t.Errorf("collection 2: %d bytes, %v; want the 1 MiB left and %q", len(out), err, spent)
	}
	release2()
	release1()
	release1()
	if left := pool.Left(); left != 3<<20 {
		t.Errorf("the pool has %d bytes left after both ended, want all 3 MiB", left)
	}
	// The collection's own budget still holds under the pool.
	ctx3, release3 := pool.Use(context.Background())
	defer release3()
	if out, err := run(WithReadBudget(ctx3, 1<<20)); err == nil || len(out) != 1<<20 || !strings.Contains(err.Error(), "this collection") {
		t.Errorf("collection 3: %d bytes, %v; want its own 1 MiB and the cut", len(out), err)
	}
}
