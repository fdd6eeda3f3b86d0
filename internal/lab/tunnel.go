package lab

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/shell"

	"golang.zx2c4.com/wireguard/wgctrl/wgtypes"
)

// Tunnel is one WireGuard tunnel between A and B. Tunnel 0 is the lab's main
// one; more (AddTunnel) give the ECMP case's parallel tunnels for ECMP.
type Tunnel struct {
	Index   int    `json:"index"`
	Port    int    `json:"port"` // listen port on both ends
	IfA     string `json:"if_a"`
	IfB     string `json:"if_b"`
	AddrA   string `json:"addr_a"`
	AddrB   string `json:"addr_b"`
	KeyA    string `json:"public_key_a"`
	KeyB    string `json:"public_key_b"`
	PIDA    int    `json:"pid_a"` // wireguard-go node processes; 0 for kernel WireGuard
	PIDB    int    `json:"pid_b"`
	UplinkA string `json:"uplink_a,omitempty"` // multi-wan: A's uplink the tunnel is pinned to
}

// AddTunnel starts one more tunnel between A and B on the next port
// (51820+k), with addresses 10.77.k.1/.2. On multi-wan, tunnel k leaves A
// through uplink k mod 2 (a source-port policy rule), so parallel tunnels use
// both uplinks as the ECMP case's bond hashing did. Routes over it are the caller's.
func (l *Lab) AddTunnel(ctx context.Context) (*Tunnel, error) {
	k := len(l.Tunnels)
	suffix := ""
	if k > 0 {
		suffix = strconv.Itoa(k)
	}
	ifA := "wg-" + l.Config.Name + "-a" + suffix
	if l.Config.Router {
		// On OpenWrt the WireGuard device is named after its uci interface,
		// and uci names are [A-Za-z0-9_]: fixes address it as network.NAME.
		ifA = routerWGName(l.Config.Name, suffix)
	}
	t := &Tunnel{
		Index: k, Port: WGPort + k,
		IfA: ifA, IfB: "wg-" + l.Config.Name + "-b" + suffix,
		AddrA: fmt.Sprintf("10.77.%d.1", k), AddrB: fmt.Sprintf("10.77.%d.2", k),
	}
	keyA, err := wgtypes.GeneratePrivateKey()
	if err != nil {
		return nil, err
	}
	keyB, err := wgtypes.GeneratePrivateKey()
	if err != nil {
		return nil, err
	}
	t.KeyA, t.KeyB = keyA.PublicKey().String(), keyB.PublicKey().String()
	for _, end := range []struct {
		node, ifname, addr string
		pid                *int
	}{{"a", t.IfA, t.AddrA, &t.PIDA}, {"b", t.IfB, t.AddrB, &t.PIDB}} {
		if l.Config.WireGuard == Kernel {
			if err := l.createKernelLink(ctx, l.Nodes[end.node], end.ifname); err != nil {
				return nil, err
			}
		} else {
			pid, err := l.startNode(ctx, l.Nodes[end.node], end.ifname)
			if err != nil {
				return nil, err
			}
			*end.pid = pid
		}
		b := &builder{lab: l}
		b.on(end.node, "ip", "addr", "add", end.addr+"/24", "dev", end.ifname)
		b.on(end.node, "ip", "link", "set", "dev", end.ifname, "mtu", strconv.Itoa(l.Config.WGMTU), "up")
		if err := b.run(ctx); err != nil {
			return nil, err
		}
	}
	if l.Config.Topology == MultiWAN && k > 0 {
		t.UplinkA = "eth0"
		gw := primaryGW
		if k%2 == 1 {
			t.UplinkA, gw = "eth1", backupGW
		}
		table := strconv.Itoa(200 + k)
		b := &builder{lab: l}
		b.on("a", "ip", "route", "add", "default", "via", gw, "dev", t.UplinkA, "table", table)
		b.on("a", "ip", "rule", "add", "ipproto", "udp", "sport", strconv.Itoa(l.clientPort(t)), "lookup", table, "priority", table)
		if err := b.run(ctx); err != nil {
			return nil, err
		}
	}
	bAllowed := t.AddrA + "/32"
	if l.Config.LAN && k == 0 {
		bAllowed += "," + lanNet
	}
	// B first: A sends its handshake as soon as it has a peer (keepalive), and
	// one that reaches B before B knows A is retried only after 5 s.
	if err := l.wgSet(ctx, "b", t.IfB, t.Port, keyB, "peer", t.KeyA, "allowed-ips", bAllowed); err != nil {
		return nil, err
	}
	// A dials B's endpoint and keeps the tunnel alive; B learns A's address from
	// the handshake, as a hub does with a router behind changing uplinks.
	if err := l.wgSet(ctx, "a", t.IfA, l.clientPort(t), keyA, "peer", t.KeyB, "endpoint",
		fmt.Sprintf("%s:%d", endpointB, t.Port), "allowed-ips", t.AddrB+"/32,"+SiteBNet, "persistent-keepalive", "25"); err != nil {
		return nil, err
	}
	if l.Config.LAN && k == 0 {
		if _, err := l.Target("b").Run(ctx, "ip", "route", "add", lanNet, "dev", t.IfB); err != nil {
			return nil, err
		}
	}
	l.Tunnels = append(l.Tunnels, *t)
	if err := l.waitPing(ctx, "a", t.AddrB); err != nil {
		return nil, err
	}
	return t, l.save()
}

