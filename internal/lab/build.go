package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/wgperf/wgperf/internal/target"
	"golang.zx2c4.com/wireguard/wgctrl/wgtypes"
)

// Addresses of the lab. They are documentation ranges (RFC 5737) for the
// underlay and a private /24 for the tunnel; they exist only inside the lab's
// namespaces.
const (
	WGPort    = 51820
	tunnelA   = "10.77.0.1"
	tunnelB   = "10.77.0.2"
	primaryA  = "198.51.100.2" // A's (primary) uplink
	primaryGW = "198.51.100.1"
	backupA   = "192.0.2.2" // multi-wan backup uplink
	backupGW  = "192.0.2.1"
	// backupCGNAT is where R answers A's backup uplink from: the shared
	// address space (RFC 6598) a mobile carrier numbers its NAT in.
	backupCGNAT = "100.64.0.1"
	endpointB   = "203.0.113.2"
	routerB     = "203.0.113.1"
	lanA        = "10.10.1.1"
	lanHost     = "10.10.1.2"
	lanNet      = "10.10.1.0/24"
	// SiteBLAN is an address on B's loopback standing for the network behind
	// site B; every tunnel routes it, so ECMP can spread flows to it.
	SiteBLAN        = "10.20.0.1"
	SiteBNet        = "10.20.0.0/16"
	lanB            = "10.20.1.1" // B's side of the LAN behind B
	lanBHost        = "10.20.1.2"
	defaultWGMTU    = 1420
	defaultBackupMb = 20
)

// step is one command on a namespace ("" = the host).
type step struct {
	ns   string
	argv []string
}

// builder collects the commands that build a lab, so Up reads as a recipe.
type builder struct {
	lab   *Lab
	steps []step
}

func (b *builder) on(node string, argv ...string) {
	b.steps = append(b.steps, step{ns: b.lab.Netns(node), argv: argv})
}

func (b *builder) host(argv ...string) { b.steps = append(b.steps, step{argv: argv}) }

func (b *builder) run(ctx context.Context) error {
	for _, s := range b.steps {
		t := target.Local()
		if s.ns != "" {
			t = target.Netns(s.ns)
		}
		if _, err := t.Run(ctx, s.argv[0], s.argv[1:]...); err != nil {
			return err
		}
	}
	b.steps = nil
	return nil
}

// link creates a veth pair between two nodes and addresses both ends (/24).
func (b *builder) link(nodeA, ifA, addrA, nodeB, ifB, addrB string, mtu int) {
	b.host("ip", "link", "add", ifA, "netns", b.lab.Netns(nodeA), "type", "veth",
		"peer", "name", ifB, "netns", b.lab.Netns(nodeB))
	for _, end := range []struct{ node, ifname, addr string }{{nodeA, ifA, addrA}, {nodeB, ifB, addrB}} {
		if mtu > 0 {
			b.on(end.node, "ip", "link", "set", "dev", end.ifname, "mtu", strconv.Itoa(mtu))
		}
		b.on(end.node, "ip", "addr", "add", end.addr+"/24", "dev", end.ifname)
		b.on(end.node, "ip", "link", "set", "dev", end.ifname, "up")
	}
}

// Up builds a lab and returns it once a ping crosses the tunnel. exe is the
// wgperf binary the WireGuard nodes run (os.Executable() for the CLI). On
// failure everything already built is removed.
func Up(ctx context.Context, cfg Config, exe string) (*Lab, error) {
	if cfg.Name == "" {
		cfg.Name = "demo"
	}
	if !validName.MatchString(cfg.Name) {
		return nil, fmt.Errorf("lab name %q: want 1-8 lowercase letters or digits", cfg.Name)
	}
	if cfg.Topology == "" {
		cfg.Topology = SiteToSite
	}
	if cfg.Topology != SiteToSite && cfg.Topology != MultiWAN {
		return nil, fmt.Errorf("topology %q: want %s or %s", cfg.Topology, SiteToSite, MultiWAN)
	}
	if cfg.ICMPLimitStyle != "" && cfg.ICMPLimitStyle != ICMPLimitBanIP && cfg.ICMPLimitStyle != ICMPLimitIptables {
		return nil, fmt.Errorf("ICMP limit style %q: want %s or %s", cfg.ICMPLimitStyle, ICMPLimitBanIP, ICMPLimitIptables)
	}
	if err := cfg.checkNAT(); err != nil {
		return nil, err
	}
	if err := cfg.checkClone(); err != nil {
		return nil, err
	}
	if err := cfg.checkHub(); err != nil {
		return nil, err
	}
	if err := cfg.checkClients(); err != nil {
		return nil, err
	}
	if err := cfg.checkBond(); err != nil {
		return nil, err
	}
	if cfg.WGMTU == 0 {
		cfg.WGMTU = defaultWGMTU
	}
	if cfg.Topology == MultiWAN && cfg.Backup.RateMbit == 0 {
		cfg.Backup.RateMbit = defaultBackupMb
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("the lab needs root (network namespaces, tc, nftables)")
	}
	if existing, err := List(ctx); err != nil {
		return nil, err
	} else {
		for _, n := range existing {
			if n == cfg.Name {
				return nil, fmt.Errorf("lab %q is already up (wgperf lab status --name %s; wgperf lab down --name %s)", n, n, n)
			}
		}
	}

	l := &Lab{Config: cfg, Nodes: map[string]*Node{}, Created: time.Now().UTC(), Executable: exe}
	for _, n := range nodeNames(cfg) {
		l.Nodes[n] = &Node{Name: n, Netns: l.Netns(n)}
	}
	if err := l.save(); err != nil {
		return nil, err
	}
	if err := l.build(ctx); err != nil {
		_ = Down(context.WithoutCancel(ctx), cfg.Name)
		return nil, fmt.Errorf("lab %s: %w", cfg.Name, err)
	}
	return l, l.save()
}

