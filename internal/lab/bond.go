package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/wgperf/wgperf/internal/target"
)

// BondDev is A's bond to R when the lab has one (Config.BondSlaves).
const BondDev = "bond0"

// maxBondSlaves bounds the lab's bond: the ECMP case bonded three ports.
const maxBondSlaves = 4

func (c Config) checkBond() error {
	if c.BondSlaves == 0 {
		return nil
	}
	if c.BondSlaves < 2 || c.BondSlaves > maxBondSlaves {
		return fmt.Errorf("--bond %d: want 2..%d slaves", c.BondSlaves, maxBondSlaves)
	}
	if c.Topology != SiteToSite || c.HubMbit > 0 || c.CloneA || c.NATTimeout > 0 || c.Router || c.LAN {
		return errors.New("--bond is site-to-site only, without --hub-rate, --clone-a, --nat-timeout, --router or --lan")
	}
	switch c.BondHash {
	case "", "layer2", "layer2+3", "layer3+4":
		return nil
	}
	return fmt.Errorf("--bond-hash %q: want layer2, layer2+3 or layer3+4", c.BondHash)
}

// HasBonding reports whether this kernel has the bonding driver (loading
// it if it is a module): this machine's may not, a distro's (lab vm) has.
func HasBonding(ctx context.Context) bool {
	_, _ = target.Local().Run(ctx, "modprobe", "-q", "bonding")
	_, err := os.Stat("/sys/module/bonding")
	return err == nil
}

// bondUplink joins A to R by a bond of cfg.BondSlaves veth pairs, the ECMP
// case's LACP bond: 802.3ad at both ends (LACP on R as on a switch), A's
// hashing on cfg.BondHash (layer3+4 unless set), R's on layer3+4, each
// slave shaped both ways at the underlay's rate, so that one flow (one
// tunnel) gets one slave's rate and flows the hash spreads get the sum.
func (b *builder) bondUplink(cfg Config) {
	hash := cfg.BondHash
	if hash == "" {
		hash = "layer3+4"
	}
	bond := func(node, dev, hash string) {
		b.on(node, "ip", "link", "add", dev, "type", "bond", "mode", "802.3ad", "lacp_rate", "fast", "miimon", "100", "xmit_hash_policy", hash)
	}
	bond("a", BondDev, hash)
	bond("r", "eth-a", "layer3+4")
	for i := 1; i <= cfg.BondSlaves; i++ {
		slaveA, slaveR := "eth0s"+strconv.Itoa(i), "eth-as"+strconv.Itoa(i)
		b.host("ip", "link", "add", slaveA, "netns", b.lab.Netns("a"), "type", "veth", "peer", "name", slaveR, "netns", b.lab.Netns("r"))
		b.on("a", "ip", "link", "set", "dev", slaveA, "master", BondDev)
		b.on("r", "ip", "link", "set", "dev", slaveR, "master", "eth-a")
	}
	for _, end := range []struct{ node, dev, addr string }{{"a", BondDev, primaryA}, {"r", "eth-a", primaryGW}} {
		b.on(end.node, "ip", "addr", "add", end.addr+"/24", "dev", end.dev)
		b.on(end.node, "ip", "link", "set", "dev", end.dev, "up")
	}
	if r := cfg.Underlay.RateMbit; r > 0 {
		for i := 1; i <= cfg.BondSlaves; i++ {
			b.tbf("a", "eth0s"+strconv.Itoa(i), r)
			b.tbf("r", "eth-as"+strconv.Itoa(i), r)
		}
	}
}

// aggregatedPorts reads "Number of ports: N" of the active aggregator in
// /proc/net/bonding/DEV.
var aggregatedPorts = regexp.MustCompile(`Active Aggregator Info:\s+Aggregator ID: \d+\s+Number of ports: (\d+)`)

// waitBond waits until LACP has put every slave of both ends' bonds in
// their active aggregator (a second or three with lacp_rate fast): before
// that, the bond sends by one slave only.
func (l *Lab) waitBond(ctx context.Context) error {
	var last string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		ready := true
		for _, end := range []struct{ node, dev string }{{"a", BondDev}, {"r", "eth-a"}} {
			out, err := l.Target(end.node).Run(ctx, "cat", "/proc/net/bonding/"+end.dev)
			if err != nil {
				return err
			}
			m := aggregatedPorts.FindSubmatch(out)
			if m == nil || string(m[1]) != strconv.Itoa(l.Config.BondSlaves) {
				ready, last = false, end.node+": "+string(out)
			}
		}
		if ready {
			return nil
		}
	}
	return fmt.Errorf("LACP did not aggregate the %d slaves within 20 s: %s", l.Config.BondSlaves, last)
}
