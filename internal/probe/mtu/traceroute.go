package mtu

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/openwrt"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/target"
)

// A router's BusyBox ping has no -M, so it cannot forbid fragmentation; its
// traceroute can (-F), with the whole packet's size as the last argument. A
// probe sent straight to the destination's hop count is a DF probe: the
// destination's "port unreachable" says it fitted, a router's "!F-MTU" says
// where it did not, silence is a black hole.

// errNoDFPing says the host's ping cannot set don't-fragment (BusyBox).
var errNoDFPing = errors.New("ping has no -M (don't fragment)")

var (
	fragFlagRe = regexp.MustCompile(`!F-(\d+)`)
	otherFlag  = regexp.MustCompile(`\s(![A-Za-z]\S*)`)
)

// ParseTraceroute reads BusyBox traceroute output for a probe towards addr:
// the destination answered (Received), a router named an MTU (MTU), another
// ICMP error came back (Error), or nothing did. hop is the last hop printed.
func ParseTraceroute(r io.Reader, addr string) (p Ping, hop int, err error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		ttl, from, ok := parse.TracerouteHop(line)
		if !ok {
			continue
		}
		hop = ttl
		if f := fragFlagRe.FindStringSubmatch(line); f != nil {
			p.MTU, _ = strconv.Atoi(f[1])
			continue
		}
		if f := otherFlag.FindStringSubmatch(line); f != nil {
			p.Error = "traceroute " + f[1]
			continue
		}
		if from == addr {
			p.Received = true
		}
	}
	return p, hop, sc.Err()
}

// tracerouteDF probes with BusyBox "traceroute -F" from t towards addr.
type tracerouteDF struct {
	t    target.Target
	addr string
	hops int // the destination's distance, learned once
}

// newTracerouteDF finds how many hops away addr is with a small probe, so
// each DF probe is one packet to that distance.
func newTracerouteDF(ctx context.Context, t target.Target, addr string) (*tracerouteDF, error) {
	out, err := t.Run(ctx, "traceroute", "-n", "-q", "1", "-w", "1", "-m", "16", addr, "64")
	if err != nil {
		if target.IsNotFound(err) {
			return nil, fmt.Errorf("%s: %w and there is no traceroute -F either: %s (or busybox with traceroute)", t, errNoDFPing, openwrt.Install("iputils-ping"))
		}
		return nil, fmt.Errorf("%s: traceroute %s: %w", t, addr, err)
	}
	p, hop, err := ParseTraceroute(bytes.NewReader(out), addr)
	if err != nil {
		return nil, err
	}
	if !p.Received {
		return nil, fmt.Errorf("%s: %w, and a small traceroute probe does not reach %s either", t, errNoDFPing, addr)
	}
	return &tracerouteDF{t: t, addr: addr, hops: hop}, nil
}

// probe sends one DF packet of size bytes (the whole IP packet).
func (d *tracerouteDF) probe(ctx context.Context, size int) (Ping, error) {
	h := strconv.Itoa(d.hops)
	out, err := d.t.Run(ctx, "traceroute", "-F", "-n", "-q", "1", "-w", "1", "-f", h, "-m", h, d.addr, strconv.Itoa(size))
	if err != nil {
		var te *target.Error
		if !errors.As(err, &te) || te.ExitCode < 0 {
			return Ping{}, err
		}
		out = append(out, te.Stderr...)
	}
	p, _, err := ParseTraceroute(bytes.NewReader(out), d.addr)
	return p, err
}

// noDFFlag recognises a ping that rejected -M.
func noDFFlag(stderr string) bool {
	return strings.Contains(stderr, "invalid option") && strings.Contains(stderr, "'M'") ||
		strings.Contains(stderr, "unrecognized option") && strings.Contains(stderr, "-M")
}
