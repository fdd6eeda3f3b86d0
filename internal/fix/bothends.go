package fix

import (
	"context"
	"fmt"
)

// BothEndsOutcome is what RunBothEnds did on each end.
type BothEndsOutcome struct {
	Far, Near *Outcome
	// NearTried: the far end's half was applied (or in place) and the near
	// end's was tried; an error before that is the far end's.
	NearTried bool
	// FarRolledBack: the far end's change was undone because the near end's
	// failed or was not kept.
	FarRolledBack bool
	// FarConfirmed: the near end's verification measured the tunnel through
	// both changes and kept them, and the far end's window was closed with it.
	FarConfirmed bool
}

// Kept reports whether both halves stand (applied, or already in place).
func (o *BothEndsOutcome) Kept() bool {
	if o == nil || o.Far == nil || o.Near == nil || o.FarRolledBack {
		return false
	}
	v := o.Near.Journal
	return v == nil || v.Verify == nil || v.Verify.Kept
}

// RunBothEnds applies a fix whose two halves go on the two ends of a tunnel
// and either alone cuts it (the catalog's BothEnds: a new listen port on the
// far end, the peer's endpoint moved to it on the near end): both ends or
// neither. The far end's half goes first, with its confirm window and no
// verification of its own (the tunnel is cut until the near end follows,
// so nothing could be measured through it); then the near end's, verified
// through the tunnel as near.Verify says. When the near end's fails or is
// not kept, the far end's change is rolled back too, by its journal, and the
// outcome says so; when the near end's is kept and confirmed (ConfirmKept),
// the far end's is confirmed with it.
func RunBothEnds(ctx context.Context, far, near Request) (*BothEndsOutcome, error) {
	far.Verify, far.ConfirmKept = nil, false
	out := &BothEndsOutcome{}
	var err error
	if out.Far, err = Run(ctx, far); err != nil {
		return out, fmt.Errorf("the far end's half, on %s: %w", far.target(), err)
	}
	out.NearTried = true
	if out.Far.Journal != nil {
		near.otherHalf = out.Far.Journal.ID
	}
	far.Env = out.Far.Env
	nearOut, nearErr := Run(ctx, near)
	out.Near = nearOut
	notKept := nearErr == nil && nearOut.Journal != nil && nearOut.Journal.Verify != nil && !nearOut.Journal.Verify.Kept
	if nearErr == nil && !notKept {
		if nearOut.Confirmed && out.Far.Journal != nil && far.Confirm > 0 {
			if err := confirmByID(ctx, far.Env, out.Far.Journal.ID); err != nil {
				return out, fmt.Errorf("confirm the far end's half, on %s: %w", far.Env.T, err)
			}
			out.FarConfirmed = true
		}
		return out, nil
	}
	why := "the near end's half, on " + near.target().String()
	if nearErr != nil {
		why += " failed: " + nearErr.Error()
	} else {
		why += " did not improve the tunnel and was rolled back"
	}
	if out.Far.Journal == nil {
		return out, fmt.Errorf("%s (the far end's half was already in place)", why)
	}
	j, err := LoadJournal(ctx, far.Env, out.Far.Journal.ID)
	if err == nil {
		err = rollback(ctx, far.Env, j)
	}
	if err != nil {
		return out, fmt.Errorf("%s; rolling back the far end's half, on %s, failed: %w", why, far.Env.T, err)
	}
	out.Far.Journal, out.FarRolledBack = j, true
	if nearErr != nil {
		return out, fmt.Errorf("%s; the far end's half, on %s, was rolled back too", why, far.Env.T)
	}
	return out, nil
}

// confirmByID confirms the journal id on env (not merely the newest: a lab's
// two ends may share one journal folder).
func confirmByID(ctx context.Context, env *Env, id string) error {
	j, err := LoadJournal(ctx, env, id)
	if err != nil {
		return err
	}
	return confirm(ctx, env, j)
}
