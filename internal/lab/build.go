package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wgperf/wgperf/internal/shell"
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
	endpointB = "203.0.113.2"
	routerB   = "203.0.113.1"
	lanA      = "10.10.1.1"
	lanHost   = "10.10.1.2"
	lanNet    = "10.10.1.0/24"
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

// ShaperQueue is how long a shaped link's queue holds at its rate.
const ShaperQueue = 200 * time.Millisecond

// Shaped reports whether the lab shapes a link of the path with tbf, whose
// queue (ShaperQueue) a sender that fills it waits behind.
func (c Config) Shaped() bool { return c.Underlay.RateMbit > 0 || c.Topology == MultiWAN }

// tbf shapes an interface's egress. The burst covers a few milliseconds at the
// rate so TCP through the tunnel reaches the rate instead of stalling on it.
// The queue holds ShaperQueue, 200 ms: a userspace tunnel end sends in batches, so BBR
// inside it keeps extra data in flight for that ACK aggregation (cwnd near
// 1 MB at 100 Mbit/s and 20 ms), which overflowed a 50 ms queue in bursts of
// hundreds of drops; a healthy uplink in the lab should not be that shallow.
func (b *builder) tbf(node, ifname string, mbit int) {
	if b.lab.shaped == nil {
		b.lab.shaped = map[string]int{}
	}
	b.lab.shaped[node+"/"+ifname] = mbit
	b.on(node, append([]string{"tc", "qdisc", "replace", "dev", ifname, "root", "tbf"}, tbfArgs(mbit)...)...)
}

