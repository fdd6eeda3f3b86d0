// Package facts holds what wgperf learns about a host: plain data with JSON tags
// and no behaviour. Collectors fill a Snapshot through a Target; checks read it;
// "wgperf collect" writes it to a file and "wgperf diagnose --from" reads it back,
// so everything a check needs must live here. Private and preshared keys never do.
package facts

import (
	"regexp"
	"time"

	"github.com/wgperf/wgperf/internal/target"
)

// SchemaVersion changes when a field changes meaning; readers refuse newer versions.
const SchemaVersion = 1

// Snapshot is everything collected from one host at one moment.
type Snapshot struct {
	SchemaVersion int         `json:"schema_version"`
	Host          target.Spec `json:"host"` // the target spec, e.g. "ssh:root@golem"; validated when read
	CollectedAt   time.Time   `json:"collected_at"`

	System    System            `json:"system"`
	WireGuard []WGInterface     `json:"wireguard"`
	Links     []Link            `json:"links"`
	Routes    []Route           `json:"routes"`    // all tables
	Rules     []RouteRule       `json:"rules"`     // ip rule
	Endpoints []EndpointRoute   `json:"endpoints"` // ip route get <peer endpoint>
	Sysctls   map[string]string `json:"sysctls"`   // key as in sysctl(8), value as printed
	Counters  Counters          `json:"counters"`  // /proc/net/snmp and netstat
	Softnet   []SoftnetCPU      `json:"softnet"`   // /proc/net/softnet_stat
	// UDPSockets are the host's bound UDP sockets with their drops
	// (/proc/net/udp, udp6); nil when not collected (older snapshots).
	UDPSockets []UDPSocket `json:"udp_sockets,omitempty"`
	CPU        []CPUTimes  `json:"cpu"`       // /proc/stat, one per CPU ("cpu0"...)
	IRQs       []IRQ       `json:"irqs"`      // /proc/interrupts rows for network devices
	Firewall   Firewall    `json:"firewall"`  // nftables and iptables
	Conntrack  *Conntrack  `json:"conntrack"` // nil when conntrack is not loaded
	OpenWrt    *OpenWrt    `json:"openwrt"`   // nil off OpenWrt
	Notes      []Note      `json:"notes"`     // what could not be collected, and why

	// IPText says ip had no JSON (BusyBox ip: OpenWrt without ip-full) and its
	// text was read: routes carry no protocol and no multipath hops, links no kind.
	IPText bool `json:"ip_text,omitempty"`

	// CPULimits are the CPU quotas of the cgroups the userspace WireGuard
	// processes and iperf3 run in, with their throttling counters; none for
	// a process without a quota (or a snapshot from before they were read).
	CPULimits []CPULimit `json:"cpu_limits,omitempty"`

	// IPsec is the host's IPsec layer (ip xfrm), whose encapsulation a
	// tunnel's packets may take on top of WireGuard's; nil where it has no
	// policy or ip could not say (BusyBox ip, not root).
	IPsec *IPsec `json:"ipsec,omitempty"`
}

// Note records a source that was missing or failed, so checks can say why they skipped.
type Note struct {
	Source  string `json:"source"`  // e.g. "nft", "/proc/net/softnet_stat"
	Message string `json:"message"` // e.g. "nft not installed"
}

// System identifies the host.
type System struct {
	Hostname string `json:"hostname"`
	Kernel   string `json:"kernel"` // uname -r, e.g. "6.1.0-18-amd64"
	Distro   string `json:"distro"` // PRETTY_NAME from os-release, e.g. "OpenWrt 23.05.2"
	CPUs     int    `json:"cpus"`
}

// WGInterface is one WireGuard interface as "wg show all dump" reports it.
type WGInterface struct {
	Name       string `json:"name"`
	PublicKey  string `json:"public_key"`
	ListenPort int    `json:"listen_port"`
	FwMark     uint32 `json:"fwmark,omitempty"`
	MTU        int    `json:"mtu"`
	// Implementation is "kernel" (link kind wireguard), "userspace" (a TUN served
	// by wireguard-go, boringtun...), or "" when unknown.
	Implementation string   `json:"implementation"`
	Peers          []WGPeer `json:"peers"`
}

