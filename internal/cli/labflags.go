//go:build !router

package cli

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/wgperf/wgperf/internal/lab"
)

// LabShapeFlags binds "wgperf lab up"'s flags: the topology, the underlay's
// shaping and faults, and the nodes' options.
func LabShapeFlags(f *pflag.FlagSet, cfg *lab.Config) {
	EnumFlag(f, (*string)(&cfg.Topology), "topology", string(lab.SiteToSite), []string{string(lab.SiteToSite), string(lab.MultiWAN)}, "site-to-site or multi-wan")
	f.IntVar(&cfg.Underlay.RateMbit, "rate", 200, "underlay rate in Mbit/s (tbf); 0 = unshaped")
	f.IntVar(&cfg.Underlay.LossPct, "loss", 0, "random loss of underlay UDP datagrams, percent")
	f.Float64Var(&cfg.Underlay.PathLossPct, "path-loss", 0, "random loss of every packet R forwards, both ways, percent, as on a real WAN (netem: a distro kernel, e.g. in lab vm)")
	UnitFlag(f, &cfg.Underlay.DelayMs, "delay", 0, time.Millisecond, "one-way delay added by R in each direction, e.g. 10ms (a bare number is ms; userspace; RTT grows by twice it)")
	f.IntVar(&cfg.Backup.RateMbit, "backup-rate", 20, "multi-wan backup uplink rate in Mbit/s")
	f.IntVar(&cfg.PathMTU, "path-mtu", 0, "MTU of the R—B link (0 = 1500)")
	f.BoolVar(&cfg.DropFragNeeded, "drop-frag-needed", false, "R drops ICMP frag-needed (PMTUD black hole)")
	f.IntVar(&cfg.SilentHopMTU, "silent-hop-mtu", 0, "R silently drops packets larger than this on their way to B, both ends keep 1500 (a black hole mid-path, A→B only); 0 = off")
	f.BoolVar(&cfg.SilentHopToA, "silent-hop-to-a", false, "the silent hop drops on the way to A instead (B→A only: an asymmetric return path)")
	f.IntVar(&cfg.UDPPolicePct, "udp-police", 0, "R polices forwarded UDP, each way, to this percent of --rate while TCP runs at the full rate (a carrier that limits UDP); 0 = off")
	f.IntVar(&cfg.PortPolicePct, "port-police", 0, "R polices only the UDP carrying the tunnel's port (source or destination), each way, to this percent of --rate (a carrier that throttles WireGuard's port); 0 = off")
	f.IntVar(&cfg.ClientPort, "client-port", 0, "A's WireGuard listens on this port instead of the tunnel's (a client with a port of its own); 0 = the same as B's")
	f.IntVar(&cfg.CPUQuotaPct, "cpu-quota", 0, "A's WireGuard process (with --hub-rate, the hub's) runs in a cgroup with a CPU quota of this percent of one CPU (docker --cpus, CPUQuota=; userspace only); 0 = off")
	f.IntVar(&cfg.KneePct, "knee", 0, "R passes A's tunnel packets until a second's worth goes above this percent of --rate, then collapses to half for 4 s (a receiver whose CPU saturates: collapse cycles); 0 = off")
	f.IntVar(&cfg.BondSlaves, "bond", 0, "join A to R by an 802.3ad bond of this many slaves (2..4), each shaped at --rate: one tunnel gets one slave's rate (needs the bonding driver, e.g. in lab vm); 0 = one link")
	f.StringVar(&cfg.BondHash, "bond-hash", "", "A's bond's xmit_hash_policy: layer2, layer2+3 or layer3+4 (default)")
	f.IntVar(&cfg.PathCycleSeconds, "path-cycle", 0, "R's links, both ways, run at --rate for half of every this many seconds and at --path-cycle-low percent of it for the other half (a path whose capacity cycles); 0 = off")
	f.IntVar(&cfg.PathCycleLowPct, "path-cycle-low", 0, "the cycling path's low phase, in percent of --rate (0 = 40)")
	f.BoolVar(&cfg.CloneA, "clone-a", false, "add node a2, a clone of A (a copied VM): A's private key and tunnel address, dialling B through an uplink of its own, with traffic of its own through the tunnel, so B's endpoint for A's key takes turns")
	f.IntVar(&cfg.NATTimeout, "nat-timeout", 0, "put B behind a NAT on R (masquerade towards A) that forgets an idle UDP mapping after this many seconds; B dials A without a keepalive (a road warrior behind a home router); 0 = off")
	f.IntVar(&cfg.HubMbit, "hub-rate", 0, "make R a road-warrior hub: A and B each tunnel to it and it forwards between them (a multi-hop path), its link to B shaped at this rate in Mbit/s both ways (A —— R at --rate); 0 = off")
	f.IntVar(&cfg.BackgroundPings, "background-pings", 0, "A runs a monitoring agent's ping (one raw ICMP socket, like telegraf's): this many echo requests back to back every second to its gateway; 0 = off")
	f.BoolVar(&cfg.Bursts, "bursts", false, "R hands packets on in bursts of up to 64 KB, as a NIC's interrupt does (netem slots where the kernel has netem, else UDP batches segmented on R: userspace WireGuard only), so a short receive backlog overflows")
	f.BoolVar(&cfg.DropFragments, "drop-fragments", false, "R drops the IP fragments it forwards (needs tc actions: a distro kernel, e.g. in lab vm)")
	f.IntVar(&cfg.ICMPLimit, "icmp-limit", 0, "drop ICMP above this rate on A's uplink, burst 5 (banIP style); 0 = off")
	EnumFlag(f, &cfg.ICMPLimitStyle, "icmp-limit-style", "", []string{lab.ICMPLimitBanIP, lab.ICMPLimitIptables},
		"how --icmp-limit is written: banip (nft limit rate over ... drop, the default) or iptables (-m limit ... -j ACCEPT, then -j DROP)")
	f.IntVar(&cfg.WGMTU, "wg-mtu", 1420, "WireGuard interface MTU")
	f.Var(LabImplFlag{P: &cfg.WireGuard}, "wireguard", "tunnel ends: kernel (the WireGuard module), userspace (embedded wireguard-go) or auto (kernel where the module loads)")
	f.IntVar(&cfg.UDPBuffer, "udp-buffer", 0, "cap the WireGuard nodes' UDP socket buffers to this many bytes (0 = wireguard-go's forced 7 MiB; -1 = ask for 7 MiB and let net.core.rmem_max cap it)")
	f.IntVar(&cfg.Clients, "clients", 0, "add this many client hosts c1..cN behind A (at most 32) whose traffic crosses the tunnel as A's does: bench --clients loads B from several clients at once, as the guide's hundreds of connections did; 0 = none")
	f.BoolVar(&cfg.LAN, "lan", false, "add a LAN host behind each site (lan behind A, lanb behind B) that the sites forward through the tunnel")
}

// LabImplFlag is --wireguard: the lab's WireGuard implementation.
type LabImplFlag struct{ P *lab.Implementation }

func (v LabImplFlag) String() string {
	if v.P == nil || *v.P == "" {
		return "auto"
	}
	return string(*v.P)
}

func (v LabImplFlag) Type() string { return "string" }

// Words are what --wireguard takes (lab.ParseImplementation).
func (v LabImplFlag) Words() []string {
	return []string{"auto", string(lab.Kernel), string(lab.Userspace)}
}

func (v LabImplFlag) Set(s string) error {
	impl, err := lab.ParseImplementation(s)
	if err != nil {
		return err
	}
	*v.P = impl
	return nil
}
