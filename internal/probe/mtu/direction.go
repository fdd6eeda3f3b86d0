package mtu

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/target"
)

// Which way a measurement's packets travelled, and which way a black hole
// drops them. A DF ping is a round trip: it passes only when both its request
// and its reply (the same size) do, so a return path that drops large packets
// looks exactly like a forward one (asymmetric routing: the PMTUD black hole
// case's "one-way street"). Echo requests counted where they arrive tell
// the two apart.
const (
	RoundTrip = "round trip" // DF pings: request and reply alike
	Forward   = "forward"    // from the probing client to the far end
	Return    = "return"     // from the far end back to the client
	BothWays  = "both ways"
)

// echoBurst is how many echo requests of one size each end sends for the
// one-way count: a receiver that counts all of them got them, one that counts
// none did not; anything between (a monitoring ping counted too, a lost
// probe) locates nothing.
const echoBurst = 3

// OneWay is the one-way evidence for the smallest size the round trips lost:
// each end sends echo requests of that size to the other, and the receiver's
// own ICMP counter (Icmp InEchos; Icmp6InEchos) says how many arrived.
type OneWay struct {
	Size int `json:"size"` // the whole IP packet
	// Forward: the client's requests, counted by the far end.
	ForwardSent    int `json:"forward_sent"`
	ForwardArrived int `json:"forward_arrived"`
	// Return: the far end's requests, counted by the client. ReturnRefused:
	// the far end's own stack refused the size (its route MTU says it is too
	// big, so its traffic fits and nothing vanishes that way).
	ReturnSent    int  `json:"return_sent"`
	ReturnArrived int  `json:"return_arrived"`
	ReturnRefused bool `json:"return_refused,omitempty"`
	// Broken is the direction that drops packets of Size: Forward, Return,
	// BothWays, or "" when the counts do not tell.
	Broken string `json:"broken"`
	// Error says why the count could not run (the direction stays untold).
	Error string `json:"error,omitempty"`
}

// orUntold names a direction for people: "" is one the evidence did not tell.
func orUntold(dir string) string {
	if dir == "" {
		return "direction not told"
	}
	return dir
}

// locate names the direction that drops a size from the counts of arrivals.
// It is pure.
func locate(o OneWay) string {
	arrived := func(sent, got int) (yes, no bool) { return sent > 0 && got >= sent, sent > 0 && got == 0 }
	fwdOK, fwdLost := arrived(o.ForwardSent, o.ForwardArrived)
	retOK, retLost := arrived(o.ReturnSent, o.ReturnArrived)
	if o.ReturnRefused {
		retOK, retLost = true, false // the far end knows its MTU: nothing of its vanishes
	}
	switch {
	case fwdOK && retLost:
		return Return
	case fwdLost && retOK:
		return Forward
	case fwdLost && retLost:
		return BothWays
	}
	// Both arrived (the round trip's loss was elsewhere), or a partial count.
	return ""
}

// echoCounter reads how many echo requests a host has received.
type echoCounter func(ctx context.Context, t target.Target, v6 bool) (int64, error)

// readInEchos reads t's Icmp InEchos (IPv4) or Icmp6InEchos (IPv6).
func readInEchos(ctx context.Context, t target.Target, v6 bool) (int64, error) {
	file := "/proc/net/snmp"
	if v6 {
		file = "/proc/net/snmp6"
	}
	b, err := t.ReadFile(ctx, file)
	if err != nil {
		return 0, err
	}
	n, err := ParseInEchos(b, v6)
	if err != nil {
		return 0, fmt.Errorf("%s on %s: %w", file, t, err)
	}
	return n, nil
}

// ParseInEchos reads the echo requests received from /proc/net/snmp (v6
// false: "Icmp: ... InEchos ...", a header line and a value line) or
// /proc/net/snmp6 (one "Icmp6InEchos N" per line).
func ParseInEchos(b []byte, v6 bool) (int64, error) {
	if !v6 {
		m, err := parse.ParseSNMP(bytes.NewReader(b))
		if err != nil {
			return 0, err
		}
		n, ok := m["Icmp"]["InEchos"]
		if !ok {
			return 0, fmt.Errorf("no Icmp InEchos counter")
		}
		return n, nil
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == "Icmp6InEchos" {
			return strconv.ParseInt(f[1], 10, 64)
		}
	}
	return 0, fmt.Errorf("no Icmp6InEchos counter")
}

// oneWay sends echoBurst DF echo requests of size from one end to addr and
// counts, on the receiver, how many arrived. refused: the sender's own stack
// would not send the size (its route MTU is smaller). rttMs is the path's
// round trip so far (0: unknown), which bounds the wait for each reply.
func oneWay(ctx context.Context, count echoCounter, from, to target.Target, addr string, size int, v6 bool, rttMs float64) (sent, arrived int, refused bool, err error) {
	hdr := 28
	if v6 {
		hdr = 48
	}
	before, err := count(ctx, to, v6)
	if err != nil {
		return 0, 0, false, err
	}
	p := &dfPinger{t: from, addr: addr, v6: v6, rttMs: rttMs}
	for range echoBurst {
		pg, err := p.probe(ctx, size-hdr)
		if err != nil {
			return 0, 0, false, err
		}
		if pg.Local {
			return 0, 0, true, nil
		}
		sent++
	}
	after, err := count(ctx, to, v6)
	if err != nil {
		return 0, 0, false, err
	}
	return sent, int(max(after-before, 0)), false, nil
}
