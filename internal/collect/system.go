package collect

import (
	"strings"

	"github.com/wgperf/wgperf/internal/parse"
)

// systemSource is the host itself: its name, distribution and the kernel
// settings wgperf reads (Sysctls), all from the one read of small files.
var systemSource = source{
	files:    append([]string{"/proc/sys/kernel/hostname", "/etc/os-release", "/etc/openwrt_release"}, sysctlPaths()...),
	assemble: (*collector).system,
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

// Sysctls are the kernel settings the seeds' authors read by hand (the tuning guide),
// by their sysctl(8) name. A key missing on the host is simply absent.
var Sysctls = []string{
	"net.ipv4.tcp_congestion_control",
	"net.ipv4.tcp_available_congestion_control",
	"net.ipv4.tcp_allowed_congestion_control",
	"net.core.default_qdisc",
	"net.core.rmem_default",
	"net.core.rmem_max",
	"net.core.wmem_default",
	"net.core.wmem_max",
	"net.ipv4.tcp_rmem",
	"net.ipv4.tcp_wmem",
	"net.ipv4.tcp_adv_win_scale", // the share of tcp_rmem the window may take, before kernel 6.6
	"net.ipv4.udp_mem",
	"net.core.netdev_budget",
	"net.core.netdev_budget_usecs",
	"net.core.dev_weight",
	"net.core.netdev_max_backlog",
	"net.core.netdev_tstamp_prequeue",
	"net.core.rps_sock_flow_entries",
	"net.ipv4.tcp_mtu_probing",
	"net.ipv4.tcp_notsent_lowat",
	"net.ipv4.ip_forward",
	"net.ipv6.conf.all.forwarding",
	"net.netfilter.nf_conntrack_max",
	"net.netfilter.nf_conntrack_buckets",
	"net.netfilter.nf_conntrack_count",
	"net.netfilter.nf_conntrack_tcp_be_liberal",
	"net.netfilter.nf_conntrack_tcp_loose",
	"net.netfilter.nf_conntrack_tcp_ignore_invalid_rst",
	"net.netfilter.nf_conntrack_udp_timeout",
	"net.netfilter.nf_conntrack_udp_timeout_stream",
}

// sysctlPath maps "net.core.rmem_max" to "/proc/sys/net/core/rmem_max".
func sysctlPath(key string) string { return "/proc/sys/" + strings.ReplaceAll(key, ".", "/") }

// sysctlValue turns a /proc/sys file's content into the value as sysctl(8)
// prints it: one line, fields separated by tabs as the kernel wrote them.
func sysctlValue(content string) string { return strings.TrimRight(content, "\n") }

// sysctlPaths are the /proc/sys files of Sysctls.
func sysctlPaths() []string {
	out := make([]string, len(Sysctls))
	for i, k := range Sysctls {
		out[i] = sysctlPath(k)
	}
	return out
}