// tbfArgs are a tbf qdisc's parameters for rate mbit.
func tbfArgs(mbit int) []string {
	burst := max(mbit*1000/8*4, 64*1024) // 4 ms worth of bytes, at least 64 KiB
	return []string{"rate", fmt.Sprintf("%dmbit", mbit), "burst", strconv.Itoa(burst), "latency", ShaperQueue.String()}
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
	b.link("a", "eth0", primaryA, "r", "eth-a", primaryGW, 0)
	b.link("r", "eth-b", routerB, "b", "eth0", endpointB, cfg.PathMTU)
	b.on("b", "ip", "route", "add", "default", "via", routerB)
	switch cfg.Topology {
	case SiteToSite:
		b.on("a", "ip", "route", "add", "default", "via", primaryGW)
		if cfg.HubMbit > 0 {
			b.hubShaping(cfg)
		} else if cfg.Underlay.RateMbit > 0 {
			b.tbf("r", "eth-a", cfg.Underlay.RateMbit)
			b.tbf("r", "eth-b", cfg.Underlay.RateMbit)
		}
		b.natOn(cfg)
		b.cloneLink(cfg)
	case MultiWAN:
		b.link("a", "eth1", backupA, "r", "eth-a2", backupGW, 0)
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
	if err := b.run(ctx); err != nil {
		return err
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

// portPoliceChain polices, per direction, the UDP that carries port in either
// field to pct of rateMbit (a token bucket of 20 ms, no queue), as a carrier
// rule "udp port 51820" does; other UDP and TCP pass.
func portPoliceChain(rateMbit, pct, port int) string {
	kbytes := max(1, rateMbit*pct*125/100) // Mbit/s → kbytes/s
	var rules []string
	for _, in := range []string{"eth-a", "eth-a2", "eth-b"} {
		rules = append(rules, fmt.Sprintf("iifname %q udp sport . udp dport { %d . 0-65535, 0-65535 . %d } limit rate over %d kbytes/second burst %d kbytes counter drop;",
			in, port, port, kbytes, max(2, kbytes/50)))
	}
	return "chain port_police { type filter hook forward priority 0;\n" + strings.Join(rules, "\n") + "\n}"
}

// applyPolicies installs the nftables breakage the config asks for.
func (l *Lab) applyPolicies(ctx context.Context) error {
	cfg := l.Config
	var rRules []string
	if cfg.DropFragNeeded {
		// R's own ICMP errors leave through output; forwarded ones through forward.
		rRules = append(rRules,
			"chain out { type filter hook output priority 0; icmp type destination-unreachable icmp code frag-needed counter drop; }",
			"chain fwd_icmp { type filter hook forward priority 0; icmp type destination-unreachable icmp code frag-needed counter drop; }")
	}
	loss := cfg.Underlay.LossPct
	if loss > 0 {
		rRules = append(rRules, fmt.Sprintf(
			"chain loss { type filter hook forward priority 10; meta l4proto udp numgen random mod 100 < %d counter drop; }", loss))
		// Whole GSO bursts would be dropped at once otherwise: make loss per datagram.
		for _, n := range []string{"a", "b"} {
			if _, err := l.Target(n).Run(ctx, "ethtool", "-K", "eth0", "tx-udp-segmentation", "off"); err != nil && !target.IsNotFound(err) {
				return err
			}
		}
	}
	if n := cfg.SilentHopMTU; n > 0 {
		towards, sender := `"eth-b"`, "a"
		if cfg.SilentHopToA {
			towards, sender = `{ "eth-a", "eth-a2" }`, "b"
		}
		rRules = append(rRules, fmt.Sprintf(
			"chain silent_hop { type filter hook forward priority 5; oifname %s meta length > %d counter drop; }", towards, n))
		if _, err := l.Target(sender).Run(ctx, "ethtool", "-K", "eth0", "tso", "off", "gso", "off", "tx-udp-segmentation", "off"); err != nil && !target.IsNotFound(err) {
			return err
		}
	}
	if pct := cfg.UDPPolicePct; pct > 0 {
		if cfg.Underlay.RateMbit <= 0 || pct > 100 {
			return fmt.Errorf("UDP policing at %d%% needs a shaped underlay (--rate) and a percent in 1..100", pct)
		}
		kbytes := max(1, cfg.Underlay.RateMbit*pct*125/100) // Mbit/s → kbytes/s
		var rules []string
		for _, in := range []string{"eth-a", "eth-a2", "eth-b"} {
			rules = append(rules, fmt.Sprintf("iifname %q meta l4proto udp limit rate over %d kbytes/second burst %d kbytes counter drop;", in, kbytes, max(2, kbytes/50)))
		}
		rRules = append(rRules, "chain udp_police { type filter hook forward priority 0;\n"+strings.Join(rules, "\n")+"\n}")
	}
	if pct := cfg.PortPolicePct; pct > 0 {
		if cfg.Underlay.RateMbit <= 0 || pct > 100 {
			return fmt.Errorf("port policing at %d%% needs a shaped underlay (--rate) and a percent in 1..100", pct)
		}
		rRules = append(rRules, portPoliceChain(cfg.Underlay.RateMbit, pct, WGPort))
	}
	if cfg.DropFragments {
		if err := l.dropFragments(ctx); err != nil {
			return err
		}
	}
	if len(rRules) > 0 {
		rs := "table inet wgperf_lab {\n" + strings.Join(rRules, "\n") + "\n}\n"
		if _, err := l.Target("r").RunInput(ctx, []byte(rs), "nft", "-f", "-"); err != nil {
			return err
		}
	}
	if cfg.ICMPLimit > 0 && cfg.ICMPLimitStyle == ICMPLimitIptables {
		// The same limit as a host firewall's classic ping flood guard: accept
		// up to N/s, then a counted DROP of the rest (iptables-nft here).
		rate := strconv.Itoa(cfg.ICMPLimit) + "/sec"
		for _, rule := range [][]string{
			{"-A", "INPUT", "-i", "eth0", "-p", "icmp", "-m", "limit", "--limit", rate, "--limit-burst", "5", "-j", "ACCEPT"},
			{"-A", "INPUT", "-i", "eth0", "-p", "icmp", "-j", "DROP"},
		} {
			if _, err := l.Target("a").Run(ctx, "iptables", rule...); err != nil {
				return err
			}
		}
		return nil
	}
	if cfg.ICMPLimit > 0 {
		// The multi-WAN router's banIP flood protection, with its named counter.
		rs := fmt.Sprintf(`table inet banIP {
	counter cnt_icmpflood { }
	chain pre-routing {
		type filter hook prerouting priority -150; policy accept;
		iifname "eth0" meta nfproto . meta l4proto { ipv4 . icmp } limit rate over %d/second burst 5 packets counter name "cnt_icmpflood" drop
	}
}
`, cfg.ICMPLimit)
		if _, err := l.Target("a").RunInput(ctx, []byte(rs), "nft", "-f", "-"); err != nil {
			return err
		}
	}
	return nil
}

// dropFragments makes R drop every first fragment (MF set) leaving by its
// links, so no fragmented packet can be reassembled. It filters at egress,
// after R's own fragmenting at a narrow hop, where netfilter cannot see
// (its hooks run before fragmentation).
func (l *Lab) dropFragments(ctx context.Context) error {
	r := l.Target("r")
	for _, ifname := range []string{"eth-a", "eth-b"} {
		for _, argv := range [][]string{
			{"qdisc", "add", "dev", ifname, "clsact"},
			// IPv4 flags and fragment offset are the 16 bits at byte 6; 0x2000 is "more fragments".
			{"filter", "add", "dev", ifname, "egress", "protocol", "ip", "u32", "match", "u16", "0x2000", "0x2000", "at", "6", "action", "drop"},
		} {
			if _, err := r.Run(ctx, "tc", argv...); err != nil {
				return fmt.Errorf("drop fragments on R's %s (this kernel needs tc actions, act_gact): %w", ifname, err)
			}
		}
	}
	return nil
}

// bursts makes R's shaped links deliver in bursts (Config.Bursts): netem at
// the link's rate holds packets for slots of 64 KB's time and releases each
// slot's packets at once, as a NIC's interrupt coalescing does; R's qdisc run
// hands them all to the veth, whose peer queues every one on the receiving
// CPU's backlog before it processes the first. Without sch_netem (this
// machine's own kernel), R's links stop segmenting UDP in hardware instead: a
// GSO batch from a userspace WireGuard end (up to 64 datagrams) is split on
// R's way out and arrives as one burst. Kernel WireGuard sends datagram by
// datagram, so there it needs netem.
func (l *Lab) bursts(ctx context.Context) error {
	if l.Config.Underlay.DelayMs > 0 || l.Config.Underlay.PathLossPct > 0 || l.Config.Topology != SiteToSite {
		return fmt.Errorf("bursts need the site-to-site topology without --delay or --path-loss (their qdiscs sit where the bursts' do)")
	}
	mbit := l.Config.Underlay.RateMbit
	if mbit <= 0 {
		return fmt.Errorf("bursts need a shaped underlay (--rate)")
	}
	_, _ = target.Local().Run(ctx, "modprobe", "-q", "sch_netem")
	r := l.Target("r")
	links := []string{"eth-a", "eth-b"}
	slot := fmt.Sprintf("%dus", 65536*8/mbit) // 64 KB at the rate, in µs
	for i, ifname := range links {
		_, err := r.Run(ctx, "tc", "qdisc", "replace", "dev", ifname, "root", "netem", "rate", fmt.Sprintf("%dmbit", mbit),
			"slot", slot, slot, "limit", "100000")
		if err == nil {
			continue
		}
		if i > 0 {
			return fmt.Errorf("netem slots on R's %s: %w", ifname, err)
		}
		if l.Config.WireGuard == Kernel {
			return fmt.Errorf("bursts with kernel WireGuard need netem (sch_netem; a distro kernel has it, e.g. in lab vm): %w", err)
		}
		for _, ifname := range links {
			if _, err := r.Run(ctx, "ethtool", "-K", ifname, "tx-udp-segmentation", "off"); err != nil {
				return fmt.Errorf("bursts on R's %s (no sch_netem, and ethtool could not turn UDP segmentation off): %w", ifname, err)
			}
		}
		return nil
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

// addDelay delays what R forwards by ms each way: with netem on R's links
// where the kernel has it (a real qdisc, as on a WAN emulator), else with
// the lab's userspace delay element.
func (l *Lab) addDelay(ctx context.Context, ms int) error {
	if err := l.netem(ctx, ms, 0); err == nil {
		l.DelayBy = DelayNetem
		return nil
	}
	l.DelayBy = DelayElement
	return l.startDelay(ctx, ms)
}

// netem puts a netem qdisc (ms of delay, lossPct random loss) at the root of
// each of R's egress links, with the link's tbf (if any) below it: packets
// wait out the delay, then meet the shaper. It fails, changing nothing, where
// sch_netem does not load.
func (l *Lab) netem(ctx context.Context, ms int, lossPct float64) error {
	_, _ = target.Local().Run(ctx, "modprobe", "-q", "sch_netem")
	links := []string{"eth-a", "eth-b"}
	if l.Config.Topology == MultiWAN {
		links = append(links, "eth-a2")
	}
	r := l.Target("r")
	for i, ifname := range links {
		// The limit holds the delay's worth of packets at any rate the lab runs.
		args := []string{"qdisc", "replace", "dev", ifname, "root", "handle", "1:", "netem", "delay", fmt.Sprintf("%dms", ms), "limit", "100000"}
		if lossPct > 0 {
			args = append(args, "loss", strconv.FormatFloat(lossPct, 'f', -1, 64)+"%")
		}
		_, err := r.Run(ctx, "tc", args...)
		if err != nil {
			if i == 0 {
				return err
			}
			return fmt.Errorf("netem on %s: %w", ifname, err)
		}
		if mbit := l.shaped["r/"+ifname]; mbit > 0 {
			args := append([]string{"qdisc", "add", "dev", ifname, "parent", "1:1", "handle", "10:", "tbf"}, tbfArgs(mbit)...)
			if _, err := r.Run(ctx, "tc", args...); err != nil {
				return err
			}
		}
	}
	return nil
}

// startDelay routes everything R forwards through a delay element: packets
// arriving on a physical link go to TUN dly0 (table 100), come back out of it
// after the delay and are then forwarded by the main table.
func (l *Lab) startDelay(ctx context.Context, ms int) error {
	r := l.Nodes["r"]
	pid, err := l.detach(ctx, r, "delay", "lab", "_delay", "--interface", "dly0", "--delay", fmt.Sprintf("%dms", ms))
	if err != nil {
		return err
	}
	r.DelayPID = pid
	if err := l.waitFor(func() bool { _, err := l.Target("r").Run(ctx, "ip", "link", "show", "dev", "dly0"); return err == nil }, pid, "delay element", l.logPath(r, "delay")); err != nil {
		return err
	}
	b := &builder{lab: l}
	b.on("r", "ip", "link", "set", "dev", "dly0", "txqueuelen", "10000", "up")
	// Packets come back in on dly0 with addresses that belong elsewhere.
	b.on("r", "sysctl", "-qw", "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.dly0.rp_filter=0")
	b.on("r", "ip", "route", "add", "default", "dev", "dly0", "table", "100")
	for _, ifname := range []string{"eth-a", "eth-a2", "eth-b"} {
		if ifname == "eth-a2" && l.Config.Topology != MultiWAN {
			continue
		}
		b.on("r", "ip", "rule", "add", "iif", ifname, "lookup", "100", "priority", "100")
	}
	return b.run(ctx)
}

// nodeNice is the CPU priority of the lab's node processes (WireGuard, the
// delay element, the router node's dropbear and what it runs): the routers they stand for have their CPU to themselves, so
// another job on this machine must not slow the lab's tunnels and turn a
// verdict. They are mostly idle; when they forward, they go first.
const nodeNice = -10

// nodeSession is the shell text that runs name with args in a session of its
// own (setsid, so it outlives the command that started it) at nodeNice, and
// its session's autogroup too: with the kernel's autogroup scheduling a nice
// only counts inside a session. The process keeps the pid the shell's $! gives.
func nodeSession(name string, args ...string) string {
	nice := strconv.Itoa(nodeNice)
	run := fmt.Sprintf(`echo %s 2>/dev/null >/proc/self/autogroup; exec nice -n %s "$@"`, nice, nice)
	return "setsid sh -c " + shell.Join(run) + " - " + shell.Join(name, args...)
}

// detach starts "wgperf ARGS" in a node's namespace as a node process
// (nodeSession), logging to the lab's folder; it returns the pid.
func (l *Lab) detach(ctx context.Context, n *Node, logName string, args ...string) (int, error) {
	return l.detachProgram(ctx, n, logName, l.Executable, args...)
}

// detachProgram starts program in a node's namespace as a node process.
func (l *Lab) detachProgram(ctx context.Context, n *Node, logName, program string, args ...string) (int, error) {
	logFile := l.logPath(n, logName)
	script := fmt.Sprintf("%s </dev/null >>%s 2>&1 & echo $!", nodeSession(program, args...), shell.Join(logFile))
	out, err := target.Netns(n.Netns).Run(ctx, "sh", "-c", script)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(out)))
}

func (l *Lab) logPath(n *Node, logName string) string {
	return filepath.Join(StateDir, l.Config.Name, n.Name+"-"+logName+".log")
}

// waitFor polls ready for up to 10 s while process pid lives; on failure it
// quotes the process's log.
func (l *Lab) waitFor(ready func() bool, pid int, what, logFile string) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if ready() {
			return nil
		}
		if !target.ProcessLive(pid) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	log, _ := os.ReadFile(logFile)
	return fmt.Errorf("%s did not start: %s", what, strings.TrimSpace(string(log)))
}

// startNode launches the node detached (setsid), so it outlives "lab up", and
// waits for its UAPI socket.
func (l *Lab) startNode(ctx context.Context, n *Node, ifname string) (int, error) {
	args := []string{"lab", "_node", "--interface", ifname, "--mtu", strconv.Itoa(l.Config.WGMTU)}
	if l.Config.UDPBuffer != 0 {
		args = append(args, "--udp-buffer", strconv.Itoa(l.Config.UDPBuffer))
	}
	pid, err := l.detach(ctx, n, ifname, args...)
	if err != nil {
		return 0, err
	}
	return pid, l.waitFor(func() bool { _, err := os.Stat(socketPath(ifname)); return err == nil }, pid, "WireGuard node "+ifname, l.logPath(n, ifname))
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

// RaiseToNodePriority runs the calling process at nodeNice from now on, so
// what it starts on the lab's nodes (iperf3, ping) goes first like the nodes
// themselves: a measurement must not lose to a job sharing this process's
// session. Nice is per thread on Linux and new threads inherit it, so every
// thread is reniced (twice, for one created meanwhile).
func RaiseToNodePriority() error {
	for range 2 {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return err
		}
		for _, task := range tasks {
			tid, err := strconv.Atoi(task.Name())
			if err != nil {
				continue
			}
			if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, nodeNice); err != nil {
				return fmt.Errorf("renice thread %d: %w", tid, err)
			}
		}
	}
	return nil
}
