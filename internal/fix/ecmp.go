package fix

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/remedy"
)

// WGQuickConf is the part of a wg-quick config the ECMP plan reads.
type WGQuickConf struct {
	Address    []string
	ListenPort int
	MTU        int
	Peers      []WGQuickPeer
}

// WGQuickPeer is one [Peer] section.
type WGQuickPeer struct {
	PublicKey           string
	Endpoint            string
	AllowedIPs          []string
	PersistentKeepalive string
}

// ParseWGQuick reads a wg-quick config. Private and preshared keys are
// skipped: a plan never repeats them.
func ParseWGQuick(r io.Reader) (*WGQuickConf, error) {
	c := &WGQuickConf{}
	sc := bufio.NewScanner(r)
	section, n := "", 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			section = strings.ToLower(line[1 : len(line)-1])
			if section == "peer" {
				c.Peers = append(c.Peers, WGQuickPeer{})
			}
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("wg-quick config line %d: want Key = Value, got %q", n, line)
		}
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		list := func() []string {
			var out []string
			for _, s := range strings.Split(v, ",") {
				if s = strings.TrimSpace(s); s != "" {
					out = append(out, s)
				}
			}
			return out
		}
		var err error
		switch section + "." + k {
		case "interface.address":
			c.Address = append(c.Address, list()...)
		case "interface.listenport":
			c.ListenPort, err = strconv.Atoi(v)
		case "interface.mtu":
			c.MTU, err = strconv.Atoi(v)
		case "peer.publickey":
			// Copied into the plan's configs, so it must be what wg reads: 32 bytes in base64.
			if b, derr := base64.StdEncoding.DecodeString(v); derr != nil || len(b) != 32 {
				err = fmt.Errorf("not a WireGuard public key (32 bytes in base64)")
			}
			c.Peers[len(c.Peers)-1].PublicKey = v
		case "peer.endpoint":
			c.Peers[len(c.Peers)-1].Endpoint = v
		case "peer.allowedips":
			c.Peers[len(c.Peers)-1].AllowedIPs = append(c.Peers[len(c.Peers)-1].AllowedIPs, list()...)
		case "peer.persistentkeepalive":
			if v != "off" {
				if s, aerr := strconv.ParseUint(v, 10, 16); aerr != nil {
					err = fmt.Errorf("want seconds (0..65535) or off, got %q", v)
				} else {
					v = strconv.FormatUint(s, 10)
				}
			}
			c.Peers[len(c.Peers)-1].PersistentKeepalive = v
		}
		if err != nil {
			return nil, fmt.Errorf("wg-quick config line %d: %s: %v", n, k, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if section == "" {
		return nil, fmt.Errorf("wg-quick config: no [Interface] section")
	}
	return c, nil
}

// ECMPInput describes the existing tunnel to multiply.
type ECMPInput struct {
	Interface string // e.g. "wg0"
	Conf      *WGQuickConf
	Tunnels   int
	// Networks are the remote networks spread over the tunnels; empty means the
	// peer's AllowedIPs that are not the tunnel's own subnet.
	Networks []string
	// Bonds maps a bond carrying the tunnel to its xmit_hash_policy.
	Bonds map[string]string
}

// ECMPPlan is N wg-quick configs plus the commands that route over all of them.
type ECMPPlan struct {
	Configs  []NamedConfig
	Commands []string
	Notes    []string
}

// NamedConfig is one file to write.
type NamedConfig struct {
	Path string
	Text string
}

// PlanECMP builds N tunnels between the same two sites on distinct ports (so
// an 802.3ad bond hashing layer3+4 spreads them), each with Table = off, and
// one multipath route over them with the kernel hashing on layer 4.
func PlanECMP(in ECMPInput) (*ECMPPlan, error) {
	if in.Tunnels < 2 || in.Tunnels > 16 {
		return nil, fmt.Errorf("%d tunnels: want 2..16", in.Tunnels)
	}
	c := in.Conf
	if len(c.Peers) != 1 {
		return nil, fmt.Errorf("%s has %d peers: ECMP needs a site-to-site tunnel with exactly one peer", in.Interface, len(c.Peers))
	}
	if c.ListenPort == 0 {
		return nil, fmt.Errorf("%s has no ListenPort: each tunnel needs its own port", in.Interface)
	}
	peer := c.Peers[0]
	if _, _, err := splitEndpoint(peer.Endpoint); err != nil {
		return nil, fmt.Errorf("%s peer endpoint: %v", in.Interface, err)
	}
	var addrs []netip.Prefix
	for _, a := range c.Address {
		p, err := netip.ParsePrefix(a)
		if err != nil || !p.Addr().Is4() {
			continue
		}
		addrs = append(addrs, p)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%s has no IPv4 Address to derive tunnel addresses from", in.Interface)
	}
	own := addrs[0]
	nets := in.Networks
	if len(nets) == 0 {
		for _, a := range peer.AllowedIPs {
			p, err := netip.ParsePrefix(a)
			if err == nil && !own.Masked().Overlaps(p) {
				nets = append(nets, p.Masked().String())
			}
		}
	}
	if len(nets) == 0 {
		return nil, fmt.Errorf("no remote networks to route over the tunnels: give --network")
	}
	allowed := slices.Clone(peer.AllowedIPs)
	for _, n := range nets {
		if !slices.Contains(allowed, n) {
			allowed = append(allowed, n)
		}
	}
	// The same layout as the change "fix ecmp --server" makes on a running
	// host (remedy.ECMPSpec): addresses, ports, endpoints, allowed IPs.
	peerAddr, err := remedy.PeerTunnelAddr(in.Interface, peer.AllowedIPs, own)
	if err != nil {
		return nil, err
	}
	tunnels, allowed, err := remedy.ECMPSpec{Iface: in.Interface, Tunnels: in.Tunnels, Own: own,
		PeerAddr: peerAddr, ListenPort: c.ListenPort, Endpoint: peer.Endpoint, AllowedIPs: allowed}.Layout()
	if err != nil {
		return nil, err
	}
	var ownAddrs []string
	for _, t := range tunnels {
		ownAddrs = append(ownAddrs, t.Address.Addr().String()+"/32")
	}
	plan := &ECMPPlan{}
	devs := remedy.ECMPDevices(in.Interface, in.Tunnels)
	for i, t := range tunnels {
		var b strings.Builder
		fmt.Fprintf(&b, "# Tunnel %d of %d between the same two sites (wgperf fix ecmp).\n[Interface]\n", i+1, in.Tunnels)
		fmt.Fprintf(&b, "PrivateKey = <copy from /etc/wireguard/%s.conf>\n", in.Interface)
		fmt.Fprintf(&b, "Address = %s\nListenPort = %d\n", t.Address, t.ListenPort)
		if c.MTU > 0 {
			fmt.Fprintf(&b, "MTU = %d\n", c.MTU)
		}
		b.WriteString("Table = off\n")
		fmt.Fprintf(&b, "\n[Peer]\nPublicKey = %s\n", peer.PublicKey)
		fmt.Fprintf(&b, "Endpoint = %s\n", t.Endpoint)
		fmt.Fprintf(&b, "AllowedIPs = %s\n", strings.Join(allowed, ", "))
		if peer.PersistentKeepalive != "" {
			fmt.Fprintf(&b, "PersistentKeepalive = %s\n", peer.PersistentKeepalive)
		}
		plan.Configs = append(plan.Configs, NamedConfig{Path: "/etc/wireguard/" + t.Dev + ".conf", Text: b.String()})
	}
	// Hash on ports too, or every flow between the same two hosts takes one tunnel.
	plan.Commands = append(plan.Commands, "sysctl -w net.ipv4.fib_multipath_hash_policy=1")
	// The existing tunnel restarts to drop its own routes (Table = off).
	plan.Commands = append(plan.Commands, "wg-quick down "+devs[0]+" && wg-quick up "+devs[0])
	for _, d := range devs[1:] {
		plan.Commands = append(plan.Commands, "wg-quick up "+d)
	}
	for _, n := range nets {
		cmd := "ip route replace " + n
		for _, d := range devs {
			cmd += " nexthop dev " + d + " weight 1"
		}
		plan.Commands = append(plan.Commands, cmd)
	}
	bonds := make([]string, 0, len(in.Bonds))
	for b := range in.Bonds {
		bonds = append(bonds, b)
	}
	sort.Strings(bonds)
	for _, bond := range bonds {
		policy := in.Bonds[bond]
		if policy != "layer3+4" {
			plan.Commands = append(plan.Commands, remedy.WriteSysfs("/sys/class/net/"+bond+"/bonding/xmit_hash_policy", "layer3+4"))
			plan.Notes = append(plan.Notes, fmt.Sprintf("bond %s hashes on %s: every tunnel would use one link; set layer3+4 where the bond is configured too", bond, policy))
		}
	}
	plan.Notes = append(plan.Notes,
		fmt.Sprintf("the other site needs the mirror image: ports %d..%d, its own keys, the same multipath route back, and "+
			"AllowedIPs on every tunnel that hold all of this site's tunnel addresses (%s) besides its networks: a flow a site "+
			"starts itself may leave with one tunnel's address through another, and WireGuard drops a source its peer does not allow",
			c.ListenPort, c.ListenPort+in.Tunnels-1, strings.Join(ownAddrs, ", ")),
		"add the route commands as PostUp of the last tunnel (or a boot script) to keep them after a reboot; keep net.ipv4.fib_multipath_hash_policy = 1 in /etc/sysctl.d",
		"measure before and after with the same parallel streams (wgperf bench --server SITE-B --tunnel-addr AN-ADDRESS-IN-ITS-NETWORK --parallel 8): besides the aggregate it reports "+
			"retransmissions and reordering, ECMP's cost where the tunnels' paths differ (the multi-tunnel case's aggregate went from 893 to "+
			"1,620 Mbit/s and its retransmissions from 432 to 119,501)")
	return plan, nil
}

// Write prints the ECMP plan: files, then commands, then notes.
func (p *ECMPPlan) Write(w io.Writer) error {
	ew := &errWriter{w: w}
	for _, c := range p.Configs {
		ew.printf("# %s\n%s\n", c.Path, c.Text)
	}
	ew.printf("# then run:\n")
	for _, c := range p.Commands {
		ew.printf("%s\n", c)
	}
	for _, n := range p.Notes {
		ew.printf("# note: %s\n", n)
	}
	return ew.err
}

func splitEndpoint(ep string) (string, int, error) {
	i := strings.LastIndexByte(ep, ':')
	if ep == "" || i < 0 {
		return "", 0, fmt.Errorf("want host:port, got %q", ep)
	}
	port, err := strconv.Atoi(ep[i+1:])
	if err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("bad port in %q", ep)
	}
	return ep[:i], port, nil
}