func nodeNames(cfg Config) []string {
	names := []string{"a", "r", "b"}
	if cfg.CloneA {
		names = append(names, "a2")
	}
	if cfg.LAN {
		names = append(names, "lan", "lanb")
	}
	for n := 1; n <= cfg.Clients; n++ {
		names = append(names, clientName(n))
	}
	return names
}

func (l *Lab) build(ctx context.Context) error {
	cfg := l.Config
	b := &builder{lab: l}
	for _, n := range l.NodeNames() {
		b.host("ip", "netns", "add", l.Netns(n))
		b.on(n, "ip", "link", "set", "dev", "lo", "up")
	}
	if err := b.run(ctx); err != nil {
		return err
	}
	if err := l.setCongestion(ctx); err != nil {
		return err
	}
	b.on("r", "sysctl", "-qw", "net.ipv4.ip_forward=1")

	// Underlay. A's uplinks end on R, R reaches B's endpoint.
	if cfg.BondSlaves > 1 {
		b.bondUplink(cfg)
	} else {
		b.link("a", "eth0", primaryA, "r", "eth-a", primaryGW, 0)
	}
	b.link("r", "eth-b", routerB, "b", "eth0", endpointB, cfg.PathMTU)
	b.on("b", "ip", "route", "add", "default", "via", routerB)
	switch cfg.Topology {
	case SiteToSite:
		b.on("a", "ip", "route", "add", "default", "via", primaryGW)
		if cfg.HubMbit > 0 {
			b.hubShaping(cfg)
		} else if cfg.Underlay.RateMbit > 0 && cfg.BondSlaves == 0 { // a bond's slaves are shaped each (bondUplink)
			b.tbf("r", "eth-a", cfg.Underlay.RateMbit)
			b.tbf("r", "eth-b", cfg.Underlay.RateMbit)
		}
		b.natOn(cfg)
		b.cloneLink(cfg)
	case MultiWAN:
		b.link("a", "eth1", backupA, "r", "eth-a2", backupGW, 0)
		// The backup is a 5G link through a carrier's NAT, as in the case:
		// R's own packets to it (a trace's time-exceeded) come from the
		// carrier's 100.64/10 address, so a trace over it names the NAT.
		b.on("r", "ip", "addr", "add", backupCGNAT+"/32", "dev", "eth-a2")
		b.on("r", "ip", "route", "replace", "192.0.2.0/24", "dev", "eth-a2", "proto", "kernel", "scope", "link", "src", backupCGNAT)
		b.on("a", "sysctl", "-qw", "net.ipv4.ip_forward=1")
		b.on("a", "ip", "route", "add", "default", "via", primaryGW, "dev", "eth0", "metric", "10")
		b.on("a", "ip", "route", "add", "default", "via", backupGW, "dev", "eth1", "metric", "20")
		// Each uplink is shaped both ways: A's egress (the modem) and R's egress toward A.
		if r := cfg.Underlay.RateMbit; r > 0 {
			b.tbf("a", "eth0", r)
			b.tbf("r", "eth-a", r)
		}
		b.tbf("a", "eth1", cfg.Backup.RateMbit)
		b.tbf("r", "eth-a2", cfg.Backup.RateMbit)
	}
	if cfg.LAN {
		// A LAN behind each site, both on 1500-byte Ethernet as in the PMTUD black hole case: the
		// hosts advertise MSS 1460 and only the gateways know about the tunnel.
		b.link("lan", "eth0", lanHost, "a", "lan0", lanA, 0)
		b.on("lan", "ip", "route", "add", "default", "via", lanA)
		b.on("a", "sysctl", "-qw", "net.ipv4.ip_forward=1")
		b.link("lanb", "eth0", lanBHost, "b", "lan0", lanB, 0)
		b.on("lanb", "ip", "route", "add", "default", "via", lanB)
		b.on("b", "sysctl", "-qw", "net.ipv4.ip_forward=1")
		l.Nodes["lan"].LANAddr, l.Nodes["lanb"].LANAddr = lanHost, lanBHost
	}
	b.clientLinks(cfg.Clients)
	if err := b.run(ctx); err != nil {
		return err
	}
	if cfg.BondSlaves > 1 {
		if err := l.waitBond(ctx); err != nil {
			return err
		}
	}
	if err := l.chooseImplementation(ctx); err != nil {
		return err
	}
	if err := l.applyPolicies(ctx); err != nil {
		return err
	}
	if cfg.Underlay.PathLossPct > 0 {
		// Real WAN loss needs netem, which adds the delay too.
		if err := l.netem(ctx, cfg.Underlay.DelayMs, cfg.Underlay.PathLossPct); err != nil {
			return fmt.Errorf("--path-loss needs netem (sch_netem; a distro kernel has it, e.g. in lab vm): %w", err)
		}
		l.DelayBy = DelayNetem
	} else if cfg.Underlay.DelayMs > 0 {
		if err := l.addDelay(ctx, cfg.Underlay.DelayMs); err != nil {
			return err
		}
	}
	if cfg.Bursts {
		if err := l.bursts(ctx); err != nil {
			return err
		}
	}
	if cfg.KneePct > 0 {
		if err := l.startKnee(ctx); err != nil {
			return err
		}
	}
	if cfg.PathCycleSeconds > 0 {
		if err := l.startPathCycle(ctx); err != nil {
			return err
		}
	}
	if cfg.BackgroundPings > 0 {
		if err := l.startPings(ctx); err != nil {
			return err
		}
	}
	if err := l.startTunnel(ctx); err != nil {
		return err
	}
	if cfg.CPUQuotaPct > 0 {
		if err := l.limitCPU(l.Nodes[cfg.quotaNode()].PID, cfg.CPUQuotaPct); err != nil {
			return err
		}
	}
	if cfg.Router {
		return l.startRouter(ctx)
	}
	return nil
}

