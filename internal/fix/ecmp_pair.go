package fix

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"time"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target"
)

// Raises are the findings this package builds: the ECMP plan of both ends ("wgperf fix ecmp --server"). Declared here as
// an analyzer declares its facts; TestRaises (internal/catalog) holds it to
// the finding literals of the package's code.
var Raises = []catalog.ID{catalog.RouteECMPSuggested}

// ECMPPair is "wgperf fix ecmp --server": N tunnels between the two ends of
// an existing one, a half of the ECMP fix (remedy.KindECMP) on each.
type ECMPPair struct {
	// Near routes its networks over the tunnels (--host); Far is the other
	// end (--server), whose half goes first.
	Near, Far Host
	Interface string // Near's existing tunnel
	Tunnels   int
	Apply     bool
	Confirm   time.Duration
	// ConfirmKept confirms both halves once the near end's verification kept them.
	ConfirmKept bool
	// Verify measures the near end's half before and after (the far end's
	// alone changes nothing a flow takes).
	Verify   func(ctx context.Context, p *Plan) (Measure, error)
	Progress func(string)
}

// ECMPRequests reads both ends and returns the fix requests of the two
// halves: each names the public keys the other end's new tunnels will have,
// read (never their private keys) from that end before anything changes.
func ECMPRequests(ctx context.Context, e ECMPPair) (near, far Request, err error) {
	nearEnv, err := e.Near.open(ctx)
	if err != nil {
		return near, far, err
	}
	farEnv, err := e.Far.open(ctx)
	if err != nil {
		return near, far, err
	}
	nearWG, farWG, err := peerInterface(ctx, nearEnv, farEnv, e.Interface)
	if err != nil {
		return near, far, err
	}
	farIface := farWG.Name
	ports, peerPorts, err := spreadPorts(ctx, e, nearEnv, farEnv, nearWG, farWG)
	if err != nil {
		return near, far, err
	}
	if e.Progress != nil {
		e.Progress(fmt.Sprintf("reading the public keys of the new tunnels on %s and %s", e.Near.T, e.Far.T))
	}
	nearKeys, err := remedy.ECMPPublicKeys(ctx, &nearEnv.Env, e.Interface, e.Tunnels)
	if err != nil {
		return near, far, err
	}
	farKeys, err := remedy.ECMPPublicKeys(ctx, &farEnv.Env, farIface, e.Tunnels)
	if err != nil {
		return near, far, err
	}
	req := func(env *Env, iface string, peerKeys []string, other *Env, ports, peerPorts []int) (Request, error) {
		r, err := remedy.ECMPOnPorts(iface, e.Tunnels, peerKeys, ports, peerPorts)
		if err != nil {
			return Request{}, err
		}
		f := finding.Finding{ID: catalog.RouteECMPSuggested, Severity: finding.Info, Host: target.Of(env.T),
			Title: "One tunnel holds the flows back: spread them over several",
			Fixes: []finding.Fix{remedy.Fix("one half of "+fmt.Sprint(e.Tunnels)+" tunnels between "+e.Near.T.String()+" and "+
				e.Far.T.String()+"; the half on "+other.T.String()+" goes with it", r)}}
		return Request{Env: env, Findings: []finding.Finding{f}, Apply: e.Apply, Confirm: e.Confirm, ConfirmKept: e.ConfirmKept,
			Progress: e.Progress}, nil
	}
	if near, err = req(nearEnv, e.Interface, farKeys, farEnv, ports, peerPorts); err != nil {
		return near, far, err
	}
	if far, err = req(farEnv, farIface, nearKeys, nearEnv, peerPorts, ports); err != nil {
		return near, far, err
	}
	near.Verify = e.Verify
	return near, far, nil
}

// RunECMP plans both halves and, with Apply, applies them as one
// (RunBothEnds): the far end's first, then the near end's, measured; the
// far end's is rolled back when the near end's fails or is not kept. Each
// half has its own journal on its host, so "wgperf fix rollback" on each
// end restores it.
func RunECMP(ctx context.Context, e ECMPPair) (*BothEndsOutcome, error) {
	near, far, err := ECMPRequests(ctx, e)
	if err != nil {
		return nil, err
	}
	if !e.Apply {
		out := &BothEndsOutcome{}
		if out.Far, err = Run(ctx, far); err != nil {
			return out, fmt.Errorf("%s: %w", far.Env.T, err)
		}
		if out.Near, err = Run(ctx, near); err != nil {
			return out, fmt.Errorf("%s: %w", near.Env.T, err)
		}
		return out, nil
	}
	return RunBothEnds(ctx, far, near)
}

