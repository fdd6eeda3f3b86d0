// Package lab builds reproducible WireGuard topologies in network namespaces, so
// users see a real diagnosis without owning a tunnel and tests have real tunnels
// to break and fix.
//
// A tunnel end is either the kernel's WireGuard (an "ip link add type
// wireguard" in the node's namespace) or, where the kernel has no module, an
// embedded wireguard-go process (wgperf re-executed as "lab _node") inside its
// namespace, serving the standard UAPI socket that wg(8) reads; Config.WireGuard
// chooses. Package lab/guest boots a kernel that has the module when this
// machine's does not. Every name a lab creates
// starts with its prefix (namespaces "wgl-NAME-NODE", interfaces "wg-NAME-NODE"),
// and Down removes all of it, also after a crash or a kill -9 of the nodes.
package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/target"
)

// Topology names a lab layout.
type Topology string

const (
	// SiteToSite is A —— R —— B with WireGuard between A and B.
	SiteToSite Topology = "site-to-site"
	// MultiWAN is the multi-WAN router case's router: A has a fast primary and a slow backup uplink
	// to R (default routes metric 10 and 20), and R reaches B's endpoint. R answers the backup from
	// 100.64.0.1, as a 5G carrier's NAT does.
	MultiWAN Topology = "multi-wan"
)

// Shape is what the lab does to an underlay link.
type Shape struct {
	RateMbit int `json:"rate_mbit,omitempty"` // tbf rate on the link's egress; 0 = unshaped
	LossPct  int `json:"loss_pct,omitempty"`  // random loss of forwarded UDP datagrams (nft numgen)
	// DelayMs is added one way in each direction by R (netem where the
	// kernel has it, else a userspace delay element), so the round trip
	// grows by twice it.
	DelayMs int `json:"delay_ms,omitempty"`
	// PathLossPct is random loss of every packet R forwards, both ways, as on
	// a real WAN (netem: needs a kernel that has it); LossPct drops only UDP
	// datagrams, the tunnel's.
	PathLossPct float64 `json:"path_loss_pct,omitempty"`
}

