package mtu

import (
	"bytes"
	"context"
	"fmt"
	"strconv"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// pmtudWorkarounds are the PMTUD case's own workaround, on the uplink that
// sends the tunnel's packets towards the black hole: its physical MTU lowered
// to the path's (ip link set dev PHY mtu 1400), and its segmentation and
// receive offloads off (ethtool -K PHY tso off gso off gro off), which the
// case applied beside its MSS clamp. They come after the WireGuard MTU and
// the MSS clamp, as options: wgperf fix applies a finding's first automatic
// fix only. The lower MTU costs every
// packet on that link, the tunnel's and the LAN's; the offloads off cost CPU
// (the case's own warning): the kernel then builds and takes apart every
// packet at wire size in software, many times the per-packet work at a
// gigabit. "" for an uplink not known, or a name no command may carry: none.
func pmtudWorkarounds(uplink string, pathMTU int) []finding.Fix {
	if uplink == "" || shell.Iface(uplink) != nil {
		return nil
	}
	var out []finding.Fix
	if pathMTU >= 576 {
		out = append(out, finding.Fix{
			Description: fmt.Sprintf("Optionally, as the case did beside its MSS clamp: lower %s's own MTU to the path's %d bytes, so this host's own TCP "+
				"out of %s sends segments that fit the narrow hop (every packet on %s pays for it, not only the tunnel's; no automatic fix: "+
				"set it where %s is configured to keep it)", uplink, pathMTU, uplink, uplink, uplink),
			Commands: []string{shell.Join("ip", "link", "set", "dev", uplink, "mtu", strconv.Itoa(pathMTU))},
		})
	}
	off := []remedy.Feature{{Name: "tcp-segmentation-offload"}, {Name: "generic-segmentation-offload"}, {Name: "generic-receive-offload"}}
	r, err := remedy.Offload(uplink, off)
	out = append(out, remedy.Fixes(fmt.Sprintf("Optionally, as the case did beside its MSS clamp: turn %s's segmentation and receive offloads off (tso, gso, gro), "+
		"so no packet larger than its MTU is built or merged on it; it costs CPU (the case: \"enable as needed\"): every packet is then built and "+
		"taken apart at wire size in software", uplink), r, err)...)
	return out
}

// uplinkTo is the device t sends addr's packets out of, read as routeMTU
// reads it (ip -j route get, BusyBox's text without -j); "" when it cannot
// tell: the workarounds are then left out, not guessed.
func uplinkTo(ctx context.Context, t target.Target, addr string) string {
	if addr == "" {
		return ""
	}
	out, err := t.Run(ctx, "ip", "-j", "route", "get", addr)
	read := parse.ParseRouteGet
	if err != nil {
		if out, err = t.Run(ctx, "ip", "route", "get", addr); err != nil {
			return ""
		}
		read = parse.ParseRouteGetText
	}
	dev, _, _, err := read(bytes.NewReader(out))
	if err != nil || shell.Iface(dev) != nil {
		return ""
	}
	return dev
}
