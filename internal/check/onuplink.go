package check

import (
	"errors"

	"github.com/wgperf/wgperf/internal/facts"
)

// Host rules of route.endpoint-uplink's remedy: a peer's endpoint, routed
// through one of the host's uplinks (a default route of the main table with
// that gateway and device), whichever the measurement found faster.

func aPeerEndpoint(h *facts.Snapshot, _ map[string]string, v string) error {
	if endpointOf(h, v) < 0 {
		return errors.New("is not the endpoint of a peer")
	}
	return nil
}

func uplinkGateway(h *facts.Snapshot, p map[string]string, v string) error {
	if uplinkVia(h, familyOf(p["endpoint"]), v) == "" {
		return errors.New("is not the gateway of one of the host's default routes")
	}
	return nil
}

func uplinkDev(h *facts.Snapshot, p map[string]string, v string) error {
	if uplinkVia(h, familyOf(p["endpoint"]), p["via"]) != v {
		return errors.New("is not the device of the default route via that gateway")
	}
	return nil
}

// uplinkVia is the device of the host's main-table default route (or one of
// its nexthops) through gateway gw, "" when there is none.
func uplinkVia(h *facts.Snapshot, family, gw string) string {
	for _, r := range h.Routes {
		if r.Dst != "default" || r.Family != family || (r.Table != "main" && r.Table != "") {
			continue
		}
		if r.Gateway == gw && r.Dev != "" {
			return r.Dev
		}
		for _, n := range r.Nexthops {
			if n.Gateway == gw && n.Dev != "" {
				return n.Dev
			}
		}
	}
	return ""
}
