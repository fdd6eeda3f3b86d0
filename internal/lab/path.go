package lab

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/target"
)

// This file holds what the lab does to the path through R: the tbf shaper,
// the delay (netem, or the userspace delay element where the kernel lacks
// it), bursts, dropped fragments, and the nftables breakage (policing, loss,
// a silent hop, dropped frag-needed, an ICMP limit) the config asks for.

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