// WGPeer is one peer of a WireGuard interface.
type WGPeer struct {
	PublicKey           string    `json:"public_key"`
	Endpoint            string    `json:"endpoint"` // "203.0.113.2:51820", "" when none
	AllowedIPs          []string  `json:"allowed_ips"`
	LatestHandshake     time.Time `json:"latest_handshake"` // zero: never
	RxBytes             uint64    `json:"rx_bytes"`
	TxBytes             uint64    `json:"tx_bytes"`
	PersistentKeepalive int       `json:"persistent_keepalive"` // seconds, 0 off
}

// Link is a network interface (ip -j -d link, ethtool -k, sysfs).
type Link struct {
	Name     string            `json:"name"`
	Index    int               `json:"index"`
	MTU      int               `json:"mtu"`
	Kind     string            `json:"kind"`  // linkinfo kind: veth, bond, wireguard, tun, bridge, vlan; "" for plain ethernet
	State    string            `json:"state"` // operstate: UP, DOWN, UNKNOWN
	Master   string            `json:"master,omitempty"`
	Qdisc    string            `json:"qdisc,omitempty"`
	Bond     *Bond             `json:"bond,omitempty"`
	Offloads map[string]bool   `json:"offloads,omitempty"` // ethtool -k feature -> on
	RPSCPUs  map[string]string `json:"rps_cpus,omitempty"` // rx queue -> hex mask from sysfs
	// SpeedMbit and Duplex are what the device negotiated (sysfs speed and
	// duplex), where it reports them: the most its link carries.
	SpeedMbit int    `json:"speed_mbit,omitempty"`
	Duplex    string `json:"duplex,omitempty"` // full, half
	// Stats are the device's counters since it was created (ip -s -s -j
	// link); nil where ip had no statistics (BusyBox ip, older snapshots).
	Stats *LinkStats `json:"stats,omitempty"`
	// Shaper is the rate the device's root qdisc holds its egress to (tc):
	// nil when it shapes nothing or tc is absent.
	Shaper *Shaper `json:"shaper,omitempty"`
}

// Shaper is a rate limit on a device's egress: tbf's rate, cake's
// bandwidth, or the largest ceil of an htb's root classes. A cap set on a
// tunnel against one problem (collapse cycles) outlives it and becomes the
// bottleneck once the problem is fixed (the remote users' case raised its
// wg0 cap from 150 to 450 Mbit/s after its buffer fix).
type Shaper struct {
	Qdisc    string  `json:"qdisc"` // tbf, cake, htb
	RateMbit float64 `json:"rate_mbit,omitempty"`
	Class    string  `json:"class,omitempty"` // htb: the root class that holds the rate, "1:1"
}

// htbClass is a class handle as tc prints it, "1:1" (hex major:minor).
var htbClass = regexp.MustCompile(`^[0-9a-f]{1,4}:[0-9a-f]{1,4}$`)

// Valid reports a shaper as collect reads it: tbf or cake with a rate, or
// htb with a rate and its root class's handle. A snapshot is read from
// files anyone may edit; a check proposes commands only for a valid one.
func (s Shaper) Valid() bool {
	switch s.Qdisc {
	case "tbf", "cake":
		return s.RateMbit > 0 && s.Class == ""
	case "htb":
		return s.RateMbit > 0 && htbClass.MatchString(s.Class)
	}
	return false
}

// LinkStats are a device's packet counters with the kernel's breakdown of
// errors. Kernel WireGuard counts its own rejects here and nowhere else:
// rx_frame_errors for a packet whose inner source is outside the peer's
// AllowedIPs (or is not IP), rx_length_errors for a bad inner length,
// tx_errors for a packet no peer's AllowedIPs cover or whose peer has no
// endpoint, tx_dropped for packets queued while no session came up.
type LinkStats struct {
	RxPackets      uint64 `json:"rx_packets"`
	RxErrors       uint64 `json:"rx_errors"`
	RxDropped      uint64 `json:"rx_dropped"`
	RxFrameErrors  uint64 `json:"rx_frame_errors"`
	RxLengthErrors uint64 `json:"rx_length_errors"`
	RxOverErrors   uint64 `json:"rx_over_errors"`
	RxCRCErrors    uint64 `json:"rx_crc_errors"`
	RxFIFOErrors   uint64 `json:"rx_fifo_errors"`
	RxMissed       uint64 `json:"rx_missed_errors"`
	TxPackets      uint64 `json:"tx_packets"`
	TxErrors       uint64 `json:"tx_errors"`
	TxDropped      uint64 `json:"tx_dropped"`
	TxCarrier      uint64 `json:"tx_carrier_errors"`
	TxFIFOErrors   uint64 `json:"tx_fifo_errors"`
}