// clientPort is A's listen port for tunnel t: the tunnel's own unless the
// lab gives A ports of its own (ClientPort).
func (l *Lab) clientPort(t *Tunnel) int {
	if l.Config.ClientPort > 0 {
		return l.Config.ClientPort + t.Index
	}
	return t.Port
}

// ECMP brings the lab to n parallel tunnels and routes site B's network over
// all of them with an equal-cost multipath route, hashing on ports (layer 4)
// so separate TCP flows take separate tunnels (the ECMP over several tunnels case). It returns the
// commands it ran on A and on B, for the report.
func (l *Lab) ECMP(ctx context.Context, n int) (onA, onB []string, err error) {
	if n < 2 {
		return nil, nil, fmt.Errorf("ECMP needs at least 2 tunnels, got %d", n)
	}
	for len(l.Tunnels) < n {
		if _, err := l.AddTunnel(ctx); err != nil {
			return nil, nil, err
		}
	}
	// A flow A starts itself takes the source address of the tunnel its
	// first route lookup picked, and the lookup with its real port may hash
	// it onto another tunnel (the guest's 6.1 kernel does, half the time):
	// B accepts every A tunnel address on every tunnel, as the other site
	// of a real ECMP setup must (fix ecmp says so).
	var fromA []string
	for _, t := range l.Tunnels[:n] {
		fromA = append(fromA, t.AddrA+"/32")
	}
	if l.Config.LAN {
		fromA = append(fromA, lanNet)
	}
	for _, t := range l.Tunnels[:n] {
		argv := []string{"wg", "set", t.IfB, "peer", t.KeyA, "allowed-ips", strings.Join(fromA, ",")}
		if _, err := l.Target("b").Run(ctx, argv[0], argv[1:]...); err != nil {
			return nil, onB, err
		}
		onB = append(onB, shell.Join(argv[0], argv[1:]...))
	}
	route := []string{"ip", "route", "replace", SiteBNet}
	for _, t := range l.Tunnels[:n] {
		route = append(route, "nexthop", "dev", t.IfA, "weight", "1")
	}
	steps := [][]string{{"sysctl", "-qw", "net.ipv4.fib_multipath_hash_policy=1"}, route}
	for _, argv := range steps {
		if _, err := l.Target("a").Run(ctx, argv[0], argv[1:]...); err != nil {
			return onA, onB, err
		}
		onA = append(onA, shell.Join(argv[0], argv[1:]...))
	}
	return onA, onB, nil
}
