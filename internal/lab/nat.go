package lab

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"golang.zx2c4.com/wireguard/wgctrl/wgtypes"
)

// This file builds the NAT topology (Config.NATTimeout): B sits behind R,
// which masquerades what B sends towards A, as the home router in front of a
// road warrior or a branch office does, and forgets an idle UDP mapping
// after NATTimeout seconds, as every NAT does. B dials A (A, the hub side,
// learns B's endpoint from the handshake) without a keepalive, so once the
// tunnel idles longer than that, A's packets for B go to a mapping R no
// longer holds: A cannot reach B until B sends again.

// natRules is R's NAT: everything leaving towards A takes R's address.
const natRules = "add table ip labnat; add chain ip labnat post { type nat hook postrouting priority 100; }; " +
	"add rule ip labnat post oifname eth-a masquerade"

// checkNAT refuses what the NAT topology does not build.
func (c Config) checkNAT() error {
	switch {
	case c.NATTimeout == 0:
		return nil
	case c.NATTimeout < 5 || c.NATTimeout > 600:
		return errors.New("--nat-timeout: want 5 to 600 seconds")
	case c.Topology != SiteToSite || c.HubMbit > 0 || c.Router || c.LAN || c.Clients > 0 || c.ClientPort > 0:
		return errors.New("the NAT topology (--nat-timeout) is site-to-site only, without --hub-rate, --router, --lan, clients behind A or --client-port")
	}
	return nil
}

// natOn makes R masquerade towards A with NATTimeout as its UDP timeouts
// (both: a mapping that saw replies is "stream", and lives as long).
func (b *builder) natOn(cfg Config) {
	if cfg.NATTimeout <= 0 {
		return
	}
	t := strconv.Itoa(cfg.NATTimeout)
	b.on("r", "nft", natRules)
	b.on("r", "sysctl", "-qw", "net.netfilter.nf_conntrack_udp_timeout="+t, "net.netfilter.nf_conntrack_udp_timeout_stream="+t)
}

// natTunnel sets up tunnel t's peers the NAT topology's way: A's peer for B
// has no endpoint (B dials in), B's for A has A's and no keepalive; B's
// first ping brings the tunnel up through the NAT.
func (l *Lab) natTunnel(ctx context.Context, t *Tunnel, keyA, keyB wgtypes.Key, aAllowed string) error {
	if err := l.wgSet(ctx, "a", t.IfA, t.Port, keyA, "peer", t.KeyB, "allowed-ips", aAllowed); err != nil {
		return err
	}
	return l.wgSet(ctx, "b", t.IfB, t.Port, keyB, "peer", t.KeyA, "endpoint", fmt.Sprintf("%s:%d", primaryA, t.Port),
		"allowed-ips", t.AddrA+"/32")
}
