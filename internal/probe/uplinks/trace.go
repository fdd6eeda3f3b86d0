package uplinks

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/target"
)

// MaxHops is how far a trace goes: the carrier's NAT of the multi-WAN case
// sat within the first hops, and each silent hop costs a second.
const MaxHops = 10

// Address spaces a hop may answer from that say what it is.
const (
	// SpaceCGNAT is RFC 6598's shared address space, 100.64.0.0/10, which
	// carriers number their NAT in: the uplink's traffic crosses a
	// carrier-grade NAT.
	SpaceCGNAT = "CGNAT"
	// SpacePrivate is an RFC 1918 address past the first hop: a carrier's
	// NAT numbered privately (the multi-WAN case's 5G went through 172.20.x.x,
	// its fiber through 172.17.x.x).
	SpacePrivate = "private"
)

var (
	cgnat   = netip.MustParsePrefix("100.64.0.0/10")
	private = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("172.16.0.0/12"), netip.MustParsePrefix("192.168.0.0/16")}
)

// Hop is one step of an uplink's path to the endpoint.
type Hop struct {
	TTL int `json:"ttl"`
	// Addr is the address that answered ("": none did).
	Addr  string `json:"addr,omitempty"`
	Space string `json:"space,omitempty"` // SpaceCGNAT, SpacePrivate or ""
}

// spaceOf names the space of the hop at ttl answering from addr.
func spaceOf(addr netip.Addr, ttl int) string {
	switch {
	case cgnat.Contains(addr):
		return SpaceCGNAT
	case ttl > 1:
		for _, p := range private {
			if p.Contains(addr) {
				return SpacePrivate
			}
		}
	}
	return ""
}

// newHop validates what a tool printed as the hop's address: anything but
// an IP address counts as no answer (the text is the host's, not ours).
func newHop(ttl int, text string) Hop {
	a, err := netip.ParseAddr(text)
	if err != nil || a.Zone() != "" {
		return Hop{TTL: ttl}
	}
	return Hop{TTL: ttl, Addr: a.String(), Space: spaceOf(a, ttl)}
}

// HopsText is the hops as one line: "100.64.0.1 (CGNAT) → 203.0.113.2",
// a silent hop as "*".
func HopsText(hops []Hop) string {
	var parts []string
	for _, h := range hops {
		switch {
		case h.Addr == "":
			parts = append(parts, "*")
		case h.Space != "":
			parts = append(parts, h.Addr+" ("+h.Space+")")
		default:
			parts = append(parts, h.Addr)
		}
	}
	return strings.Join(parts, " → ")
}

// ParseTraceroute reads "traceroute -n -q 1" output (BusyBox's or the
// traceroute package's): one hop a line, "*" for one that did not answer.
// It is pure.
func ParseTraceroute(r io.Reader) ([]Hop, error) {
	var hops []Hop
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if ttl, addr, ok := parse.TracerouteHop(sc.Text()); ok {
			hops = append(hops, newHop(ttl, addr))
		}
	}
	return trimSilent(hops), sc.Err()
}

var (
	ttlExceeded = regexp.MustCompile(`^From (\S+?):? icmp_seq=\d+ Time to live exceeded`)
	echoReply   = regexp.MustCompile(`^\d+ bytes from (\S+?):`)
)

// ParseTTLPing reads one "ping -n -c 1 -t TTL" (iputils): the router whose
// time-exceeded came back, or the destination's reply (reached). No line of
// either: the hop was silent. It is pure.
func ParseTTLPing(r io.Reader, ttl int) (hop Hop, reached bool, err error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if m := echoReply.FindStringSubmatch(line); m != nil {
			return newHop(ttl, m[1]), true, nil
		}
		if m := ttlExceeded.FindStringSubmatch(line); m != nil {
			return newHop(ttl, m[1]), false, nil
		}
	}
	return Hop{TTL: ttl}, false, sc.Err()
}

// trimSilent drops the silent hops at the end (the destination never
// answered them): they say nothing of the path.
func trimSilent(hops []Hop) []Hop {
	for len(hops) > 0 && hops[len(hops)-1].Addr == "" {
		hops = hops[:len(hops)-1]
	}
	return hops
}

// Trace lists the hops from t to addr through device dev, with what the
// host has: traceroute, BusyBox's traceroute, or TTL-limited pings (iputils
// ping prints the router a time-exceeded came from). tool says which ran.
func Trace(ctx context.Context, t target.Target, dev, addr string) (hops []Hop, tool string, err error) {
	args := []string{"-n", "-q", "1", "-w", "1", "-m", strconv.Itoa(MaxHops), "-i", dev, addr}
	for _, argv := range [][]string{append([]string{"traceroute"}, args...), append([]string{"busybox", "traceroute"}, args...)} {
		out, err := t.Run(ctx, argv[0], argv[1:]...)
		if target.IsNotFound(err) || noApplet(err) {
			continue
		}
		if err != nil && len(out) == 0 {
			return nil, argv[0], fmt.Errorf("%s: %s: %w", t, strings.Join(argv[:len(argv)-1], " "), err)
		}
		hops, perr := ParseTraceroute(bytes.NewReader(out))
		return hops, strings.Join(argv[:len(argv)-len(args)], " "), perr
	}
	hops, err = tracePing(ctx, t, dev, addr)
	return hops, "ping -t", err
}

// noApplet says BusyBox was built without the applet.
func noApplet(err error) bool {
	var te *target.Error
	return errors.As(err, &te) && strings.Contains(te.Stderr, "applet not found")
}

// tracePing sends one ping per TTL until the destination answers.
func tracePing(ctx context.Context, t target.Target, dev, addr string) ([]Hop, error) {
	var hops []Hop
	for ttl := 1; ttl <= MaxHops; ttl++ {
		out, err := t.Run(ctx, "ping", "-n", "-c", "1", "-W", "1", "-t", strconv.Itoa(ttl), "-I", dev, addr)
		if target.IsNotFound(err) {
			return nil, fmt.Errorf("%s: no traceroute, no busybox traceroute and no ping to trace the path with", t)
		}
		if err != nil {
			var te *target.Error
			if !errors.As(err, &te) || te.ExitCode < 0 {
				return nil, fmt.Errorf("%s: ping -t %d %s: %w", t, ttl, addr, err)
			}
		}
		hop, reached, perr := ParseTTLPing(bytes.NewReader(out), ttl)
		if perr != nil {
			return nil, perr
		}
		hops = append(hops, hop)
		if reached {
			break
		}
	}
	return trimSilent(hops), nil
}
