package lab

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/parse"
)

// Status is what "lab status" shows.
type Status struct {
	Nodes   []NodeStatus
	Peers   []PeerStatus
	Shaping []string // "r eth-a: tbf rate 200Mbit ...", netem delay, loss and slots too
}

// NodeStatus is a node and whether its WireGuard end is still there (the
// wireguard-go process runs, or the kernel link exists).
type NodeStatus struct {
	Node
	Running bool
}

// PeerStatus is one WireGuard peer as seen from a node.
type PeerStatus struct {
	Interface, PublicKey, Endpoint string
	Handshake                      string // "4s ago", "never"
	RxBytes, TxBytes               uint64
}

// Status reads the lab's live state from its namespaces.
func (l *Lab) Status(ctx context.Context) (*Status, error) {
	st := &Status{}
	for _, name := range l.NodeNames() {
		n := l.Nodes[name]
		t := l.Target(name)
		running := n.PID > 0 && ProcessRunning(n.PID)
		if l.Config.WireGuard == Kernel && n.WGInterface != "" {
			_, err := t.Run(ctx, "ip", "link", "show", "dev", n.WGInterface)
			running = err == nil
		}
		st.Nodes = append(st.Nodes, NodeStatus{Node: *n, Running: running})
		if n.WGInterface != "" {
			out, err := t.Run(ctx, "wg", "show", n.WGInterface, "dump")
			if err != nil {
				return nil, err
			}
			// "wg show IF dump" has no interface-name column; add it for the shared parser.
			var all bytes.Buffer
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				all.WriteString(n.WGInterface + "\t" + line + "\n")
			}
			ifaces, err := parse.ParseWGDump(&all)
			if err != nil {
				return nil, err
			}
			for _, iface := range ifaces {
				for _, p := range iface.Peers {
					hs := "never"
					if !p.LatestHandshake.IsZero() {
						hs = time.Since(p.LatestHandshake).Round(time.Second).String() + " ago"
					}
					st.Peers = append(st.Peers, PeerStatus{iface.Name, p.PublicKey, p.Endpoint, hs, p.RxBytes, p.TxBytes})
				}
			}
		}
		out, err := t.Run(ctx, "tc", "qdisc", "show")
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, "tbf") || strings.Contains(line, "netem") {
				st.Shaping = append(st.Shaping, fmt.Sprintf("%s: %s", name, strings.TrimSpace(line)))
			}
		}
	}
	return st, nil
}
