package collect

import "strings"

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
	"net.netfilter.nf_conntrack_udp_timeout",
	"net.netfilter.nf_conntrack_udp_timeout_stream",
}

// sysctlPath maps "net.core.rmem_max" to "/proc/sys/net/core/rmem_max".
func sysctlPath(key string) string { return "/proc/sys/" + strings.ReplaceAll(key, ".", "/") }

// sysctlValue turns a /proc/sys file's content into the value as sysctl(8)
// prints it: one line, fields separated by tabs as the kernel wrote them.
func sysctlValue(content string) string { return strings.TrimRight(content, "\n") }
