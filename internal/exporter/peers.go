package exporter

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// PeerNames maps a peer's public key to a friendly name for the name label.
type PeerNames map[string]string

// ReadPeerNames reads names from files that are either wg-quick configs, whose
// [Peer] sections carry a "# Name = laptop" comment (as wg-quick users and
// other WireGuard exporters write them; "# friendly_name =" works too), or
// plain lists of "PUBLICKEY NAME" lines, or OpenWrt's /etc/config/network,
// whose wireguard_IFACE peer sections carry "option description". Later files
// win for a repeated key. The files are read on this host only: fetching a
// wg-quick config from a router would copy its private key over the wire.
func ReadPeerNames(paths ...string) (PeerNames, error) {
	names := PeerNames{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		parse := parsePeerNames
		if isUCI(b) {
			parse = parseUCIPeerNames
		}
		if err := parse(bytes.NewReader(b), names); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return names, nil
}

// isUCI reports whether a file is OpenWrt UCI configuration: its first
// setting line starts a "config" section.
func isUCI(b []byte) bool {
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		return strings.HasPrefix(line, "config ") || line == "config"
	}
	return false
}

// parseUCIPeerNames adds the description of every wireguard_* section that
// has a public_key. Other sections (interfaces with their private_key among
// them) are skipped unread. The file is OpenWrt's, read by default on a
// router, so a description wgperf cannot use (too long, control characters)
// or a malformed key leaves that peer unnamed instead of stopping the exporter.
func parseUCIPeerNames(r io.Reader, names PeerNames) error {
	sc := bufio.NewScanner(r)
	var inPeer bool
	var key, name string
	flush := func() {
		if inPeer && wgKeyRE.MatchString(key) && name != "" {
			names[key] = name
		}
		key, name = "", ""
	}
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch f[0] {
		case "config":
			flush()
			inPeer = len(f) > 1 && strings.HasPrefix(f[1], "wireguard_")
		case "option":
			m := uciOptionRE.FindStringSubmatch(sc.Text())
			if !inPeer || m == nil {
				continue
			}
			switch v := uciValue(m[2]); m[1] {
			case "public_key":
				key = v
			case "description":
				name, _ = cleanName(v) // "" when unusable
			}
		}
	}
	flush()
	return sc.Err()
}

var uciOptionRE = regexp.MustCompile(`^\s*option\s+(\S+)\s+(.*?)\s*$`)

// uciValue removes UCI's quotes around a value.
func uciValue(v string) string {
	if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

var (
	wgKeyRE      = regexp.MustCompile(`^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$`)
	nameCommentR = regexp.MustCompile(`(?i)^#+\s*(?:name|friendly_name)\s*=\s*(.*)$`)
	keyLineRE    = regexp.MustCompile(`(?i)^publickey\s*=\s*(\S+)\s*$`)
)

// maxNameLen keeps a label value readable in a legend.
const maxNameLen = 64

// parsePeerNames adds the names in r to names. A line it cannot read is an
// error with its number: a names file silently half-read would mislabel peers.
func parsePeerNames(r io.Reader, names PeerNames) error {
	sc := bufio.NewScanner(r)
	var (
		inSection bool   // after any [Section] header: a wg-quick config
		inPeer    bool   // inside a [Peer] section
		key, name string // of the current [Peer] section
		// held is a Name comment not yet placed: it names the section it is
		// in, unless the next setting line is a [Peer] header (a comment
		// written above the section it names).
		held   string
		lineNo int
	)
	place := func() {
		if held != "" && inPeer {
			name = held
		}
		held = ""
	}
	flush := func() {
		if inPeer && key != "" && name != "" {
			names[key] = name
		}
		key, name = "", ""
	}
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		if m := nameCommentR.FindStringSubmatch(line); m != nil {
			n, err := cleanName(m[1])
			if err != nil {
				return fmt.Errorf("line %d: %w", lineNo, err)
			}
			place() // two Name comments in a row: the first names this section
			held = n
			continue
		}
		fields := strings.Fields(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "["):
			flush()
			inSection = true
			inPeer = strings.EqualFold(line, "[Peer]")
			place()
		case inPeer:
			place()
			if m := keyLineRE.FindStringSubmatch(line); m != nil {
				if !wgKeyRE.MatchString(m[1]) {
					return fmt.Errorf("line %d: %q is not a WireGuard public key", lineNo, m[1])
				}
				key = m[1]
			}
		case len(fields) >= 2 && fields[1] != "=" && wgKeyRE.MatchString(fields[0]):
			n, err := cleanName(strings.TrimSpace(strings.TrimPrefix(line, fields[0])))
			if err != nil {
				return fmt.Errorf("line %d: %w", lineNo, err)
			}
			names[fields[0]] = n
		case inSection:
			// [Interface] and other settings, PrivateKey among them: not read.
			held = ""
		default:
			return fmt.Errorf("line %d: want \"PUBLICKEY NAME\" or a wg-quick config", lineNo)
		}
	}
	place()
	flush()
	return sc.Err()
}

