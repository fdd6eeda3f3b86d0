//go:build !linux || router

package drops

import (
	"context"
	"errors"

	"github.com/wgperf/wgperf/internal/target"
)

// Built is false: this build carries no drop sampler (the router build
// leaves cilium/ebpf out to fit a router's flash).
const Built = false

// OpenLocal has no kernel counter to open in this build.
func OpenLocal(context.Context, target.Target) (Sampler, error) {
	return nil, errors.New("this build of wgperf carries no drop sampler (the router build leaves it out: see wgperf version)")
}