// Config describes a lab to build. Zero values give a healthy site-to-site lab.
type Config struct {
	Name     string   `json:"name"` // 1-8 of [a-z0-9]; default "demo"
	Topology Topology `json:"topology"`
	// Underlay shapes the links between the sites (multi-wan: the primary uplink).
	Underlay Shape `json:"underlay"`
	// Backup shapes multi-wan's backup uplink; its rate defaults to 20 Mbit/s.
	Backup Shape `json:"backup"`
	// BondSlaves, when > 1, joins A to R by an 802.3ad bond (bond0) of this
	// many veth pairs, each shaped both ways at the underlay's rate, with
	// LACP on R as on a switch: the ECMP case's bond, where one tunnel gets
	// one slave's rate. Needs the bonding driver (a distro kernel has it,
	// e.g. in lab vm); site-to-site only.
	BondSlaves int `json:"bond_slaves,omitempty"`
	// BondHash is A's bond's xmit_hash_policy (default layer3+4).
	BondHash string `json:"bond_hash,omitempty"`
	// PathMTU lowers the MTU of the R —— B link (0 = 1500): a narrow hop that A
	// cannot see from its own interfaces.
	PathMTU int `json:"path_mtu,omitempty"`
	// DropFragNeeded makes R drop ICMP "fragmentation needed", turning a narrow
	// hop into a PMTUD black hole (the PMTUD black hole case).
	DropFragNeeded bool `json:"drop_frag_needed,omitempty"`
	// SilentHopMTU, when > 0, makes R drop, without a word, every packet
	// larger than this on its way to B: a hop mid-path whose smaller MTU no
	// router announces (an L2 segment, a carrier's tunnel), while both ends
	// keep 1500. It hurts the A→B direction only, the underlay's own TCP as
	// much as the tunnel, and A sends each packet on its own (no segmentation
	// offload) so the hop judges each by its size.
	SilentHopMTU int `json:"silent_hop_mtu,omitempty"`
	// SilentHopToA turns SilentHopMTU's hop the other way: it drops large
	// packets on their way to A only (the far-to-near direction, a return
	// route unlike the way out), and B sends each packet on its own.
	SilentHopToA bool `json:"silent_hop_to_a,omitempty"`
	// DropFragments makes R drop the IP fragments it forwards (both ways), as
	// some firewalls and carrier NATs do: with PathMTU, a kernel WireGuard
	// tunnel's outer packets (DF clear) are fragmented at the narrow hop and
	// lost. Needs tc actions (act_gact), which a distro kernel has.
	DropFragments bool `json:"drop_fragments,omitempty"`
	// Bursts makes R hand packets on in bursts of up to 64 KB, as a NIC's
	// interrupt coalescing delivers a batch at once, so a receiver's per-CPU
	// backlog meets tens of packets before softirq processing takes one:
	// netem slots at the underlay's rate where the kernel has sch_netem, else
	// (this machine's kernel; userspace WireGuard only) the senders' UDP
	// batches segmented in software on R, which arrive the same way. Needs a
	// shaped underlay and no --delay or --path-loss.
	Bursts bool `json:"bursts,omitempty"`
	// UDPPolicePct, when > 0, makes R police the UDP it forwards, each way, to
	// this percent of the underlay's rate: a carrier that limits UDP (the
	// tunnel's and anyone's) while TCP runs at the link's rate. Datagrams
	// above the rate are dropped (a token bucket of 20 ms, no queue).
	UDPPolicePct int `json:"udp_police_pct,omitempty"`
	// PortPolicePct, when > 0, makes R police only the UDP that carries the
	// tunnel's port number (source or destination), each way, to this
	// percent of the underlay's rate: a carrier that throttles WireGuard's
	// well-known port and passes other UDP at the link's rate.
	PortPolicePct int `json:"port_police_pct,omitempty"`
	// ClientPort, when > 0, is A's WireGuard listen port (tunnel k: +k)
	// instead of the tunnel's: a client that does not share the server's
	// port, as most do (B learns it from the handshake).
	ClientPort int `json:"client_port,omitempty"`
	// CPUQuotaPct, when > 0, runs A's WireGuard process (userspace only;
	// with HubMbit, the hub's) in
	// a cgroup whose CPU quota is this percent of one CPU, as docker --cpus
	// or systemd's CPUQuota= would: the tunnel runs far below the link
	// while no CPU looks busy.
	CPUQuotaPct int `json:"cpu_quota_pct,omitempty"`
	// KneePct, when > 0, puts a Knee on R in front of B's WireGuard at this
	// percent of the underlay's rate: the tunnel's packets from A pass until
	// a second's worth goes above it, then it collapses to half for a few
	// seconds and recovers (a receiver whose CPU saturates: collapse cycles).
	KneePct int `json:"knee_pct,omitempty"`
	// PathCycleSeconds, when > 0, makes the link under the tunnel cycle:
	// R's shapers, both ways, run at the underlay's rate for half of every
	// such period and at PathCycleLowPct percent of it (default 40) for the
	// other half, as a radio link, a scheduled shaper or a shared uplink
	// does. The tunnel swings with it; the cycle is the path's, not a knee.
	PathCycleSeconds int `json:"path_cycle_seconds,omitempty"`
	PathCycleLowPct  int `json:"path_cycle_low_pct,omitempty"`
	// BackgroundPings, when > 0, runs a monitoring agent's ping on A (one
	// raw ICMP socket, like telegraf's ping input): this many echo requests
	// back to back every second to A's gateway, whose replies meet any ICMP
	// limit on A's uplink before the health checks' do.
	BackgroundPings int `json:"background_pings,omitempty"`
	// ICMPLimit, when > 0, adds the multi-WAN router's banIP rule on A's (primary) uplink:
	// ICMP above this many packets/second (burst 5) is counted and dropped.
	ICMPLimit int `json:"icmp_limit,omitempty"`
	// ICMPLimitStyle is how the ICMP limit is written: "" or ICMPLimitBanIP
	// for banIP's nft "limit rate over N drop"; ICMPLimitIptables for the
	// classic iptables pair "-m limit --limit N/sec -j ACCEPT" then "-j DROP",
	// where the DROP rule's counter holds the drops.
	ICMPLimitStyle string `json:"icmp_limit_style,omitempty"`
	// WireGuard is the implementation of the tunnel ends: Kernel or
	// Userspace; "" picks kernel where the module loads, else userspace, and
	// Up records the choice here.
	WireGuard Implementation `json:"wireguard,omitempty"`
	// Congestion is every node's TCP congestion control
	// (net.ipv4.tcp_congestion_control in its namespace); "" keeps what the
	// namespaces inherit from the host. A child namespace may only choose an
	// algorithm in the host's net.ipv4.tcp_allowed_congestion_control.
	Congestion string `json:"congestion,omitempty"`
	// WGMTU is the WireGuard interfaces' MTU (default 1420).
	WGMTU int `json:"wg_mtu,omitempty"`
	// UDPBuffer caps the WireGuard nodes' UDP socket buffers (bytes) like an
	// implementation that keeps the system default would; 0 keeps wireguard-go's
	// 7 MiB; UDPBufferCapped lets net.core.rmem_max/wmem_max cap them.
	UDPBuffer int `json:"udp_buffer,omitempty"`
	// UDPBufferPercent, between 1 and 99, gives UDPBufferCapped buffers that
	// share of what rmem_max allows: a lab shaped below its case's rate keeps
	// the buffer's share of the path's bandwidth-delay product (the drops
	// come when the receiver stalls longer than the buffer lasts, so a
	// buffer five times too long at a fifth of the rate hardly drops).
	UDPBufferPercent int `json:"udp_buffer_percent,omitempty"`
	// LAN adds node "lan" behind A and node "lanb" behind B, whose traffic the
	// sites forward through the tunnel.
	LAN bool `json:"lan,omitempty"`
	// Clients adds this many client hosts behind A (nodes c1, c2, ...),
	// each on a link of its own (10.11.N.2/24), whose traffic A forwards
	// through the tunnel: several clients loading B at once, as the tuning
	// guide's load test did (bench --clients; clients.go).
	Clients int `json:"clients,omitempty"`
	// HubMbit, when > 0, makes R a road-warrior hub (hub.go): A and B each
	// have a tunnel to it only, and it forwards between them, so the path
	// A → B is two WireGuard hops; its link to B (both ways) is shaped at
	// this rate, the A —— R link (both ways) at the underlay's.
	HubMbit int `json:"hub_mbit,omitempty"`
	// NATTimeout, when > 0, puts B behind R as behind a home router's NAT
	// (nat.go): R masquerades what B sends towards A and forgets an idle UDP
	// mapping after this many seconds; B dials A and keeps no keepalive, so
	// A reaches B only while a mapping B made lives.
	NATTimeout int `json:"nat_timeout,omitempty"`
	// CloneA adds node "a2", a clone of A as a copied VM or config is
	// (clone.go): A's private key and tunnel address, dialling B through
	// an uplink of its own, with traffic of its own through the tunnel.
	CloneA bool `json:"clone_a,omitempty"`
	// Router makes node A also an OpenWrt-like router reached over ssh:
	// dropbear serving a BusyBox userland with nft, wg, uci and logread only
	// (see RouterSSH).
	Router bool `json:"router,omitempty"`
}

