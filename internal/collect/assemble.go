package collect

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/parse"
)

// ipTextNote is the one line a snapshot carries when ip had no JSON.
const ipTextNote = "BusyBox ip (no JSON): read its text, which lacks route protocols (an endpoint's host route is judged by its gateway alone), multipath hops, link kinds and bonds: opkg install ip-full"

// assemble parses every source's output into the snapshot.
func (c *collector) assemble() {
	files := map[string]*fileRead{}
	if out, ok := c.output("files", "grep /proc /sys"); ok {
		files = parseGrepFiles(strings.NewReader(out))
	}
	c.system(files)
	c.kernelCounters(files)
	c.links(files)
	c.routing()
	c.wireguard()
	c.firewall()
	c.conntrack(files)
	c.openwrt()
}

// file returns a file's content, noting why it is missing unless optional.
func (c *collector) file(files map[string]*fileRead, name string, optional bool) (string, bool) {
	f, ok := files[name]
	switch {
	case ok && f.Err == "":
		return f.Content, true
	case ok && (optional && strings.Contains(f.Err, "No such file")):
	case ok:
		c.note(name, f.Err)
	case !optional:
		c.note(name, "empty or not readable")
	}
	return "", false
}

func (c *collector) system(files map[string]*fileRead) {
	s := &c.snap.System
	if v, ok := c.file(files, "/proc/sys/kernel/hostname", false); ok {
		s.Hostname = strings.TrimSpace(v)
	}
	if v, ok := c.file(files, "/etc/openwrt_release", true); ok {
		c.openWrt = true
		s.Distro, _ = parse.ParseOSRelease(strings.NewReader(v))
	}
	if s.Distro == "" {
		if v, ok := c.file(files, "/etc/os-release", true); ok {
			s.Distro, _ = parse.ParseOSRelease(strings.NewReader(v))
		}
	}
	for _, k := range Sysctls {
		if v, ok := c.file(files, sysctlPath(k), true); ok {
			c.snap.Sysctls[k] = sysctlValue(v)
		}
	}
}

func (c *collector) kernelCounters(files map[string]*fileRead) {
	var err error
	if v, ok := c.file(files, "/proc/net/snmp", false); ok {
		if c.snap.Counters.SNMP, err = parse.ParseSNMP(strings.NewReader(v)); err != nil {
			c.note("/proc/net/snmp", err.Error())
		}
	}
	if v, ok := c.file(files, "/proc/net/netstat", false); ok {
		if c.snap.Counters.Netstat, err = parse.ParseSNMP(strings.NewReader(v)); err != nil {
			c.note("/proc/net/netstat", err.Error())
		}
	}
	if v, ok := c.file(files, "/proc/net/softnet_stat", false); ok {
		if rows, err := parse.ParseSoftnet(strings.NewReader(v)); err != nil {
			c.note("/proc/net/softnet_stat", err.Error())
		} else {
			c.snap.Softnet = rows
		}
	}
	if v, ok := c.file(files, "/proc/stat", false); ok {
		if cpus, err := parse.ParseProcStat(strings.NewReader(v)); err != nil {
			c.note("/proc/stat", err.Error())
		} else {
			// The aggregate "cpu" line is kept first; the CPU count excludes it.
			c.snap.CPU = cpus
			for _, cpu := range cpus {
				if cpu.CPU != "cpu" {
					c.snap.System.CPUs++
				}
			}
		}
	}
}

func (c *collector) links(files map[string]*fileRead) {
	if out, ok := c.output("link", "ip link"); ok {
		links, err := parseIPOutput(c, out, parse.ParseIPLink, parse.ParseIPLinkText)
		if err != nil {
			c.note("ip link", err.Error())
		} else {
			c.snap.Links = links
		}
	}
	byName := map[string]*facts.Link{}
	names := []string{}
	for i := range c.snap.Links {
		byName[c.snap.Links[i].Name] = &c.snap.Links[i]
		names = append(names, c.snap.Links[i].Name)
	}
	if out, ok := c.output("ethtool", "ethtool -k"); ok {
		for dev, text := range splitDevSections(out) {
			l := byName[dev]
			if l == nil || text == "" {
				continue
			}
			if off, err := parse.ParseEthtoolFeatures(strings.NewReader(text)); err != nil {
				c.note("ethtool -k "+dev, err.Error())
			} else if len(off) > 0 {
				l.Offloads = off
			}
		}
	}
	for name, f := range files {
		if f.Err != "" || !strings.HasPrefix(name, "/sys/class/net/") {
			continue
		}
		// /sys/class/net/DEV/queues/rx-N/rps_cpus or /sys/class/net/DEV/bonding/OPTION
		parts := strings.Split(strings.TrimPrefix(name, "/sys/class/net/"), "/")
		l := byName[parts[0]]
		if l == nil || len(parts) < 3 {
			continue
		}
		value := strings.TrimSpace(f.Content)
		switch {
		case parts[1] == "queues" && len(parts) == 4 && parts[3] == "rps_cpus":
			if l.RPSCPUs == nil {
				l.RPSCPUs = map[string]string{}
			}
			l.RPSCPUs[parts[2]] = value
		case parts[1] == "bonding":
			if l.Bond == nil {
				l.Bond = &facts.Bond{Slaves: []string{}}
			}
			// sysfs prints "802.3ad 4" and "layer2 0": the name, then the number.
			word, _, _ := strings.Cut(value, " ")
			switch parts[2] {
			case "mode":
				l.Bond.Mode = word
			case "xmit_hash_policy":
				l.Bond.XmitHashPolicy = word
			case "slaves":
				if len(l.Bond.Slaves) == 0 {
					l.Bond.Slaves = strings.Fields(value)
				}
			}
		}
	}
	if v, ok := c.file(files, "/proc/interrupts", false); ok {
		irqs, err := parse.ParseInterrupts(strings.NewReader(v), names)
		if err != nil {
			c.note("/proc/interrupts", err.Error())
		} else {
			c.snap.IRQs = irqs
		}
	}
}

