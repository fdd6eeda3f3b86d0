package drops

import (
	"context"
	"strings"

	"github.com/wgperf/wgperf/internal/target"
)

// ForTarget opens the sampler that fits t: this process's kernel counter for
// a local or netns target, "wgperf drops --serve" over ssh for an ssh
// target. Where there is none it returns a sampler of tier "none" whose
// status says why; it never fails a measurement.
func ForTarget(ctx context.Context, t target.Target) Sampler {
	spec := t.String()
	var s Sampler
	var err error
	switch {
	case spec == "local" || strings.HasPrefix(spec, "netns:"):
		s, err = OpenLocal(ctx, t)
	case strings.HasPrefix(spec, "ssh:"):
		s, err = OpenRemote(ctx, t)
	default:
		return None(spec, "not a host wgperf can attach a sampler to")
	}
	if err != nil {
		return None(spec, err.Error())
	}
	return s
}

// none is the sampler of a host where drops cannot be sampled.
type none struct{ status Status }

// None is a sampler that counts nothing, for why.
func None(host, why string) Sampler {
	return none{Status{Host: host, Tier: TierNone, Why: why}}
}

func (n none) Status() Status                             { return n.status }
func (n none) Snapshot(context.Context) (Snapshot, error) { return Snapshot{}, nil }
func (n none) Close() error                               { return nil }
