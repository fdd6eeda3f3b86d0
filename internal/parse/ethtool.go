package parse

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Offloads are the ethtool features that decide how many packets the stack
// handles per byte of tunnel traffic (GRO/GSO batching, UDP segmentation and
// UDP GRO forwarding for the encrypted packets).
var Offloads = []string{
	"generic-receive-offload",
	"generic-segmentation-offload",
	"tcp-segmentation-offload",
	"tx-udp-segmentation",
	"rx-udp-gro-forwarding",
	"rx-gro-list",
	"large-receive-offload",
}

// ParseEthtoolFeatures parses "ethtool -k DEV" and returns the features listed
// in Offloads that the device reports, true when "on".
func ParseEthtoolFeatures(r io.Reader) (map[string]bool, error) {
	want := map[string]bool{}
	for _, o := range Offloads {
		want[o] = true
	}
	out := map[string]bool{}
	sc := bufio.NewScanner(r)
	header := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "Features for ") {
			header = true
			continue
		}
		name, value, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		if !want[name] {
			continue
		}
		state, _, _ := strings.Cut(value, " ") // "off [fixed]", "on [requested off]"
		switch state {
		case "on":
			out[name] = true
		case "off":
			out[name] = false
		default:
			return nil, fmt.Errorf("ethtool -k: %s: unexpected state %q", name, value)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("ethtool -k: %w", err)
	}
	if !header {
		return nil, fmt.Errorf("ethtool -k: no \"Features for\" header")
	}
	return out, nil
}