// setCongestion gives every node Config.Congestion as its default TCP
// congestion control.
func (l *Lab) setCongestion(ctx context.Context) error {
	cc := l.Config.Congestion
	if cc == "" {
		return nil
	}
	if !validName.MatchString(cc) {
		return fmt.Errorf("congestion control %q: want a name such as bbr or cubic", cc)
	}
	_, _ = target.Local().Run(ctx, "modprobe", "-q", "tcp_"+cc)
	for _, n := range l.NodeNames() {
		if _, err := l.Target(n).Run(ctx, "sysctl", "-qw", "net.ipv4.tcp_congestion_control="+cc); err != nil {
			return fmt.Errorf("congestion control %s in the lab's namespaces: %w (a namespace may only choose one listed in the host's net.ipv4.tcp_allowed_congestion_control)", cc, err)
		}
	}
	return nil
}

// startTunnel builds tunnel 0 and waits for a ping to cross it.
func (l *Lab) startTunnel(ctx context.Context) error {
	if _, err := l.Target("b").Run(ctx, "ip", "addr", "add", SiteBLAN+"/32", "dev", "lo"); err != nil {
		return err
	}
	if l.Config.HubMbit > 0 {
		return l.startHub(ctx)
	}
	t, err := l.AddTunnel(ctx)
	if err != nil {
		return err
	}
	a, b := l.Nodes["a"], l.Nodes["b"]
	a.WGInterface, a.TunnelAddr, a.PID, a.PublicKey, a.UnderlayAddr, a.ListenPort = t.IfA, t.AddrA, t.PIDA, t.KeyA, primaryA, l.clientPort(t)
	b.WGInterface, b.TunnelAddr, b.PID, b.PublicKey, b.UnderlayAddr, b.ListenPort = t.IfB, t.AddrB, t.PIDB, t.KeyB, endpointB, t.Port
	if _, err := l.Target("a").Run(ctx, "ip", "route", "add", SiteBNet, "dev", t.IfA); err != nil {
		return err
	}
	if l.Config.Topology == MultiWAN {
		if err := l.pinUplinks(ctx); err != nil {
			return err
		}
	}
	return l.waitPing(ctx, "a", t.AddrB)
}

func (l *Lab) wgSet(ctx context.Context, node, ifname string, port int, key wgtypes.Key, args ...string) error {
	argv := append([]string{"set", ifname, "listen-port", strconv.Itoa(port),
		"private-key", "/dev/stdin"}, args...)
	_, err := l.Target(node).RunInput(ctx, []byte(key.String()+"\n"), "wg", argv...)
	if target.IsNotFound(err) {
		return errors.New("wg (wireguard-tools) is not installed: apt-get install wireguard-tools")
	}
	return err
}

// waitPing pings addr from node until it answers (the first packet triggers
// the handshake). With loss on the underlay a handshake message can be lost and
// WireGuard retries after 5 s, so keep trying for 20 s.
func (l *Lab) waitPing(ctx context.Context, node, addr string) error {
	var err error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		if _, err = l.Target(node).Run(ctx, "ping", "-c", "1", "-W", "1", "-n", "-q", addr); err == nil {
			return nil
		}
		if target.IsNotFound(err) {
			return errors.New("ping is not installed: apt-get install iputils-ping")
		}
	}
	return fmt.Errorf("no ping through the tunnel to %s: %w", addr, err)
}
