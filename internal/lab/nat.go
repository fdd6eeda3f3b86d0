package lab

import (
	"errors"
	"strconv"
)

// This file builds the NAT topology (Config.NATTimeout): R masquerades what
// A sends towards B, as the home router in front of a road warrior or a
// branch office does, and forgets an idle UDP mapping after NATTimeout
// seconds, as every NAT does. A dials B without a keepalive, so once the
// tunnel idles longer than that, B's packets for A go to a mapping R no
// longer holds: B cannot reach A until A sends again.

// natRules is R's NAT: everything leaving towards B takes R's address.
const natRules = "add table ip labnat; add chain ip labnat post { type nat hook postrouting priority 100; }; " +
	"add rule ip labnat post oifname eth-b masquerade"

// checkNAT refuses what the NAT topology does not build.
func (c Config) checkNAT() error {
	switch {
	case c.NATTimeout == 0:
		return nil
	case c.NATTimeout < 5 || c.NATTimeout > 600:
		return errors.New("--nat-timeout: want 5 to 600 seconds")
	case c.Topology != SiteToSite || c.HubMbit > 0 || c.Router:
		return errors.New("the NAT topology (--nat-timeout) is site-to-site only, without --hub-rate or --router")
	}
	return nil
}

// natOn makes R masquerade towards B with NATTimeout as its UDP timeouts
// (both: a mapping that saw replies is "stream", and lives as long).
func (b *builder) natOn(cfg Config) {
	if cfg.NATTimeout <= 0 {
		return
	}
	t := strconv.Itoa(cfg.NATTimeout)
	b.on("r", "nft", natRules)
	b.on("r", "sysctl", "-qw", "net.netfilter.nf_conntrack_udp_timeout="+t, "net.netfilter.nf_conntrack_udp_timeout_stream="+t)
}

// keepalive is A's persistent keepalive for B: none behind the lab's NAT
// (the case), 25 s otherwise.
func (c Config) keepalive() string {
	if c.NATTimeout > 0 {
		return "off"
	}
	return "25"
}
