package discover

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/wgperf/wgperf/internal/openwrt"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/target"
)

// Addresses asks t for its interfaces' addresses: "ip -j addr", or BusyBox
// ip's text where ip has no JSON (OpenWrt without ip-full), in one command.
func Addresses(ctx context.Context, t target.Target) ([]parse.LinkAddrs, error) {
	out, err := t.Run(ctx, "sh", "-c", parse.IPJSONOr("ip -j addr show", "ip addr show"))
	if err != nil {
		return nil, fmt.Errorf("%s: ip addr: %w", t, err)
	}
	if text, ok := parse.CutIPText(string(out)); ok {
		links, err := parse.ParseIPAddrText(strings.NewReader(text))
		if err != nil {
			return nil, fmt.Errorf("%s: BusyBox ip addr: %w (%s gives ip -j)", t, err, openwrt.Install("ip-full"))
		}
		return links, nil
	}
	links, err := parse.ParseIPAddr(bytes.NewReader(out))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t, err)
	}
	return links, nil
}
