package verify

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/wgperf/wgperf/internal/fix"
	"github.com/wgperf/wgperf/internal/report"
	"github.com/wgperf/wgperf/internal/target"
)

// FixCommand is "wgperf fix" as its flags ask for it: the fix.Command (its
// host still a spec), and what --verify and --html add.
type FixCommand struct {
	fix.Command
	HostSpec  string    // --host
	HostGiven bool      // --host was on the command line
	Stdin     io.Reader // read for --from -
	Measure   bool      // --verify
	Peer      string    // --server: the far end --verify measures to
	Seconds   int       // --time
	HTML      string    // --html
	// BenchProgress receives the measurements' progress (nil: quiet).
	BenchProgress io.Writer
	// LabPeer is, for a site of a wgperf lab, the other site (--server's
	// default); nil where there is no lab.
	LabPeer func(target.Target) (target.Target, bool)
}

// RunFix checks c's flags, reads --from, opens the host and runs
// fix.RunCommand, measured before and after with --verify; with --html it
// writes the report also when the change was rolled back or failed, and an
// error writing it then goes to warn. fix.ErrNotKept when a verified change
// was rolled back.
func RunFix(ctx context.Context, c FixCommand, out, warn io.Writer) error {
	switch {
	case c.Confirm > 0 && !c.Apply:
		return errors.New("--confirm needs --apply")
	case c.Measure && !c.Apply:
		return errors.New("--verify needs --apply (it measures before and after the change)")
	case c.HTML != "" && !c.Measure:
		return errors.New("--html needs --apply --verify (it reports the measurements before and after the change)")
	case c.Script && c.Apply:
		return errors.New("--print-script prints the plan for applying by hand; it does not go with --apply")
	// A file names hosts, but wgperf connects to (and changes) only a host
	// named on the command line.
	case c.From != "" && c.Apply && !c.HostGiven:
		return fmt.Errorf("--apply with --from needs --host: wgperf changes only a host named on the command line, never one named inside %s", c.From)
	}
	var err error
	if c.From != "" {
		if c.FromFindings, err = fix.ReadFrom(c.From, c.Stdin); err != nil {
			return err
		}
	}
	if c.Host.T, err = target.Parse(c.HostSpec); err != nil {
		return err
	}
	rec := &Record{}
	if c.Measure {
		// Before any work: without a far end there is nothing to measure against.
		vc := Config{Host: c.Host.T, Seconds: c.Seconds, Record: rec, Progress: c.BenchProgress}
		if vc.Peer, err = c.peer(); err != nil {
			return err
		}
		c.Verify = vc.Fix(c.Progress)
	}
	res, err := fix.RunCommand(ctx, c.Command, out)
	if res != nil && res.Journal != nil && c.HTML != "" {
		// Also when the change was rolled back or failed: the page says what was tried and measured.
		j := res.Journal
		herr := report.WriteFile(c.HTML, report.FromFix(j, j.Fixed(res.Findings), rec.Benches, rec.MTU))
		if herr != nil && err == nil {
			return herr
		}
		if herr != nil {
			fmt.Fprintln(warn, "wgperf:", herr)
		}
	}
	return err
}

// peer is where --verify measures to: --server when given, else, for a
// node of a wgperf lab, the node at the other end of its tunnel.
func (c FixCommand) peer() (target.Target, error) {
	if c.Peer != "" {
		return target.Parse(c.Peer)
	}
	if c.LabPeer != nil {
		if peer, ok := c.LabPeer(c.Host.T); ok {
			return peer, nil
		}
	}
	return nil, fmt.Errorf("--verify needs --server: the far end of the tunnel on %s, where iperf3 runs as the server (e.g. --server ssh:root@site-b)", c.Host.T)
}

// ECMPCommand is "wgperf fix ecmp" as its flags ask for it: the
// fix.ECMPCommand (its host still a spec), the defaults a wgperf lab gives,
// and what --verify measures.
type ECMPCommand struct {
	fix.ECMPCommand
	HostSpec       string // --host
	ServerSpec     string // --server
	InterfaceGiven bool   // --interface was on the command line
	Measure        bool   // --verify
	Addr           string // --tunnel-addr: where the streams go
	Streams        int    // --streams (0: 8 per tunnel)
	Seconds        int    // --time
	// BenchProgress receives the measurements' progress (nil: quiet).
	BenchProgress io.Writer
	// Lab is what the lab the host belongs to gives (the zero ECMPSite
	// outside a lab); nil where there is no lab.
	Lab func(target.Target) ECMPSite
}

// ECMPSite is what "fix ecmp" takes from the wgperf lab a site belongs to
// (lab.ECMPSite): the other site, the site's tunnel, site B's address to
// measure to (from A), and how the lab makes a WireGuard interface.
type ECMPSite struct {
	Peer      target.Target
	Interface string
	Addr      string
	Userspace func(dev string) string
}

// RunECMP checks c's flags, fills in what the lab gives and runs
// fix.RunECMPCommand, measured with parallel streams with --verify.
func RunECMP(ctx context.Context, c ECMPCommand, out io.Writer) error {
	if c.Measure && !c.Apply {
		return errors.New("--verify needs --apply (it measures before and after building the tunnels)")
	}
	if c.Confirm > 0 && !c.Apply {
		return errors.New("--confirm needs --apply")
	}
	t, err := target.Parse(c.HostSpec)
	if err != nil {
		return err
	}
	var lab ECMPSite
	if c.Lab != nil {
		lab = c.Lab(t)
	}
	// The other end: --server parsed once, or the lab's own node.
	c.Server = lab.Peer
	if c.ServerSpec != "" {
		if c.Server, err = target.Parse(c.ServerSpec); err != nil {
			return fmt.Errorf("--server: %w", err)
		}
	}
	if !c.InterfaceGiven && lab.Interface != "" && c.Server != nil {
		c.Interface = lab.Interface
	}
	if c.Addr == "" {
		c.Addr = lab.Addr
	}
	if c.Measure && c.Server != nil && c.Addr == "" {
		return errors.New("--verify needs --tunnel-addr: an address in a network the tunnels carry, where the server answers (the streams must take the multipath route)")
	}
	if c.Streams == 0 {
		c.Streams = min(8*c.Tunnels, 128)
	}
	c.Host.T, c.Host.WGUserspace = t, lab.Userspace
	if c.Measure {
		c.Verify = func(near, far target.Target) fix.Measure {
			p := Parallel{Client: near, Server: far, Addr: c.Addr, Streams: c.Streams, Seconds: c.Seconds}
			return NewParallel(p, c.BenchProgress)
		}
	}
	return fix.RunECMPCommand(ctx, c.ECMPCommand, out)
}
