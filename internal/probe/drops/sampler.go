package drops

import (
	"context"
)

// none is the sampler of a host where drops cannot be sampled.
type none struct{ status Status }

// None is a sampler that counts nothing, for why.
func None(host, why string) Sampler {
	return none{Status{Host: host, Tier: TierNone, Why: why}}
}

func (n none) Status() Status                             { return n.status }
func (n none) Snapshot(context.Context) (Snapshot, error) { return Snapshot{}, nil }
func (n none) Close() error                               { return nil }