// ICMP limit styles (Config.ICMPLimitStyle).
const (
	ICMPLimitBanIP    = "banip"
	ICMPLimitIptables = "iptables"
)

// Node is one namespace of a lab.
type Node struct {
	Name         string `json:"name"`  // a, r, b, lan
	Netns        string `json:"netns"` // wgl-NAME-NODE
	WGInterface  string `json:"wg_interface,omitempty"`
	TunnelAddr   string `json:"tunnel_addr,omitempty"`   // WireGuard address, no prefix length
	UnderlayAddr string `json:"underlay_addr,omitempty"` // the endpoint address peers use
	LANAddr      string `json:"lan_addr,omitempty"`      // LAN hosts: their address
	ListenPort   int    `json:"listen_port,omitempty"`
	PublicKey    string `json:"public_key,omitempty"`
	PID          int    `json:"pid,omitempty"`            // the WireGuard node process
	DelayPID     int    `json:"delay_pid,omitempty"`      // the delay element (router)
	KneePID      int    `json:"knee_pid,omitempty"`       // the knee (router)
	PathCyclePID int    `json:"path_cycle_pid,omitempty"` // the loop that cycles the path (router)
	SSHPID       int    `json:"ssh_pid,omitempty"`        // the router node's dropbear
}

// Lab is a built lab, as saved in its state file.
type Lab struct {
	Config  Config           `json:"config"`
	Nodes   map[string]*Node `json:"nodes"`
	Tunnels []Tunnel         `json:"tunnels"`
	Created time.Time        `json:"created"`
	// Executable is the wgperf binary the nodes run; tests set it to a built binary.
	Executable string `json:"executable"`
	// ImplementationNote says why Config.WireGuard was chosen when the
	// user left it to the lab ("" when they asked for one).
	ImplementationNote string `json:"implementation_note,omitempty"`
	// DelayBy is what adds Underlay.DelayMs: DelayNetem where the kernel
	// has sch_netem, else DelayElement (the lab's userspace element).
	DelayBy string `json:"delay_by,omitempty"`

	shaped map[string]int // "node/interface" → tbf Mbit/s, while building
}

// What adds a lab's delay (Lab.DelayBy).
const (
	DelayNetem   = "netem"
	DelayElement = "userspace delay element"
)

// StateDir holds one folder per lab with its state and node logs. It lives on
// tmpfs, like the namespaces it describes.
var StateDir = "/run/wgperf/lab"

// Prefix starts every namespace the lab creates.
const Prefix = "wgl-"

var validName = regexp.MustCompile(`^[a-z0-9]{1,8}$`)

// Target runs commands in a node's namespace.
func (l *Lab) Target(node string) target.Target { return target.Netns(l.Netns(node)) }