// splitDevSections splits "@@dev NAME" sections of the ethtool loop.
func splitDevSections(out string) map[string]string {
	res := map[string]string{}
	var dev string
	var b strings.Builder
	flush := func() {
		if dev != "" {
			res[dev] = b.String()
		}
		b.Reset()
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "@@dev "); ok {
			flush()
			dev = name
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	flush()
	return res
}

func (c *collector) routing() {
	for _, fam := range []struct{ key, family string }{{"route4", "inet"}, {"route6", "inet6"}} {
		if out, ok := c.output(fam.key, "ip route "+fam.family); ok {
			routes, err := parseIPOutput(c, out, func(r io.Reader) ([]facts.Route, error) { return parse.ParseIPRoute(r, fam.family) },
				func(r io.Reader) ([]facts.Route, error) { return parse.ParseIPRouteText(r, fam.family) })
			if err != nil {
				c.note("ip route "+fam.family, err.Error())
				continue
			}
			c.snap.Routes = append(c.snap.Routes, routes...)
		}
	}
	for _, fam := range []struct{ key, family string }{{"rule4", "inet"}, {"rule6", "inet6"}} {
		if out, ok := c.output(fam.key, "ip rule "+fam.family); ok {
			rules, err := parseIPOutput(c, out, func(r io.Reader) ([]facts.RouteRule, error) { return parse.ParseIPRule(r, fam.family) },
				func(r io.Reader) ([]facts.RouteRule, error) { return parse.ParseIPRuleText(r, fam.family) })
			if err != nil {
				c.note("ip rule "+fam.family, err.Error())
				continue
			}
			c.snap.Rules = append(c.snap.Rules, rules...)
		}
	}
}

// wireguard keeps only interfaces that are links in this namespace: the UAPI
// socket folder is shared by every namespace, so "wg show all dump" also lists
// userspace interfaces living elsewhere.
func (c *collector) wireguard() {
	out, ok := c.output("wg", "wg show")
	if !ok {
		return
	}
	ifaces, err := parse.ParseWGDump(strings.NewReader(out))
	if err != nil {
		c.note("wg show", err.Error())
		return
	}
	sockets := map[string]bool{}
	if s, ok := c.output("wgsock", "/var/run/wireguard"); ok {
		for _, name := range strings.Fields(s) {
			sockets[name] = true
		}
	}
	links := map[string]facts.Link{}
	for _, l := range c.snap.Links {
		links[l.Name] = l
	}
	for _, w := range ifaces {
		l, ok := links[w.Name]
		if !ok {
			continue
		}
		w.MTU = l.MTU
		switch {
		case l.Kind == "wireguard":
			w.Implementation = "kernel"
		case l.Kind == "tun" && sockets[w.Name]:
			w.Implementation = "userspace"
		}
		c.snap.WireGuard = append(c.snap.WireGuard, w)
	}
}

// iptablesTables are the tables iptables-nft creates in nftables.
var iptablesTables = map[string]bool{"filter": true, "nat": true, "mangle": true, "raw": true, "security": true}

func (c *collector) firewall() {
	var ipt IptablesView
	for _, fam := range []struct{ key, family, source string }{{"iptables", "ip", "iptables-save"}, {"ip6tables", "ip6", "ip6tables-save"}} {
		out, ok := c.output(fam.key, fam.source)
		if !ok {
			continue
		}
		rules, chains, nf, err := parse.ParseIptablesSave(strings.NewReader(out), fam.family)
		if err != nil {
			c.note(fam.source, err.Error())
			continue
		}
		ipt.NfBackend = ipt.NfBackend || nf
		ipt.Rules = append(ipt.Rules, rules...)
		ipt.Chains = append(ipt.Chains, chains...)
	}
	var nft *facts.Firewall
	if out, ok := c.output("nft-json", "nft"); ok {
		fw, err := parse.ParseNftFirewall(strings.NewReader(out))
		if err != nil {
			c.note("nft", err.Error())
		} else {
			if t, ok := c.output("nft-text", "nft -a"); ok {
				if err := withNftTexts(&fw, strings.NewReader(t)); err != nil {
					c.note("nft -a", err.Error())
				}
			}
			nft = &fw
		}
	}
	c.snap.Firewall = MergeFirewall(nft, ipt)
}

// IptablesView is what iptables-save and ip6tables-save print.
type IptablesView struct {
	Rules     []facts.FirewallRule
	Chains    []facts.FirewallChain
	NfBackend bool // iptables-nft: its tables are in nft's ruleset too
}

// MergeFirewall joins nft's ruleset (nil when nft did not answer) with
// iptables-save's. iptables-nft tables show up in both tools; iptables-save
// reads them better (rule positions, policy counters), so nft's copy of them
// is left out.
func MergeFirewall(nft *facts.Firewall, ipt IptablesView) facts.Firewall {
	var fw facts.Firewall
	fw.Iptables = len(ipt.Rules) > 0
	dup := func(family, table string) bool {
		return fw.Iptables && ipt.NfBackend && (family == "ip" || family == "ip6") && iptablesTables[table]
	}
	if nft != nil {
		fw.Nftables = true
		fw.Counters = nft.Counters
		for _, r := range nft.Rules {
			if !dup(r.Family, r.Table) {
				fw.Rules = append(fw.Rules, r)
			}
		}
		for _, ch := range nft.Chains {
			if !dup(ch.Family, ch.Table) {
				fw.Chains = append(fw.Chains, ch)
			}
		}
	}
	fw.Rules = append(fw.Rules, ipt.Rules...)
	if fw.Iptables {
		fw.Chains = append(fw.Chains, ipt.Chains...)
	}
	return fw
}

func (c *collector) conntrack(files map[string]*fileRead) {
	count, ok := c.snap.Sysctls["net.netfilter.nf_conntrack_count"]
	if !ok {
		return // nf_conntrack not loaded
	}
	ct := &facts.Conntrack{}
	ct.Count, _ = strconv.ParseInt(count, 10, 64)
	ct.Max, _ = strconv.ParseInt(c.snap.Sysctls["net.netfilter.nf_conntrack_max"], 10, 64)
	ct.Buckets, _ = strconv.ParseInt(c.snap.Sysctls["net.netfilter.nf_conntrack_buckets"], 10, 64)
	var stats facts.Conntrack
	var err error
	if v, ok := c.file(files, "/proc/net/stat/nf_conntrack", true); ok {
		stats, err = parse.ParseConntrackStat(strings.NewReader(v))
		if err != nil {
			c.note("/proc/net/stat/nf_conntrack", err.Error())
		}
	} else if out, ok := c.res["conntrack"]; ok && out.Code == 0 {
		if stats, err = parse.ParseConntrackS(strings.NewReader(out.Out)); err != nil {
			c.note("conntrack -S", err.Error())
		}
	}
	ct.InsertFailed, ct.Drop, ct.EarlyDrop, ct.Invalid = stats.InsertFailed, stats.Drop, stats.EarlyDrop, stats.Invalid
	c.snap.Conntrack = ct
}

func (c *collector) openwrt() {
	if c.res["uci-network"].Code == codeSkipped {
		return
	}
	ow := &facts.OpenWrt{Network: map[string]string{}}
	for _, src := range []struct {
		key string
		dst *map[string]string
	}{{"uci-network", &ow.Network}, {"uci-mwan3", &ow.Mwan3}, {"uci-banip", &ow.Banip}} {
		source := "uci show " + strings.TrimPrefix(src.key, "uci-")
		if out, ok := c.output(src.key, source); ok {
			m, err := ParseUCI(strings.NewReader(out))
			if err != nil {
				c.note(source, err.Error())
				continue
			}
			*src.dst = m
		}
	}
	if out, ok := c.output("mwan3-status", "mwan3 status"); ok {
		ow.Mwan3Status = strings.TrimSpace(out)
	}
	if out, ok := c.output("logread", "logread"); ok {
		ev, err := ParseMwan3Events(strings.NewReader(out))
		if err != nil {
			c.note("logread", err.Error())
		} else {
			ow.Events = ev
		}
	}
	c.snap.OpenWrt = ow
}

// parseIPOutput parses ip's JSON, or the text BusyBox's ip printed instead, in
// which case the snapshot says so once.
func parseIPOutput[T any](c *collector, out string, fromJSON, fromText func(io.Reader) ([]T, error)) ([]T, error) {
	text, ok := parse.CutIPText(out)
	if !ok {
		return fromJSON(strings.NewReader(out))
	}
	if !c.snap.IPText {
		c.snap.IPText = true
		c.note("ip", ipTextNote)
	}
	return fromText(strings.NewReader(text))
}