// UDPSocket is one row of /proc/net/udp or udp6: a bound UDP socket and the
// datagrams it dropped (a full receive buffer, mostly). A socket bound to a
// WireGuard interface's listen port is that tunnel's; kernel WireGuard's
// receives through an encapsulation hook and never queues, so its drops stay 0.
type UDPSocket struct {
	Family    string `json:"family"` // inet or inet6
	LocalPort int    `json:"local_port"`
	RxQueue   uint64 `json:"rx_queue"` // bytes waiting now
	Drops     uint64 `json:"drops"`
	Inode     uint64 `json:"inode"`
}

// Bond is a bonding master's configuration.
type Bond struct {
	Mode           string   `json:"mode"`             // e.g. "802.3ad"
	XmitHashPolicy string   `json:"xmit_hash_policy"` // e.g. "layer2", "layer3+4"
	Slaves         []string `json:"slaves"`
}

// Route is one route from "ip -j route show table all" (IPv4 and IPv6).
type Route struct {
	Family   string    `json:"family"`         // "inet" or "inet6"
	Table    string    `json:"table"`          // "main", "local", or a number
	Type     string    `json:"type,omitempty"` // unicast unless stated: local, broadcast, blackhole...
	Dst      string    `json:"dst"`            // "default" or a prefix; host routes as bare addresses
	Gateway  string    `json:"gateway,omitempty"`
	Dev      string    `json:"dev,omitempty"`
	Protocol string    `json:"protocol,omitempty"` // kernel, boot, static, dhcp...
	Metric   int       `json:"metric"`
	Scope    string    `json:"scope,omitempty"`
	PrefSrc  string    `json:"prefsrc,omitempty"`
	Flags    []string  `json:"flags,omitempty"`    // e.g. "linkdown"
	Nexthops []Nexthop `json:"nexthops,omitempty"` // ECMP
}

// Nexthop is one leg of a multipath route.
type Nexthop struct {
	Gateway string `json:"gateway,omitempty"`
	Dev     string `json:"dev"`
	Weight  int    `json:"weight"`
}

// RouteRule is one policy routing rule (ip -j rule).
type RouteRule struct {
	Family   string `json:"family"`
	Priority int    `json:"priority"`
	Src      string `json:"src,omitempty"`
	Dst      string `json:"dst,omitempty"`
	FwMark   string `json:"fwmark,omitempty"`
	IIf      string `json:"iif,omitempty"`
	Table    string `json:"table"`
	Action   string `json:"action,omitempty"` // "" for lookup
}

// EndpointRoute is the route the kernel would pick for a peer's endpoint.
type EndpointRoute struct {
	Interface string `json:"interface"` // WireGuard interface
	Peer      string `json:"peer"`      // peer public key
	Endpoint  string `json:"endpoint"`  // address without port
	Dev       string `json:"dev"`
	Gateway   string `json:"gateway,omitempty"`
	Src       string `json:"src,omitempty"`
}

// Counters are the kernel's protocol counters: Counters.SNMP["Udp"]["RcvbufErrors"].
type Counters struct {
	SNMP    map[string]map[string]int64 `json:"snmp"`    // /proc/net/snmp
	Netstat map[string]map[string]int64 `json:"netstat"` // /proc/net/netstat (TcpExt, IpExt)
}

// SoftnetCPU is one row of /proc/net/softnet_stat.
type SoftnetCPU struct {
	CPU         int    `json:"cpu"`
	Processed   uint64 `json:"processed"`
	Dropped     uint64 `json:"dropped"`
	TimeSqueeze uint64 `json:"time_squeeze"`
	ReceivedRPS uint64 `json:"received_rps"`
}

