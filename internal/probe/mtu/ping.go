package mtu

import (
	"bufio"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Ping is the outcome of one "ping -M do -s SIZE -c 1" as iputils prints it.
type Ping struct {
	Received bool
	// MTU is what the network or the local route said fits: a frag-needed from a
	// router ("Frag needed and DF set (mtu = 1400)") or the kernel's cached path
	// MTU ("local error: message too long, mtu=1400"). 0 when none came.
	MTU   int
	Local bool    // the local stack refused the size (route or interface MTU)
	Error string  // another ICMP error, e.g. "Destination Net Unreachable"
	RTTms float64 // the reply's round trip, when one came
}

var (
	fragRe  = regexp.MustCompile(`Frag(?:mentation)? needed and DF set \(mtu = (\d+)\)`)
	localRe = regexp.MustCompile(`message too long, mtu[= ]+(\d+)`)
	v6Re    = regexp.MustCompile(`Packet too big: mtu=(\d+)`)
	recvRe  = regexp.MustCompile(`(\d+) (?:packets )?received`)
	fromRe  = regexp.MustCompile(`^From \S+ icmp_seq=\d+ (.+)$`)
	rttRe   = regexp.MustCompile(`icmp_seq=\d+ .*time=([0-9.]+) ms`)
)

// ParsePing reads ping's standard output and error, merged.
func ParsePing(r io.Reader) (Ping, error) {
	var p Ping
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if m := fragRe.FindStringSubmatch(line); m != nil {
			p.MTU, _ = strconv.Atoi(m[1])
			continue
		}
		if m := v6Re.FindStringSubmatch(line); m != nil {
			p.MTU, _ = strconv.Atoi(m[1])
			continue
		}
		if m := localRe.FindStringSubmatch(line); m != nil {
			p.MTU, _ = strconv.Atoi(m[1])
			p.Local = true
			continue
		}
		if m := rttRe.FindStringSubmatch(line); m != nil {
			p.RTTms, _ = strconv.ParseFloat(m[1], 64)
			continue
		}
		if m := fromRe.FindStringSubmatch(line); m != nil {
			p.Error = m[1]
			continue
		}
		if strings.Contains(line, "packets transmitted") {
			if m := recvRe.FindStringSubmatch(line); m != nil {
				n, _ := strconv.Atoi(m[1])
				p.Received = n > 0
			}
		}
	}
	return p, sc.Err()
}
