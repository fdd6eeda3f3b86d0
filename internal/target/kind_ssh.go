package target

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path"
	"strconv"
	"strings"
)

// sshKind is a machine reached with the system ssh client (ssh.go), so the
// user's ~/.ssh/config, agent and ProxyJump apply.
var sshKind = Kind{
	Name:   "ssh",
	Prefix: "ssh:",
	Syntax: "ssh:[user@]host[:port]",
	Help:   "a machine reached with the system ssh client (~/.ssh/config applies)",
	Probe:  ProbeAllowed,
	// The parsed address is an SSHAddress, comparable, so Spec.Same can
	// compare two specs' addresses; the host's settings join it on open.
	parse: func(rest string) (any, error) {
		s, err := parseSSHSpec(rest)
		return SSHAddress{User: s.User, Host: s.Host, Port: s.Port}, err
	},
	open: openSSH,
	complete: func() []string {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil
		}
		return sshCompletions(home)
	},
	pattern: sshPattern,
}

// sshRule is an ssh allow pattern, matched on what ssh will dial (user,
// host, port), never on the spec's text: "ssh:root@10.0.0.1@evil.example"
// (user "root@10.0.0.1", host evil.example) and "ssh:root@10.0.0.5.evil.example"
// fall outside "ssh:root@10.0.0.*".
type sshRule struct {
	// user is a path.Match pattern ("" admits any user, as the ssh config
	// decides); host a pattern matched label by label, "*" alone any host;
	// prefix, when valid, admits address targets inside it instead; port 0
	// admits any port.
	user   string
	host   string
	prefix netip.Prefix
	port   int
	// v4 marks a host pattern of four dot-separated numbers or number
	// patterns (10.0.0.*, 192.168.[0-9].1): it admits IPv4 addresses only,
	// never a name that starts like one (10.0.0.com, 10.0.0.localhost).
	v4 bool
}

// sshPattern reads [USER@]HOST[:PORT] where HOST is a glob of dot-separated
// labels, an address or a CIDR prefix, and PORT a number or "*".
func sshPattern(rest string) (func(Spec) bool, error) {
	var r sshRule
	if user, host, ok := strings.Cut(rest, "@"); ok {
		if user == "" || strings.Contains(host, "@") {
			return nil, errors.New("one user before one @")
		}
		if _, err := path.Match(user, ""); err != nil {
			return nil, fmt.Errorf("user: %v", err)
		}
		if user != "*" {
			r.user = user
		}
		rest = host
	}
	host, port := rest, ""
	switch {
	case strings.HasPrefix(rest, "["): // [v6] or [v6]:port
		end := strings.IndexByte(rest, ']')
		if end < 0 || (end+1 < len(rest) && rest[end+1] != ':') {
			return nil, errors.New("want [IPv6 address] or [IPv6 address]:port")
		}
		host = rest[1:end]
		if end+1 < len(rest) {
			port = rest[end+2:]
		}
	case strings.Count(rest, ":") == 1:
		host, port, _ = strings.Cut(rest, ":")
	}
	switch port {
	case "", "*":
	default:
		p, err := strconv.Atoi(port)
		if err != nil || p < 1 || p > 65535 {
			return nil, fmt.Errorf("port %q: want 1-65535 or *", port)
		}
		r.port = p
	}
	switch {
	case host == "":
		return nil, errors.New("no host")
	case strings.Contains(host, "/"):
		prefix, err := netip.ParsePrefix(host)
		if err != nil {
			return nil, err
		}
		r.prefix = prefix.Masked()
	case strings.Contains(host, ":"):
		// IPv6 has many spellings of one address: only an address or a
		// prefix is a pattern there, compared as addresses.
		a, err := netip.ParseAddr(host)
		if err != nil {
			return nil, errors.New("an IPv6 host is an address or a prefix (fd00::/64), not a pattern")
		}
		r.prefix = netip.PrefixFrom(a.WithZone(""), a.BitLen())
	default:
		if _, err := path.Match(host, ""); err != nil {
			return nil, fmt.Errorf("host: %v", err)
		}
		r.host = strings.ToLower(host)
		if numericPattern(r.host) {
			if strings.Count(r.host, ".") != 3 {
				return nil, errors.New("an address pattern has four numbers or patterns (10.0.0.*), or is a prefix (10.0.0.0/24)")
			}
			r.v4 = true
		}
	}
	return r.admits, nil
}

// numericPattern reports whether a host pattern reads as an IPv4 address or
// part of one: dot-separated labels of digits and pattern characters, one
// holding a digit at least ("*" alone is any host, *.example a name).
func numericPattern(host string) bool {
	if host == "*" || !strings.ContainsAny(host, "0123456789") || !strings.Contains(host, ".") {
		return false
	}
	return strings.Trim(host, "0123456789.*?[]-!^") == ""
}

// admits reports whether the rule admits an ssh spec.
func (r sshRule) admits(s Spec) bool {
	a, ok := s.SSH()
	if !ok {
		return false
	}
	if r.user != "" {
		if ok, _ := path.Match(r.user, a.User); !ok || a.User == "" {
			return false
		}
	}
	if r.port != 0 && r.port != orDefault(a.Port, 22) {
		return false
	}
	if r.prefix.IsValid() {
		addr, err := netip.ParseAddr(a.Host)
		return err == nil && r.prefix.Contains(addr.Unmap().WithZone(""))
	}
	if r.v4 {
		addr, err := netip.ParseAddr(a.Host)
		if err != nil || !addr.Is4() || addr.String() != a.Host {
			return false
		}
	}
	return hostMatch(r.host, strings.ToLower(a.Host))
}

// hostMatch matches a host against a pattern label by label, as a TLS
// wildcard is: "*" alone is any host, otherwise "*" stays inside one label,
// so 10.0.0.* admits 10.0.0.5 and not 10.0.0.5.evil.example.
func hostMatch(pattern, host string) bool {
	if pattern == "*" {
		return true
	}
	pl, hl := strings.Split(pattern, "."), strings.Split(host, ".")
	if len(pl) != len(hl) {
		return false
	}
	for i := range pl {
		if ok, _ := path.Match(pl[i], hl[i]); !ok {
			return false
		}
	}
	return true
}

// orDefault returns v, or def when v is zero.
func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