// spreadPorts chooses the new tunnels' ports on both ends when a bond that
// hashes ports carries the tunnel at either end (remedy.SpreadPorts): the
// usual consecutive ports at both ends cancel in its hash and put every
// tunnel on one slave of 2 or 4. nil for the usual ports.
func spreadPorts(ctx context.Context, e ECMPPair, nearEnv, farEnv *Env, near, far facts.WGInterface) (ports, peerPorts []int, err error) {
	if len(near.Peers) != 1 || len(far.Peers) != 1 || near.ListenPort == 0 || far.ListenPort == 0 {
		return nil, nil, nil // the halves' plans say why they cannot go on
	}
	farEP, err := netip.ParseAddrPort(near.Peers[0].Endpoint)
	if err != nil {
		return nil, nil, nil
	}
	np, err := remedy.ReadBondPath(ctx, &nearEnv.Env, farEP.Addr().Unmap())
	if err != nil {
		return nil, nil, err
	}
	back := np.Src
	if ep, err := netip.ParseAddrPort(far.Peers[0].Endpoint); err == nil {
		back = ep.Addr().Unmap() // near as far sees it (through a NAT: the NAT's address)
	}
	if !back.IsValid() {
		return nil, nil, nil
	}
	fp, err := remedy.ReadBondPath(ctx, &farEnv.Env, back)
	if err != nil {
		return nil, nil, err
	}
	ports, peerPorts, ok := remedy.SpreadPorts(np.Src, farEP.Addr().Unmap(), near.ListenPort, int(farEP.Port()), e.Tunnels, np.Slaves, fp.Slaves)
	if !ok {
		return nil, nil, nil
	}
	if e.Progress != nil {
		e.Progress(fmt.Sprintf("a bond hashing ports carries the tunnel (%s: %d slaves, %s: %d): the new tunnels listen on %v here and %v there, "+
			"where the hash sends each by another slave", nearEnv.T, np.Slaves, farEnv.T, fp.Slaves, ports, peerPorts))
	}
	return ports, peerPorts, nil
}

// peerInterface is the interface on far whose peer is near's iface (by
// near's public key): the other end of the tunnel; with near's own.
func peerInterface(ctx context.Context, near, far *Env, iface string) (nearWG, farWG facts.WGInterface, err error) {
	dump := func(env *Env) ([]facts.WGInterface, error) {
		out, err := env.T.Run(ctx, "wg", "show", "all", "dump")
		if err != nil {
			return nil, fmt.Errorf("%s: wg show all dump: %w", env.T, err)
		}
		return parse.ParseWGDump(bytes.NewReader(out))
	}
	nw, err := dump(near)
	if err != nil {
		return nearWG, farWG, err
	}
	i := slices.IndexFunc(nw, func(w facts.WGInterface) bool { return w.Name == iface })
	if i < 0 {
		return nearWG, farWG, fmt.Errorf("%s: %s is not a WireGuard interface", near.T, iface)
	}
	fw, err := dump(far)
	if err != nil {
		return nearWG, farWG, err
	}
	name, err := farInterface(fw, nw[i].PublicKey, far.T.String(), iface)
	if err != nil {
		return nearWG, farWG, err
	}
	j := slices.IndexFunc(fw, func(w facts.WGInterface) bool { return w.Name == name })
	return nw[i], fw[j], nil
}

// farInterface finds the interface of ifaces with a peer whose public key is key.
func farInterface(ifaces []facts.WGInterface, key, far, iface string) (string, error) {
	var found []string
	for _, w := range ifaces {
		if slices.ContainsFunc(w.Peers, func(p facts.WGPeer) bool { return p.PublicKey == key }) {
			found = append(found, w.Name)
		}
	}
	if len(found) != 1 {
		return "", fmt.Errorf("%s: %d WireGuard interfaces have %s's key as a peer (%v): want the one other end of its tunnel", far, len(found), iface, found)
	}
	return found[0], nil
}

// ECMPResult is what "wgperf fix ecmp --server" planned and did on each end.
type ECMPResult struct {
	Near ECMPEnd `json:"near"`
	Far  ECMPEnd `json:"far"`
	// FarRolledBack: the far end's half was undone because the near end's
	// failed or was not kept.
	FarRolledBack bool `json:"far_rolled_back,omitempty"`
}

// ECMPEnd is one end's half: its plan and, once applied, its journal.
type ECMPEnd struct {
	Host    string   `json:"host"`
	Plan    *Plan    `json:"plan"`
	Journal *Journal `json:"journal,omitempty"`
}

// Result is the outcome as ECMPResult.
func (o *BothEndsOutcome) ECMPResult() *ECMPResult {
	res := &ECMPResult{FarRolledBack: o.FarRolledBack}
	for _, e := range []struct {
		out *Outcome
		to  *ECMPEnd
	}{{o.Near, &res.Near}, {o.Far, &res.Far}} {
		if e.out != nil {
			e.to.Plan, e.to.Journal = e.out.Plan, e.out.Journal
			if e.out.Plan != nil {
				e.to.Host = e.out.Plan.Host
			}
		}
	}
	return res
}

// WriteText prints each end's plan, far end first (its half goes first),
// then what was applied.
func (r *ECMPResult) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	for _, e := range []ECMPEnd{r.Far, r.Near} {
		if e.Plan == nil {
			continue
		}
		if ew.err == nil {
			ew.err = e.Plan.WriteText(w)
		}
		ew.printf("\n")
	}
	for _, e := range []ECMPEnd{r.Far, r.Near} {
		if e.Journal == nil {
			continue
		}
		ew.printf("On %s:\n", e.Host)
		if ew.err == nil {
			ew.err = e.Journal.WriteText(w)
		}
	}
	if r.FarRolledBack {
		ew.printf("The half on %s was rolled back with the one on %s.\n", r.Far.Host, r.Near.Host)
	}
	return ew.err
}