// cleanName accepts a printable name of at most maxNameLen characters.
func cleanName(s string) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", fmt.Errorf("empty peer name")
	case !utf8.ValidString(s):
		return "", fmt.Errorf("peer name %q is not UTF-8", s)
	case utf8.RuneCountInString(s) > maxNameLen:
		return "", fmt.Errorf("peer name %q is longer than %d characters", s, maxNameLen)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return "", fmt.Errorf("peer name %q has a control character", s)
		}
	}
	return s, nil
}

// Roaming bounds the endpoint label's churn. The label holds the endpoint's
// address only (NAT rebinding changes ports all the time; the port is a
// sample value instead), and a peer may show at most MaxEndpoints addresses
// per Window; past that its label reads "roaming" until the window moves on.
// A phone hopping between networks thus makes at most MaxEndpoints+1 series
// an hour instead of one per hop.
const (
	MaxEndpoints   = 4
	EndpointWindow = time.Hour
	roamingLabel   = "roaming"
)

// roamLimiter remembers, per peer, the endpoint addresses shown in the window.
type roamLimiter struct {
	mu    sync.Mutex
	peers map[[2]string][]seenAddr // interface, peer
}

type seenAddr struct {
	addr  string
	first time.Time
}

func newRoamLimiter() *roamLimiter { return &roamLimiter{peers: map[[2]string][]seenAddr{}} }

// label returns the endpoint_ip label for a peer's endpoint now.
func (l *roamLimiter) label(iface, peer, addr string, now time.Time) string {
	k := [2]string{iface, peer}
	seen := l.peers[k][:0:0]
	for _, s := range l.peers[k] {
		if now.Sub(s.first) < EndpointWindow {
			seen = append(seen, s)
		}
	}
	for _, s := range seen {
		if s.addr == addr {
			l.peers[k] = seen
			return addr
		}
	}
	if len(seen) >= MaxEndpoints {
		l.peers[k] = seen
		return roamingLabel
	}
	l.peers[k] = append(seen, seenAddr{addr, now})
	return addr
}

// keep forgets peers that are gone, so the limiter's memory follows the
// configuration rather than growing with every peer ever seen.
func (l *roamLimiter) keep(present map[[2]string]bool) {
	for k := range l.peers {
		if !present[k] {
			delete(l.peers, k)
		}
	}
}

// splitEndpoint returns an endpoint's address and port ("" and 0 when none).
func splitEndpoint(ep string) (addr string, port int) {
	if ep == "" || ep == "(none)" {
		return "", 0
	}
	h, p, err := net.SplitHostPort(ep)
	if err != nil {
		return ep, 0
	}
	var n int
	fmt.Sscanf(p, "%d", &n)
	return h, n
}