// NetDev is one interface's row of /proc/net/dev: what the interface carried
// and what it dropped or got wrong, counted by the kernel since it was created.
type NetDev struct {
	Name      string `json:"name"`
	RxBytes   uint64 `json:"rx_bytes"`
	RxPackets uint64 `json:"rx_packets"`
	RxErrors  uint64 `json:"rx_errors"`
	RxDropped uint64 `json:"rx_dropped"`
	// RxFrame is the "frame" column: frame, length, overrun and CRC errors
	// together. Kernel WireGuard counts its rejects from peers there (an inner
	// source outside the peer's AllowedIPs, a packet that is not IP, a bad length).
	RxFrame   uint64 `json:"rx_frame_errors,omitempty"`
	TxBytes   uint64 `json:"tx_bytes"`
	TxPackets uint64 `json:"tx_packets"`
	TxErrors  uint64 `json:"tx_errors"`
	TxDropped uint64 `json:"tx_dropped"`
}

// CPUTimes is one cpuN line of /proc/stat, in clock ticks.
type CPUTimes struct {
	CPU     string `json:"cpu"`
	User    uint64 `json:"user"`
	Nice    uint64 `json:"nice"`
	System  uint64 `json:"system"`
	Idle    uint64 `json:"idle"`
	IOWait  uint64 `json:"iowait"`
	IRQ     uint64 `json:"irq"`
	SoftIRQ uint64 `json:"softirq"`
	Steal   uint64 `json:"steal"`
}

// CPULimit is the CPU quota that binds one process: the tightest quota of its
// cgroup and the cgroup's ancestors (cgroup v2 cpu.max, v1 cpu.cfs_quota_us
// and cpu.cfs_period_us), and that cgroup's throttling counters (cpu.stat),
// cumulative since the cgroup was made.
type CPULimit struct {
	Process string `json:"process"` // its comm, e.g. "wireguard-go"
	PID     int    `json:"pid"`
	// Interface is the WireGuard interface (TUN) the process serves; "" for
	// a test tool (iperf3).
	Interface string `json:"interface,omitempty"`
	Version   int    `json:"cgroup_version"` // 1 or 2
	Cgroup    string `json:"cgroup"`         // the limiting cgroup's path in its hierarchy, e.g. "/docker/abc"
	Dir       string `json:"dir"`            // where its files were read
	// QuotaUsec of CPU time the cgroup may use per PeriodUsec, all its CPUs together.
	QuotaUsec     int64  `json:"quota_usec"`
	PeriodUsec    int64  `json:"period_usec"`
	Periods       uint64 `json:"nr_periods"`     // enforcement periods in which it ran
	Throttled     uint64 `json:"nr_throttled"`   // periods in which it ran out of quota
	ThrottledUsec uint64 `json:"throttled_usec"` // time it waited for the next period (v1 throttled_time / 1000)
}

// IRQ is one /proc/interrupts row, with its count on each CPU.
type IRQ struct {
	IRQ    string   `json:"irq"`
	Name   string   `json:"name"` // device/queue, e.g. "eth0-rx-0"
	PerCPU []uint64 `json:"per_cpu"`
	// Device is the network device whose PCI function owns the interrupt
	// (sysfs msi_irqs), "" when unknown: a virtio NIC's rows are named
	// after its virtio device ("virtio2-input.0"), not after eth0.
	Device string `json:"device,omitempty"`
}

// Firewall is the packet filter as far as wgperf's checks care.
type Firewall struct {
	Nftables bool            `json:"nftables"` // nft answered
	Iptables bool            `json:"iptables"` // iptables-save answered with rules
	Rules    []FirewallRule  `json:"rules"`    // in chain order, as the tools list them
	Chains   []FirewallChain `json:"chains,omitempty"`
	Counters []NamedCounter  `json:"counters"` // nftables named counters
}

// FirewallChain is a chain with its policy: what a base chain does with the
// packets no rule decided on (a limit that accepts "up to N" drops the rest there).
type FirewallChain struct {
	Backend string `json:"backend"` // "nft" or "iptables"
	Family  string `json:"family"`
	Table   string `json:"table"`
	Name    string `json:"name"`
	Hook    string `json:"hook,omitempty"`   // "" for a regular chain (reached by jump/goto)
	Policy  string `json:"policy,omitempty"` // accept or drop; base chains only
	// Packets/Bytes count the policy's verdicts: iptables-save -c prints them,
	// nftables has no policy counter (HasCounter false).
	Packets    uint64 `json:"packets,omitempty"`
	Bytes      uint64 `json:"bytes,omitempty"`
	HasCounter bool   `json:"has_counter,omitempty"`
}

