package verify

import (
	"fmt"

	"github.com/wgperf/wgperf/internal/target"
)

// Peer is where --verify measures to: spec when given, else, for a node of a
// wgperf lab, the node at the other end of its tunnel.
func Peer(host target.Target, spec string) (target.Target, error) {
	if spec != "" {
		return target.Parse(spec)
	}
	if peer, ok := labPeer(host); ok {
		return peer, nil
	}
	return nil, fmt.Errorf("--verify needs --server: the far end of the tunnel on %s, where iperf3 runs as the server (e.g. --server ssh:root@site-b)", host)
}
