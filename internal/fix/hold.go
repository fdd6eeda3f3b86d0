package fix

import (
	"context"
	"fmt"
	"time"

	"github.com/wgperf/wgperf/internal/remedy"
)

// Held is a change made for one measurement (the endpoint routed through
// another uplink while the tunnel is measured over it): journaled like any
// fix, with a watchdog that rolls it back at its deadline, so it is removed
// even when wgperf is cut off mid-run. Release removes it at once.
type Held struct {
	env *Env
	j   *Journal
}

// Hold reads h and makes rem's change there for at most d. It refuses,
// changing nothing, while an earlier fix awaits confirmation (its watchdog
// would revert it under the measurement), as apply does.
func Hold(ctx context.Context, h Host, rem remedy.Remedy, d time.Duration) (*Held, error) {
	env, err := h.open(ctx)
	if err != nil {
		return nil, err
	}
	return hold(ctx, env, rem, d)
}

func hold(ctx context.Context, env *Env, rem remedy.Remedy, d time.Duration) (*Held, error) {
	if d <= 0 {
		return nil, fmt.Errorf("hold %s: no deadline", rem.Describe())
	}
	p := &Plan{Host: env.T.String(), Platform: env.Platform, Kernel: env.Kernel,
		Items: []Item{{Description: rem.Describe(), rem: rem}}}
	j, err := Apply(ctx, env, p, ApplyOptions{Confirm: d})
	if err != nil {
		return nil, err
	}
	return &Held{env: env, j: j}, nil
}

// Journal is the held change's journal.
func (h *Held) Journal() *Journal { return h.j }

// Release rolls the change back. It fails when the watchdog already did
// (the measurement outlasted the deadline, so part of it ran without the
// change) or the undo failed.
func (h *Held) Release(ctx context.Context) error {
	fired, err := h.env.Exists(ctx, h.env.journalPath(h.j.ID, ".reverted"))
	if err != nil {
		return err
	}
	if fired {
		h.j.State = StateRolledBack
		return fmt.Errorf("%s: the watchdog rolled back %q at %s, before the measurement ended", h.env.T, h.j.Entries[0].Description,
			h.j.ConfirmBy.Format(time.RFC3339))
	}
	return rollback(ctx, h.env, h.j)
}
