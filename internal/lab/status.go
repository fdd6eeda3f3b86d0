package lab

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/target"
)

// Status is what "lab status" shows.
type Status struct {
	Nodes   []NodeStatus `json:"nodes"`
	Peers   []PeerStatus `json:"peers"`
	Shaping []string     `json:"shaping"` // "r eth-a: tbf rate 200Mbit ...", netem delay, loss and slots too
}

// NodeStatus is a node and whether its WireGuard end is still there (the
// wireguard-go process runs, or the kernel link exists).
type NodeStatus struct {
	Node
	Running bool `json:"running"`
}

// PeerStatus is one WireGuard peer as seen from a node.
type PeerStatus struct {
	Interface string `json:"interface"`
	PublicKey string `json:"public_key"`
	Endpoint  string `json:"endpoint,omitempty"`
	Handshake string `json:"-"` // "4s ago", "never"
	// LatestHandshake is absent when the peer never shook hands.
	LatestHandshake *time.Time `json:"latest_handshake,omitempty"`
	RxBytes         uint64     `json:"rx_bytes"`
	TxBytes         uint64     `json:"tx_bytes"`
}

// StatusReport is "lab status --json": the lab's shape and its live state.
type StatusReport struct {
	Lab      string   `json:"lab"`
	Topology Topology `json:"topology"`
	// WireGuard is the tunnel ends' implementation; WireGuardNote says why
	// the lab chose it when the user left it to the lab.
	WireGuard     Implementation `json:"wireguard"`
	WireGuardNote string         `json:"wireguard_note,omitempty"`
	Created       time.Time      `json:"created"`
	DelayMs       int            `json:"delay_ms,omitempty"` // each way
	DelayBy       string         `json:"delay_by,omitempty"`
	*Status
}

// Report is the lab's StatusReport with st, its live state.
func (l *Lab) Report(st *Status) StatusReport {
	c := l.Config
	r := StatusReport{Lab: c.Name, Topology: c.Topology, WireGuard: c.WireGuard, WireGuardNote: l.ImplementationNote,
		Created: l.Created.UTC(), DelayMs: c.Underlay.DelayMs, Status: st}
	if c.Underlay.DelayMs > 0 {
		r.DelayBy = l.DelayBy
	}
	if st.Shaping == nil {
		st.Shaping = []string{}
	}
	if st.Nodes == nil {
		st.Nodes = []NodeStatus{}
	}
	if st.Peers == nil {
		st.Peers = []PeerStatus{}
	}
	return r
}

// Status reads the lab's live state from its namespaces.
func (l *Lab) Status(ctx context.Context) (*Status, error) {
	st := &Status{}
	for _, name := range l.NodeNames() {
		n := l.Nodes[name]
		t := l.Target(name)
		running := n.PID > 0 && target.ProcessLive(n.PID)
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
					ps := PeerStatus{Interface: iface.Name, PublicKey: p.PublicKey, Endpoint: p.Endpoint, Handshake: "never",
						RxBytes: p.RxBytes, TxBytes: p.TxBytes}
					if !p.LatestHandshake.IsZero() {
						at := p.LatestHandshake.UTC()
						ps.Handshake, ps.LatestHandshake = time.Since(at).Round(time.Second).String()+" ago", &at
					}
					st.Peers = append(st.Peers, ps)
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
