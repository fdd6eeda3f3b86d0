package fix

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/target"
)

// ECMPCommand is "wgperf fix ecmp": N tunnels between the two ends of one,
// planned on both (Server set) or written as wg-quick configs (not).
type ECMPCommand struct {
	Host Host
	// Server is the other end, open (nil for the configs to install by hand).
	Server    target.Target
	Interface string
	Tunnels   int
	Networks  []string // without Server: the remote networks to spread
	Apply     bool
	Confirm   time.Duration
	// Verify, when set, measures the near end's half before and after,
	// between the two ends (the far one Server).
	Verify   func(near, far target.Target) Measure
	JSON     bool
	Version  string
	Progress func(string)
}

// RunECMPCommand runs c and prints its plans (and journals) or configs to
// out; ErrNotKept when the verification rolled the change back.
func RunECMPCommand(ctx context.Context, c ECMPCommand, out io.Writer) error {
	if c.Server == nil {
		if c.Apply {
			return errors.New("--apply needs --server: both ends of the tunnel get new tunnels (e.g. --server ssh:root@site-b)")
		}
		in, err := ReadECMPInput(ctx, c.Host, c.Interface)
		if err != nil {
			return err
		}
		in.Tunnels, in.Networks = c.Tunnels, c.Networks
		plan, err := PlanECMP(in)
		if err != nil {
			return err
		}
		return plan.Write(out)
	}
	farT := c.Server
	far := Host{T: farT, Root: c.Host.Root, WGUserspace: c.Host.WGUserspace}
	pair := ECMPPair{Near: c.Host, Far: far, Interface: c.Interface, Tunnels: c.Tunnels, Apply: c.Apply, Confirm: c.Confirm, Progress: c.Progress}
	if c.Verify != nil {
		pair.Verify = func(context.Context, *Plan) (Measure, error) { return c.Verify(c.Host.T, farT), nil }
	}
	res, err := RunECMP(ctx, pair)
	if res == nil {
		return err
	}
	r := res.ECMPResult()
	var perr error
	if c.JSON {
		perr = document.Write(out, document.FixECMP, c.Version, r)
	} else {
		perr = r.WriteText(out)
	}
	switch {
	case perr != nil:
		return perr
	case err != nil:
		return err
	case !c.Apply && !c.JSON:
		_, err = fmt.Fprintf(out, "Nothing was changed. To apply: wgperf fix ecmp --host %s --server %s --tunnels %d --apply [--verify] [--confirm 60s]\n", c.Host.T, farT, c.Tunnels)
		return err
	case c.Apply && !res.Kept():
		return ErrNotKept
	case c.Apply && !c.JSON:
		_, err = fmt.Fprintf(out, "Undo with: wgperf fix rollback --host %s, then wgperf fix rollback --host %s\n", c.Host.T, farT)
		return err
	}
	return nil
}
