//go:build !linux || router

package drops

import (
	"context"

	"github.com/wgperf/wgperf/internal/target"
)

// Built is false: this build carries no drop sampler (the router build
// leaves it out, with cilium/ebpf, to fit a router's flash).
const Built = false

// ForTarget has no sampler to open in this build.
func ForTarget(_ context.Context, t target.Target) Sampler {
	return None(t.String(), "this build of wgperf carries no drop sampler (the router build leaves it out: see wgperf version)")
}