// FirewallRule is one nftables or iptables rule with the parts checks look at
// lifted out; Text keeps the rule as the tool prints it.
type FirewallRule struct {
	Backend  string     `json:"backend"` // "nft" or "iptables"
	Family   string     `json:"family"`  // ip, ip6, inet, bridge...
	Table    string     `json:"table"`
	Chain    string     `json:"chain"`
	Hook     string     `json:"hook,omitempty"` // prerouting, input, forward, output, postrouting
	Handle   int        `json:"handle,omitempty"`
	Text     string     `json:"text"`
	IIf      string     `json:"iif,omitempty"`      // iifname match
	OIf      string     `json:"oif,omitempty"`      // oifname match
	Protocol string     `json:"protocol,omitempty"` // l4 protocol matched: icmp, icmpv6, tcp, udp
	Verdict  string     `json:"verdict,omitempty"`  // accept, drop, reject, jump X...
	Limit    *RateLimit `json:"limit,omitempty"`
	// Meter names the nft meter or dynamic set that keeps Limit per key (per
	// source address, usually): "update @icmp_src { ip saddr limit rate over 10/second }".
	Meter string `json:"meter,omitempty"`
	// Position is an iptables rule's number in its chain (1 = first), as
	// "iptables -R CHAIN N" wants it.
	Position int `json:"position,omitempty"`
	// Packets/Bytes are the rule's own counter, or the named counter it references.
	Packets     uint64 `json:"packets"`
	Bytes       uint64 `json:"bytes"`
	HasCounter  bool   `json:"has_counter"`
	CounterName string `json:"counter_name,omitempty"`
	// MSSClamp is set on TCP MSS rewrite rules: "rt mtu"/"pmtu" for clamp-to-PMTU, or a number.
	MSSClamp string `json:"mss_clamp,omitempty"`
	NoTrack  bool   `json:"notrack,omitempty"`
}

// RateLimit is an nftables "limit" or iptables limit/hashlimit match.
type RateLimit struct {
	Rate  uint64 `json:"rate"`
	Per   string `json:"per"` // second, minute...
	Burst uint64 `json:"burst"`
	Unit  string `json:"unit"` // packets or bytes
	Over  bool   `json:"over"` // matches traffic above the rate (nft "limit rate over")
}

// NamedCounter is an nftables named counter object.
type NamedCounter struct {
	Family  string `json:"family"`
	Table   string `json:"table"`
	Name    string `json:"name"`
	Packets uint64 `json:"packets"`
	Bytes   uint64 `json:"bytes"`
}

// Conntrack is the connection tracking table's size and trouble counters.
type Conntrack struct {
	Count        int64  `json:"count"`
	Max          int64  `json:"max"`
	Buckets      int64  `json:"buckets"`
	InsertFailed uint64 `json:"insert_failed"`
	Drop         uint64 `json:"drop"`
	EarlyDrop    uint64 `json:"early_drop"`
	Invalid      uint64 `json:"invalid"`
}

// OpenWrt holds the uci configuration and logs of an OpenWrt router.
type OpenWrt struct {
	// uci show network, mwan3 and banip: section lines and the options
	// parse.ParseUCI allow-lists only ("network.wg.nohostroute" -> "1").
	Network     map[string]string `json:"network"`
	Mwan3       map[string]string `json:"mwan3,omitempty"`
	Banip       map[string]string `json:"banip,omitempty"`
	Mwan3Status string            `json:"mwan3_status,omitempty"`
	// Interfaces are netifd's interfaces as ubus reports them now: how long
	// each has been up dates when netifd last made its routes.
	Interfaces []NetifdInterface `json:"interfaces,omitempty"`
	// Uplinks and Policies are what "mwan3 status" says now.
	Uplinks  []Mwan3Uplink `json:"mwan3_uplinks,omitempty"`
	Policies []Mwan3Policy `json:"mwan3_policies,omitempty"`
	Events   []LinkEvent   `json:"events,omitempty"` // health-check flaps from logread
	// Checks are mwan3track's failed health checks in logread, per uplink:
	// they outlive the firewall counters that explain them (a reboot or a
	// firewall reload resets those).
	Checks []HealthChecks `json:"health_checks,omitempty"`
}

