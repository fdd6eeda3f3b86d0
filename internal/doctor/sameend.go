package doctor

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/target"
)

// A bench proves receive-buffer drops only where they happened during its
// few seconds; the other end of the tunnel often has the same small limit
// (the remote-users case: "the same UDP buffer issue existed on the VPS,
// identical 212 KB defaults; after fixing both ends..."). Its drops come
// once the first end's are gone and its own direction speeds up.

// sameLimitOtherEnd adds, for each end whose userspace tunnel dropped
// datagrams at a small receive limit, the same finding (info) on the other
// end when that one has a userspace tunnel too, no such finding yet and a
// receive limit as small: the fix is the same on both. It is pure.
func sameLimitOtherEnd(found []finding.Finding, snaps []*facts.Snapshot) []finding.Finding {
	out := found
	for _, f := range found {
		if f.ID != catalog.UDPRcvbufErrors || f.Severity < finding.Warning || !slices.ContainsFunc(f.Fixes, func(x finding.Fix) bool { return x.Action != nil }) {
			continue
		}
		dropped, other := snapOf(snaps, f.Host), otherSnap(snaps, f.Host)
		if dropped == nil || other == nil || !userspace(other) {
			continue
		}
		if slices.ContainsFunc(out, func(x finding.Finding) bool { return x.ID == catalog.UDPRcvbufErrors && x.Host.Same(other.Host) }) {
			continue
		}
		limit, ok1 := sysctlOf(other, "net.core.rmem_max")
		theirs, ok2 := sysctlOf(dropped, "net.core.rmem_max")
		if !ok1 || !ok2 || limit > theirs {
			continue
		}
		out = append(out, finding.Finding{
			ID: catalog.UDPRcvbufErrors, Severity: finding.Info, Host: other.Host,
			Title: fmt.Sprintf("The same small UDP receive limit as %s, whose tunnel socket dropped: net.core.rmem_max %d", f.Host, limit),
			Detail: "This end's userspace WireGuard receives the other direction through a socket bounded by the same limit. It did " +
				"not drop during the bench's few seconds, but once the other end's drops are gone and this direction speeds up, it " +
				"will: the fix is the same on both ends.",
			Evidence: []finding.Evidence{
				finding.Evidence{Source: "sysctl", Key: "net.core.rmem_max", Value: strconv.FormatInt(limit, 10), Threshold: fmt.Sprintf("> %d (%s's, which dropped)", theirs, f.Host)}.Of(float64(limit), finding.Bytes),
			},
			Fixes: f.Fixes,
		})
	}
	return out
}

// snapOf is host's snapshot (nil when it was not collected).
func snapOf(snaps []*facts.Snapshot, host target.Spec) *facts.Snapshot {
	for _, s := range snaps {
		if s.Host.Same(host) {
			return s
		}
	}
	return nil
}

// otherSnap is the snapshot of the pair's other end.
func otherSnap(snaps []*facts.Snapshot, host target.Spec) *facts.Snapshot {
	if len(snaps) != 2 {
		return nil
	}
	for _, s := range snaps {
		if !s.Host.Same(host) {
			return s
		}
	}
	return nil
}

// userspace reports a host whose WireGuard interfaces are served in userspace.
func userspace(s *facts.Snapshot) bool {
	return slices.ContainsFunc(s.WireGuard, func(w facts.WGInterface) bool { return w.Implementation == "userspace" })
}

func sysctlOf(s *facts.Snapshot, key string) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(s.Sysctls[key]), 10, 64)
	return n, err == nil
}
