package exporter

import (
	"fmt"
	"net/netip"
	"path"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/target"
)

// allowRule is one --probe.allow pattern, matched on the parsed target, never
// on its text: a target is admitted by what ssh will dial (user, host, port),
// so "ssh:root@10.0.0.1@evil.example" (user "root@10.0.0.1", host
// evil.example) and "ssh:root@10.0.0.5.evil.example" fall outside
// "ssh:root@10.0.0.*".
type allowRule struct {
	pattern string
	kind    string // "local", "netns" or "ssh"
	name    string // netns: path.Match pattern of the namespace name
	// ssh: user is a path.Match pattern ("" admits any user, as the ssh config
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

// parseAllow reads one pattern: local, netns:GLOB, or
// ssh:[USER@]HOST[:PORT] where HOST is a glob of dot-separated labels, an
// address or a CIDR prefix, and PORT a number or "*".
func parseAllow(pattern string) (allowRule, error) {
	r := allowRule{pattern: pattern}
	bad := func(format string, args ...any) (allowRule, error) {
		return allowRule{}, fmt.Errorf("--probe.allow %q: %s", pattern, fmt.Sprintf(format, args...))
	}
	switch {
	case pattern == "local":
		r.kind = "local"
		return r, nil
	case strings.HasPrefix(pattern, "netns:"):
		r.kind, r.name = "netns", strings.TrimPrefix(pattern, "netns:")
		if _, err := path.Match(r.name, ""); err != nil || r.name == "" {
			return bad("want netns:NAME, NAME a name or a pattern like site-*")
		}
		return r, nil
	case !strings.HasPrefix(pattern, "ssh:"):
		return bad("want local, netns:NAME or ssh:[user@]host[:port] (patterns: *, ?, [a-z]; a host may be a prefix, 10.0.0.0/24)")
	}
	r.kind = "ssh"
	rest := strings.TrimPrefix(pattern, "ssh:")
	if user, host, ok := strings.Cut(rest, "@"); ok {
		if user == "" || strings.Contains(host, "@") {
			return bad("one user before one @")
		}
		if _, err := path.Match(user, ""); err != nil {
			return bad("user: %v", err)
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
			return bad("want [IPv6 address] or [IPv6 address]:port")
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
			return bad("port %q: want 1-65535 or *", port)
		}
		r.port = p
	}
	switch {
	case host == "":
		return bad("no host")
	case strings.Contains(host, "/"):
		prefix, err := netip.ParsePrefix(host)
		if err != nil {
			return bad("%v", err)
		}
		r.prefix = prefix.Masked()
	case strings.Contains(host, ":"):
		// IPv6 has many spellings of one address: only an address or a
		// prefix is a pattern there, compared as addresses.
		a, err := netip.ParseAddr(host)
		if err != nil {
			return bad("an IPv6 host is an address or a prefix (fd00::/64), not a pattern")
		}
		r.prefix = netip.PrefixFrom(a.WithZone(""), a.BitLen())
	default:
		if _, err := path.Match(host, ""); err != nil {
			return bad("host: %v", err)
		}
		r.host = strings.ToLower(host)
		if numericPattern(r.host) {
			if strings.Count(r.host, ".") != 3 {
				return bad("an address pattern has four numbers or patterns (10.0.0.*), or is a prefix (10.0.0.0/24)")
			}
			r.v4 = true
		}
	}
	return r, nil
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

// admits reports whether the rule lets /probe collect spec, already parsed
// by target.Parse.
func (r allowRule) admits(spec string) bool {
	switch {
	case spec == "local" || spec == "":
		return r.kind == "local"
	case strings.HasPrefix(spec, "netns:"):
		ok, _ := path.Match(r.name, strings.TrimPrefix(spec, "netns:"))
		return r.kind == "netns" && ok
	}
	a, err := target.ParseSSHAddress(spec)
	if err != nil || r.kind != "ssh" {
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
