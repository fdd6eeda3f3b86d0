package lab

import (
	"context"
	"errors"
	"strconv"

	"golang.zx2c4.com/wireguard/wgctrl/wgtypes"
)

// This file builds A's clone (Config.CloneA): node a2, as a VM cloned from A
// or a second laptop set up from A's config is, holds A's private key and
// tunnel address and dials B through an uplink of its own (R's eth-c), with
// traffic of its own through the tunnel (a ping twice a second, its
// monitoring). B accepts both as the one peer and sends to whichever spoke
// last: the endpoint B holds for A's key takes turns between A's uplink and
// a2's, and A's own traffic through the tunnel barely gets through.

const (
	cloneA  = "198.18.0.2" // a2's uplink (RFC 2544 benchmarking space)
	cloneGW = "198.18.0.1"
)

// TunnelB is B's WireGuard address in every lab (the first tunnel's).
const TunnelB = tunnelB

// checkClone refuses what the clone does not build.
func (c Config) checkClone() error {
	if c.CloneA && (c.Topology != SiteToSite || c.HubMbit > 0 || c.Router || c.NATTimeout > 0) {
		return errors.New("--clone-a (a clone of node A) is site-to-site only, without --hub-rate, --router or --nat-timeout")
	}
	return nil
}

// cloneLink connects a2 to R.
func (b *builder) cloneLink(cfg Config) {
	if !cfg.CloneA {
		return
	}
	b.link("a2", "eth0", cloneA, "r", "eth-c", cloneGW, 0)
	b.on("a2", "ip", "route", "add", "default", "via", cloneGW)
}

// startClone brings up a2's WireGuard with A's key and address, its peer B
// as A has it, and a2's own traffic.
func (l *Lab) startClone(ctx context.Context, t *Tunnel, keyA wgtypes.Key) error {
	n := l.Nodes["a2"]
	ifname := "wg-" + l.Config.Name + "-a2"
	if l.Config.WireGuard == Kernel {
		if err := l.createKernelLink(ctx, n, ifname); err != nil {
			return err
		}
	} else {
		pid, err := l.startNode(ctx, n, ifname)
		if err != nil {
			return err
		}
		n.PID = pid
	}
	b := &builder{lab: l}
	b.on("a2", "ip", "addr", "add", t.AddrA+"/24", "dev", ifname)
	b.on("a2", "ip", "link", "set", "dev", ifname, "mtu", strconv.Itoa(l.Config.WGMTU), "up")
	if err := b.run(ctx); err != nil {
		return err
	}
	if err := l.wgSet(ctx, "a2", ifname, t.Port, keyA, "peer", t.KeyB, "endpoint", endpointB+":"+strconv.Itoa(t.Port),
		"allowed-ips", t.AddrB+"/32", "persistent-keepalive", "25"); err != nil {
		return err
	}
	n.WGInterface, n.TunnelAddr, n.PublicKey, n.UnderlayAddr, n.ListenPort = ifname, t.AddrA, t.KeyA, cloneA, t.Port
	_, err := l.detachProgram(ctx, n, "clone-ping", "ping", "-q", "-i", "0.5", t.AddrB)
	return err
}