// IPsec is what "ip xfrm policy" and "ip xfrm state" say, without keys
// (they are cut on the host before its output leaves it).
type IPsec struct {
	Policies []XfrmPolicy `json:"policies"`
	States   []XfrmState  `json:"states"`
}

// XfrmPolicy is one IPsec policy: the packets it selects and the
// transformations (templates) it applies to them, outermost last.
type XfrmPolicy struct {
	Src       string         `json:"src"` // selector prefixes, e.g. "0.0.0.0/0"
	Dst       string         `json:"dst"`
	Proto     string         `json:"proto,omitempty"` // selector's protocol ("udp"); "" any
	DPort     int            `json:"dport,omitempty"`
	Dir       string         `json:"dir"`              // out, in, fwd
	Action    string         `json:"action,omitempty"` // allow (default) or block
	Priority  int64          `json:"priority"`         // the lowest that selects a packet applies
	Templates []XfrmTemplate `json:"templates"`
}

// XfrmTemplate is one transformation of a policy.
type XfrmTemplate struct {
	Src   string `json:"src,omitempty"` // tunnel mode's outer addresses
	Dst   string `json:"dst,omitempty"`
	Proto string `json:"proto"` // esp, ah, comp
	Mode  string `json:"mode"`  // tunnel, transport, beet
}

// XfrmState is one IPsec security association: its algorithms (never its
// keys) and its encapsulation.
type XfrmState struct {
	Src      string `json:"src"`
	Dst      string `json:"dst"`
	Proto    string `json:"proto"`
	Mode     string `json:"mode"`
	Enc      string `json:"enc,omitempty"`  // e.g. "cbc(aes)"
	Auth     string `json:"auth,omitempty"` // e.g. "hmac(sha256)"
	AuthBits int    `json:"auth_bits,omitempty"`
	AEAD     string `json:"aead,omitempty"` // e.g. "rfc4106(gcm(aes))"
	ICVBits  int    `json:"icv_bits,omitempty"`
	Encap    string `json:"encap,omitempty"` // "espinudp": NAT traversal, 8 bytes more
}

// NetifdInterface is one of netifd's logical interfaces (ubus call
// network.interface dump).
type NetifdInterface struct {
	Name   string `json:"name"` // the uci section, e.g. "wg"
	Up     bool   `json:"up"`
	Uptime int64  `json:"uptime,omitempty"` // seconds since it came up; 0 when down
	Device string `json:"device,omitempty"` // its layer-3 device, e.g. "eth1"
	Proto  string `json:"proto,omitempty"`  // e.g. "dhcp", "wireguard"
}

// Mwan3Uplink is one uplink's line in "mwan3 status": its state, and how
// long mwan3track has seen it online and netifd has had it up (0: not said).
type Mwan3Uplink struct {
	Interface string `json:"interface"`
	Status    string `json:"status"` // online, offline, disabled, unknown
	Tracking  string `json:"tracking,omitempty"`
	Online    int64  `json:"online_seconds,omitempty"`
	Uptime    int64  `json:"uptime_seconds,omitempty"`
}

// Mwan3Policy is one policy's share of traffic per uplink in "mwan3 status".
type Mwan3Policy struct {
	Name   string       `json:"name"`
	Family string       `json:"family,omitempty"` // ipv4, ipv6; "" where the paste did not say
	Shares []Mwan3Share `json:"shares"`
}

// Mwan3Share is an uplink's percentage of a policy's traffic.
type Mwan3Share struct {
	Interface string `json:"interface"`
	Percent   int    `json:"percent"`
}

// HealthChecks is what mwan3track logged of one uplink's failed health
// checks ("Check (ping) failed for target ... Current score: N").
type HealthChecks struct {
	Interface string    `json:"interface"`
	Device    string    `json:"device,omitempty"`
	Failed    int       `json:"failed"`    // failed checks logged
	Targets   []string  `json:"targets"`   // the addresses whose checks failed, sorted
	MinScore  int       `json:"min_score"` // the lowest score logged (0 takes the uplink offline)
	First     time.Time `json:"first"`
	Last      time.Time `json:"last"`
}

// LinkEvent is an uplink going online or offline, as mwan3 logs it.
type LinkEvent struct {
	Time      time.Time `json:"time"`
	Interface string    `json:"interface"`
	Device    string    `json:"device,omitempty"`
	State     string    `json:"state"` // online, offline
}
