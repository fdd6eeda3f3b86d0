package lab

import (
	"context"
	"fmt"
	"strconv"

	"github.com/wgperf/wgperf/internal/shell"

	"golang.zx2c4.com/wireguard/wgctrl/wgtypes"
)

// Tunnel is one WireGuard tunnel between A and B: the lab's (AddTunnel).
type Tunnel struct {
	Index int    `json:"index"`
	Port  int    `json:"port"` // listen port on both ends
	IfA   string `json:"if_a"`
	IfB   string `json:"if_b"`
	AddrA string `json:"addr_a"`
	AddrB string `json:"addr_b"`
	KeyA  string `json:"public_key_a"`
	KeyB  string `json:"public_key_b"`
	PIDA  int    `json:"pid_a"` // wireguard-go node processes; 0 for kernel WireGuard
	PIDB  int    `json:"pid_b"`
}

// AddTunnel starts one more tunnel between A and B on the next port
// (51820+k), with addresses 10.77.k.1/.2. Routes over it are the caller's.
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
	bAllowed := t.AddrA + "/32"
	if l.Config.LAN && k == 0 {
		bAllowed += "," + lanNet
	}
	if l.Config.Clients > 0 && k == 0 {
		bAllowed += "," + ClientsNet
	}
	if l.Config.NATTimeout > 0 {
		if err := l.natTunnel(ctx, t, keyA, keyB, t.AddrB+"/32,"+SiteBNet); err != nil {
			return nil, err
		}
		l.Tunnels = append(l.Tunnels, *t)
		if err := l.waitPing(ctx, "b", t.AddrA); err != nil {
			return nil, err
		}
		return t, l.save()
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
	if l.Config.Clients > 0 && k == 0 {
		if _, err := l.Target("b").Run(ctx, "ip", "route", "add", ClientsNet, "dev", t.IfB); err != nil {
			return nil, err
		}
	}
	l.Tunnels = append(l.Tunnels, *t)
	if err := l.waitPing(ctx, "a", t.AddrB); err != nil {
		return nil, err
	}
	if l.Config.CloneA && k == 0 {
		if err := l.startClone(ctx, t, keyA); err != nil {
			return nil, fmt.Errorf("the clone of node A: %w", err)
		}
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

// pinUplinks makes multi-wan's two uplinks behave like a bond hashing on
// layer 3+4 (the ECMP case): UDP that A sends from port P+k (P its tunnel's
// listen port, k = 1..15) leaves through uplink k mod 2, by a source-port
// policy rule, so tunnels on the next ports (wgperf fix ecmp) use both
// uplinks while the first tunnel keeps the primary.
func (l *Lab) pinUplinks(ctx context.Context) error {
	b := &builder{lab: l}
	for k := 1; k < 16; k++ {
		uplink, gw := "eth0", primaryGW
		if k%2 == 1 {
			uplink, gw = "eth1", backupGW
		}
		table := strconv.Itoa(200 + k)
		b.on("a", "ip", "route", "add", "default", "via", gw, "dev", uplink, "table", table)
		b.on("a", "ip", "rule", "add", "ipproto", "udp", "sport", strconv.Itoa(l.clientPort(&Tunnel{Index: k, Port: WGPort + k})), "lookup", table, "priority", table)
	}
	return b.run(ctx)
}

// NewWireGuard is how a WireGuard interface is made on the lab's nodes the
// way the lab made its own, for a fix that adds tunnels (remedy.Env's
// WGUserspace): nil for kernel WireGuard (ip link add), else the shell line
// that starts a userspace node of this binary for dev, detached, and waits
// for its socket. Deleting the interface ends the node.
func (l *Lab) NewWireGuard() func(dev string) string {
	if l.Config.WireGuard == Kernel {
		return nil
	}
	return func(dev string) string {
		sock := shell.Join(socketPath(dev))
		return nodeSession(l.Executable, "lab", "_node", "--interface", dev, "--mtu", strconv.Itoa(l.Config.WGMTU)) +
			" </dev/null >/dev/null 2>&1 & i=0; while [ ! -S " + sock + " ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; [ -S " + sock + " ]"
	}
}
