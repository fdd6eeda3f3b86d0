package parse

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/facts"
)

// ParseWGDump parses "wg show all dump": tab-separated lines, an interface line
//
//	ifname private-key public-key listen-port fwmark
//
// followed by its peer lines
//
//	ifname public-key preshared-key endpoint allowed-ips latest-handshake rx tx keepalive
//
// Private and preshared keys are read past and never stored. MTU and
// Implementation are left for the link collector to fill in.
func ParseWGDump(r io.Reader) ([]facts.WGInterface, error) {
	var out []facts.WGInterface
	index := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20) // allowed-ips lists can be long
	line := 0
	var fields [10]string
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if text == "" {
			continue
		}
		// Into one array, not a slice a line: a hub's dump has a line for
		// each of up to a hundred thousand peers.
		f := splitTabs(text, fields[:0])
		switch len(f) {
		case 5:
			port, err := strconv.Atoi(f[3])
			if err != nil || port < 0 || port > 65535 {
				return nil, fmt.Errorf("wg dump line %d: bad listen port %q", line, f[3])
			}
			iface := facts.WGInterface{Name: f[0], PublicKey: noneToEmpty(f[2]), ListenPort: port, Peers: []facts.WGPeer{}}
			if f[4] != "off" {
				mark, err := strconv.ParseUint(f[4], 0, 32)
				if err != nil {
					return nil, fmt.Errorf("wg dump line %d: bad fwmark %q", line, f[4])
				}
				iface.FwMark = uint32(mark)
			}
			if _, dup := index[f[0]]; dup {
				return nil, fmt.Errorf("wg dump line %d: interface %s listed twice", line, f[0])
			}
			index[f[0]] = len(out)
			out = append(out, iface)
		case 9:
			i, ok := index[f[0]]
			if !ok {
				return nil, fmt.Errorf("wg dump line %d: peer of unknown interface %s", line, f[0])
			}
			peer, err := parseWGPeer(f)
			if err != nil {
				return nil, fmt.Errorf("wg dump line %d: %v", line, err)
			}
			out[i].Peers = append(out[i].Peers, peer)
		default:
			return nil, fmt.Errorf("wg dump line %d: %d tab-separated fields, want 5 (interface) or 9 (peer)", line, len(f))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("wg dump: %w", err)
	}
	return out, nil
}

// splitTabs is strings.Split(s, "\t") into buf, with at most cap(buf)
// fields (the last holding the rest).
func splitTabs(s string, buf []string) []string {
	for len(buf) < cap(buf)-1 {
		field, rest, ok := strings.Cut(s, "\t")
		buf = append(buf, field)
		if !ok {
			return buf
		}
		s = rest
	}
	return append(buf, s)
}

func parseWGPeer(f []string) (facts.WGPeer, error) {
	// Its own copies of the strings kept: the line they are cut from is
	// longer and would be held whole.
	p := facts.WGPeer{PublicKey: strings.Clone(f[1]), Endpoint: strings.Clone(noneToEmpty(f[3])), AllowedIPs: []string{}}
	if ips := noneToEmpty(f[4]); ips != "" {
		p.AllowedIPs = strings.Split(strings.Clone(ips), ",")
	}
	hs, err := strconv.ParseInt(f[5], 10, 64)
	if err != nil || hs < 0 {
		return p, fmt.Errorf("bad latest handshake %q", f[5])
	}
	if hs > 0 {
		p.LatestHandshake = time.Unix(hs, 0).UTC()
	}
	if p.RxBytes, err = strconv.ParseUint(f[6], 10, 64); err != nil {
		return p, fmt.Errorf("bad rx bytes %q", f[6])
	}
	if p.TxBytes, err = strconv.ParseUint(f[7], 10, 64); err != nil {
		return p, fmt.Errorf("bad tx bytes %q", f[7])
	}
	if f[8] != "off" {
		ka, err := strconv.Atoi(f[8])
		if err != nil || ka < 0 || ka > 65535 {
			return p, fmt.Errorf("bad persistent keepalive %q", f[8])
		}
		p.PersistentKeepalive = ka
	}
	return p, nil
}

// noneToEmpty maps wg's "(none)" placeholder to "".
func noneToEmpty(s string) string {
	if s == "(none)" {
		return ""
	}
	return s
}
