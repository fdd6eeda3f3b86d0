package udppath

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/target"
)

// Table is the nft table a run to WireGuard's port adds on both ends for
// its seconds and removes after; DefaultSourcePort the port its datagrams
// leave from.
const (
	Table             = "wgperf_wgport"
	DefaultSourcePort = 5296
	counterName       = "arrived"
)

// toPort is how a run reaches the far end's WireGuard port while WireGuard
// holds it on both ends: iperf3's datagrams, sent from a port of their own
// to iperf3's, have their destination rewritten to WireGuard's port on the
// way out and back to iperf3's on arrival, before WireGuard's socket sees
// them; connection tracking rewrites the replies, so a download's datagrams
// leave the far end from WireGuard's port. What arrives with the port is
// counted by a named counter on the receiving end.
type toPort struct {
	family         string // ip or ip6
	client, server string // the nft commands of each end
}

// newToPort builds the nft commands for a run to addr's WireGuard port
// wgPort from src, redirected to iperf3's port. The address is the far
// end's as discovered (foreign text): it must parse as an IP address. It
// is pure.
func newToPort(addr string, wgPort, iperfPort, src int) (toPort, error) {
	a, err := netip.ParseAddr(addr)
	if err != nil || a.Zone() != "" {
		return toPort{}, fmt.Errorf("the far end's address %q is not an IP address", addr)
	}
	for _, p := range []int{wgPort, iperfPort, src} {
		if p < 1 || p > 65535 {
			return toPort{}, fmt.Errorf("port %d out of range", p)
		}
	}
	if src == wgPort || src == iperfPort {
		return toPort{}, fmt.Errorf("source port %d is WireGuard's or iperf3's", src)
	}
	a = a.Unmap()
	fam, to := "ip", a.String()+":"+strconv.Itoa(wgPort)
	if a.Is6() {
		fam, to = "ip6", "["+a.String()+"]:"+strconv.Itoa(wgPort)
	}
	t := fam + " " + Table
	wg, ip, sp := strconv.Itoa(wgPort), strconv.Itoa(iperfPort), strconv.Itoa(src)
	common := []string{"add table " + t, "add counter " + t + " " + counterName,
		"add chain " + t + " count { type filter hook prerouting priority -200; }"}
	client := append(common[:3:3],
		"add rule "+t+" count "+fam+" saddr "+a.String()+" udp sport "+wg+" udp dport "+sp+" counter name "+counterName,
		"add chain "+t+" out { type nat hook output priority -100; }",
		"add rule "+t+" out "+fam+" daddr "+a.String()+" udp sport "+sp+" udp dport "+ip+" dnat to "+to)
	server := append(common[:3:3],
		"add rule "+t+" count udp sport "+sp+" udp dport "+wg+" counter name "+counterName,
		"add chain "+t+" pre { type nat hook prerouting priority -100; }",
		"add rule "+t+" pre udp sport "+sp+" udp dport "+wg+" redirect to :"+ip)
	return toPort{family: fam, client: strings.Join(client, "; "), server: strings.Join(server, "; ")}, nil
}

// install adds the table on both ends (a table left by a run that crashed
// is removed first); on failure whatever it added is removed.
func (tp toPort) install(ctx context.Context, client, server target.Target) error {
	for _, end := range []struct {
		t      target.Target
		script string
	}{{server, tp.server}, {client, tp.client}} {
		_, _ = end.t.Run(ctx, "nft", "delete", "table", tp.family, Table)
		if out, err := end.t.Run(ctx, "nft", end.script); err != nil {
			tp.remove(client, server)
			return fmt.Errorf("nft on %s: %v: %s", end.t, err, firstLine(out))
		}
	}
	return nil
}

// remove deletes the table on both ends, whatever the run's context says.
func (tp toPort) remove(client, server target.Target) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, t := range []target.Target{client, server} {
		_, _ = t.Run(ctx, "nft", "delete", "table", tp.family, Table)
	}
}

// arrived reads the receiving end's counter of datagrams that arrived with
// WireGuard's port.
func (tp toPort) arrived(ctx context.Context, receiver target.Target) (uint64, error) {
	out, err := receiver.Run(ctx, "nft", "-j", "list", "counter", tp.family, Table, counterName)
	if err != nil {
		return 0, fmt.Errorf("nft on %s: %v", receiver, err)
	}
	return countedPackets(out)
}

// countedPackets is the named counter's packets in "nft -j list counter". It
// is pure.
func countedPackets(out []byte) (uint64, error) {
	_, counters, err := parse.ParseNftRuleset(bytes.NewReader(out))
	if err != nil {
		return 0, err
	}
	for _, c := range counters {
		if c.Table == Table && c.Name == counterName {
			return c.Packets, nil
		}
	}
	return 0, fmt.Errorf("nft: no counter %s in table %s", counterName, Table)
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}