// Netns is the namespace name of a node.
func (l *Lab) Netns(node string) string { return Netns(l.Config.Name, node) }

// WGInterface is the WireGuard interface name of a node ("" for routers).
func (l *Lab) WGInterface(node string) string {
	if n, ok := l.Nodes[node]; ok {
		return n.WGInterface
	}
	return ""
}

// Node returns a node by name, or nil.
func (l *Lab) Node(name string) *Node { return l.Nodes[name] }

// NodeNames lists the lab's nodes in a stable order.
func (l *Lab) NodeNames() []string {
	names := make([]string, 0, len(l.Nodes))
	for n := range l.Nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Netns is the namespace name of node in lab name.
func Netns(name, node string) string { return Prefix + name + "-" + node }

func stateFile(name string) string { return filepath.Join(StateDir, name, "state.json") }

// Load reads a running lab's state.
func Load(name string) (*Lab, error) {
	b, err := os.ReadFile(stateFile(name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("lab %q is not up (wgperf lab up --name %s)", name, name)
	}
	if err != nil {
		return nil, err
	}
	var l Lab
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("lab %q: bad state file %s: %v", name, stateFile(name), err)
	}
	return &l, nil
}

func (l *Lab) save() error {
	if err := os.MkdirAll(filepath.Dir(stateFile(l.Config.Name)), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(stateFile(l.Config.Name), b, 0o644)
}

// List returns the names of labs that have a namespace or a state folder.
func List(ctx context.Context) ([]string, error) {
	seen := map[string]bool{}
	nss, err := namespaces(ctx)
	if err != nil {
		return nil, err
	}
	for _, ns := range nss {
		if rest, ok := strings.CutPrefix(ns, Prefix); ok {
			if i := strings.LastIndexByte(rest, '-'); i > 0 {
				seen[rest[:i]] = true
			}
		}
	}
	if entries, err := os.ReadDir(StateDir); err == nil {
		for _, e := range entries {
			seen[e.Name()] = true
		}
	}
	var names []string
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

func namespaces(ctx context.Context) ([]string, error) {
	out, err := target.Local().Run(ctx, "ip", "netns", "list")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			names = append(names, f[0])
		}
	}
	return names, nil
}

// Down removes every trace of lab name: node processes (by the pids in each of
// its namespaces), namespaces, UAPI sockets and the state folder. It works from
// the namespace names alone, so a crashed or half-built lab goes too.
func Down(ctx context.Context, name string) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("lab name %q: want 1-8 lowercase letters or digits", name)
	}
	host := target.Local()
	nss, err := namespaces(ctx)
	if err != nil {
		return err
	}
	var errs []error
	// Every process in the lab's namespaces is one the lab started (nodes,
	// iperf3 servers, sshd from tests, a fleet's dropbears): end them all,
	// then wait once, so the namespaces can go (a fleet of 1,000 routers
	// took 105 s one namespace at a time).
	var mine, pids []string
	for _, ns := range nss {
		if !strings.HasPrefix(ns, Prefix+name+"-") {
			continue
		}
		mine = append(mine, ns)
		if out, err := host.Run(ctx, "ip", "netns", "pids", ns); err == nil {
			pids = append(pids, strings.Fields(string(out))...)
		}
	}
	for i := 0; i < len(pids); i += 500 {
		_, _ = host.Run(ctx, "kill", append([]string{"-9"}, pids[i:min(i+500, len(pids))]...)...)
	}
	waitGone(ctx, pids)
	for _, ns := range mine {
		if _, err := host.Run(ctx, "ip", "netns", "delete", ns); err != nil {
			errs = append(errs, err)
		}
	}
	socks, _ := filepath.Glob(socketPath("wg-" + name + "-*"))
	routerSocks, _ := filepath.Glob(socketPath(routerWGName(name, "*")))
	socks = append(socks, routerSocks...)
	for _, s := range socks {
		if err := os.Remove(s); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := removeCPUQuota(name); err != nil {
		errs = append(errs, err)
	}
	if err := os.RemoveAll(filepath.Join(StateDir, name)); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// processGoneWait bounds how long Down waits for the processes it killed:
// SIGKILL is delivered at once, but a loaded machine takes a moment to tear
// a process down, and a node seen alive after "lab down" is a lab left behind.
const processGoneWait = 5 * time.Second

// waitGone waits until none of pids is a live process (gone, or a zombie
// waiting for its parent), or processGoneWait has passed.
func waitGone(ctx context.Context, pids []string) {
	deadline := time.Now().Add(processGoneWait)
	for _, p := range pids {
		pid, err := strconv.Atoi(p)
		for err == nil && target.ProcessLive(pid) && time.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
	}
}
