//go:build router

package verify

import "github.com/wgperf/wgperf/internal/target"

// labPeer: the router build has no lab, so --verify always names its peer.
func labPeer(target.Target) (target.Target, bool) { return nil, false }
