package lab

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"golang.zx2c4.com/wireguard/wgctrl/wgtypes"
)

// This file builds the hub topology (Config.HubMbit): A —— H —— B where the
// middle node (R, the hub H) is a road-warrior hub, as in a multi-hop path:
// one WireGuard interface with A and B as peers, two tunnels A↔H and H↔B,
// and H forwards between them. A reaches B's tunnel address only through H,
// so every packet is decrypted and encrypted once more on H, and the path
// is as fast as its slowest hop's underlay, not the first hop's.

// TunnelHub is the hub's WireGuard address (A is tunnelA, B tunnelB).
const TunnelHub = "10.77.0.3"

// hubNet is what A and B route to the hub: the whole tunnel network.
const hubNet = "10.77.0.0/24"

// checkHub refuses what the hub topology does not build.
func (c Config) checkHub() error {
	if c.HubMbit <= 0 {
		return nil
	}
	if c.Topology != SiteToSite || c.LAN || c.Clients > 0 || c.Router || c.KneePct > 0 || c.ClientPort > 0 {
		return errors.New("the hub topology (--hub-rate) is site-to-site only, without --lan, clients behind A, --router, --knee or --client-port")
	}
	return nil
}

// hubShaping shapes the hub's two hops, each both ways: A —— H at the
// underlay's rate (A's egress and H's towards A), H —— B at HubMbit (H's
// egress towards B and B's).
func (b *builder) hubShaping(cfg Config) {
	if r := cfg.Underlay.RateMbit; r > 0 {
		b.tbf("a", "eth0", r)
		b.tbf("r", "eth-a", r)
	}
	b.tbf("r", "eth-b", cfg.HubMbit)
	b.tbf("b", "eth0", cfg.HubMbit)
}

// startHub brings up the hub's interface and both sites', A's and B's
// peer being the hub (allowed: the whole tunnel network), the hub's their
// two addresses; both sites dial the hub and keep their tunnels alive.
func (l *Lab) startHub(ctx context.Context) error {
	name := l.Config.Name
	type end struct {
		node, ifname, addr string
		key                wgtypes.Key
		pid                int
	}
	ends := []*end{{node: "r", ifname: "wg-" + name + "-r", addr: TunnelHub}, {node: "b", ifname: "wg-" + name + "-b", addr: tunnelB},
		{node: "a", ifname: "wg-" + name + "-a", addr: tunnelA}}
	hub := &builder{lab: l}
	hub.on("r", "sysctl", "-qw", "net.ipv4.conf.all.send_redirects=0") // A's packets to B leave the way they came in
	if err := hub.run(ctx); err != nil {
		return err
	}
	for _, e := range ends {
		var err error
		if e.key, err = wgtypes.GeneratePrivateKey(); err != nil {
			return err
		}
		if l.Config.WireGuard == Kernel {
			err = l.createKernelLink(ctx, l.Nodes[e.node], e.ifname)
		} else {
			e.pid, err = l.startNode(ctx, l.Nodes[e.node], e.ifname)
		}
		if err != nil {
			return err
		}
		b := &builder{lab: l}
		b.on(e.node, "ip", "addr", "add", e.addr+"/24", "dev", e.ifname)
		b.on(e.node, "ip", "link", "set", "dev", e.ifname, "mtu", strconv.Itoa(l.Config.WGMTU), "up")
		if err := b.run(ctx); err != nil {
			return err
		}
	}
	r, b, a := ends[0], ends[1], ends[2]
	port := strconv.Itoa(WGPort)
	if err := l.wgSet(ctx, "r", r.ifname, WGPort, r.key, "peer", a.key.PublicKey().String(), "allowed-ips", tunnelA+"/32",
		"peer", b.key.PublicKey().String(), "allowed-ips", tunnelB+"/32"); err != nil {
		return err
	}
	for _, site := range []struct {
		e        *end
		endpoint string
	}{{b, routerB}, {a, primaryGW}} {
		if err := l.wgSet(ctx, site.e.node, site.e.ifname, WGPort, site.e.key, "peer", r.key.PublicKey().String(),
			"endpoint", site.endpoint+":"+port, "allowed-ips", hubNet, "persistent-keepalive", "25"); err != nil {
			return err
		}
	}
	underlay := map[string]string{"a": primaryA, "r": primaryGW, "b": endpointB}
	for _, e := range ends {
		n := l.Nodes[e.node]
		n.WGInterface, n.TunnelAddr, n.PID, n.PublicKey, n.UnderlayAddr, n.ListenPort = e.ifname, e.addr, e.pid, e.key.PublicKey().String(), underlay[e.node], WGPort
	}
	l.Tunnels = append(l.Tunnels, Tunnel{Index: 0, Port: WGPort, IfA: a.ifname, IfB: b.ifname, AddrA: tunnelA, AddrB: tunnelB,
		KeyA: a.key.PublicKey().String(), KeyB: b.key.PublicKey().String(), PIDA: a.pid, PIDB: b.pid})
	if err := l.waitPing(ctx, "a", tunnelB); err != nil {
		return fmt.Errorf("through the hub: %w", err)
	}
	return l.save()
}

// quotaNode is the node whose WireGuard process CPUQuotaPct limits: A's,
// or on the hub topology the hub's (a hub on a VPS with a CPU quota, which
// carries the tunnel twice).
func (c Config) quotaNode() string {
	if c.HubMbit > 0 {
		return "r"
	}
	return "a"
}
