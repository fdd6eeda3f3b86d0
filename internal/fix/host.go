package fix

import (
	"context"

	"github.com/wgperf/wgperf/internal/target"
)

// Host is a host a fix goes to before it is read: what "wgperf fix", doctor
// --fix and the lab's scenarios name. Run reads it (Detect) as the first step
// of the one fix sequence: detect, plan, apply, verify.
type Host struct {
	T target.Target
	// Root is the root of the configuration files ("" or "/" unless a test
	// points it at a temporary directory).
	Root string
	// WGUserspace, when set, is how a new tunnel is made there (see
	// remedy.Env.WGUserspace): a wgperf lab's userspace nodes.
	WGUserspace func(dev string) string
}

// open reads the host: its kernel, platform and firewall.
func (h Host) open(ctx context.Context) (*Env, error) {
	env, err := Detect(ctx, h.T, h.Root)
	if err != nil {
		return nil, err
	}
	env.WGUserspace = h.WGUserspace
	return env, nil
}

// target is the host's target, whether read yet or not.
func (r *Request) target() target.Target {
	if r.Env != nil {
		return r.Env.T
	}
	return r.Host.T
}
