package shell

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
	"unicode/utf8"
)

var (
	// Linux interface names: at most 15 bytes (IFNAMSIZ-1), no "/" or space;
	// "@" and ":" appear in ip's output (veth@if3) and alias names (eth0:1).
	ifaceRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.@:-]{0,14}$`)
	// Host names and ssh config aliases: letters, digits, "-", "_" and dots,
	// never a leading "-" (ssh would read an option).
	hostRE = regexp.MustCompile(`^[A-Za-z0-9_]([A-Za-z0-9_.-]{0,252})$`)
	// User names as useradd and Active Directory allow them.
	userRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.@-]{0,63}\$?$`)
	// uci: config.section.option, the section a name or @type[index] (names
	// as uci itself validates them: letters, digits and "_").
	uciSectionPat = `([A-Za-z0-9_]+|@[A-Za-z0-9_]+\[-?[0-9]+\])`
	uciKeyRE      = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]*\.` + uciSectionPat + `\.[A-Za-z0-9_]+$`)
	uciSectionRE  = regexp.MustCompile(`^` + uciSectionPat + `$`)
	// Finding IDs as in the catalog: area.name.
	findingIDRE = regexp.MustCompile(`^[a-z][a-z0-9]*\.[a-z0-9][a-z0-9-]*$`)
	// sysctl names in dotted form (net.ipv4.tcp_rmem, net.ipv4.conf.wg0.mtu).
	sysctlNameRE = regexp.MustCompile(`^[a-z0-9_]+(\.[A-Za-z0-9_:@-]+)+$`)
	// sysctl values: numbers and words separated by blanks (tcp_rmem, bbr, "cubic reno").
	sysctlValueRE = regexp.MustCompile(`^[A-Za-z0-9_.:,+-]+([ \t]+[A-Za-z0-9_.:,+-]+)*$`)
)

// Iface checks a network interface name.
func Iface(s string) error { return match("interface name", s, ifaceRE) }

// Host checks the host of an ssh target: a host name, an IPv4 address or an
// IPv6 address (with an optional zone). Nothing ssh could read as an option
// or a shell could split passes.
func Host(s string) error {
	if strings.Contains(s, ":") {
		a, err := netip.ParseAddr(s)
		if err != nil || !a.Is6() {
			return fmt.Errorf("host %q: not a host name, IPv4 or IPv6 address", s)
		}
		if z := a.Zone(); z != "" && Iface(z) != nil {
			return fmt.Errorf("host %q: bad IPv6 zone", s)
		}
		return nil
	}
	return match("host", s, hostRE)
}

// User checks a login name for ssh.
func User(s string) error { return match("user", s, userRE) }

// UCIKey checks an OpenWrt uci option path: config.section.option.
func UCIKey(s string) error { return match("uci key", s, uciKeyRE) }

// UCISection checks an OpenWrt uci section as it appears in a key: a name
// or @type[index].
func UCISection(s string) error { return match("uci section", s, uciSectionRE) }

// Line checks that s is one printable line of UTF-8: no newline, no control
// character (kind names the field in the error).
func Line(kind, s string) error {
	if !printable(s) {
		return fmt.Errorf("%s %q: control characters or invalid UTF-8", kind, s)
	}
	return nil
}

// FindingID checks a finding ID: area.name in lower case ("mtu.pmtud-blackhole").
func FindingID(s string) error { return match("finding ID", s, findingIDRE) }

// SysctlName checks a sysctl name in dotted form.
func SysctlName(s string) error { return match("sysctl name", s, sysctlNameRE) }

// SysctlValue checks a sysctl value: numbers or words separated by blanks.
func SysctlValue(s string) error {
	if len(s) > 256 {
		return fmt.Errorf("sysctl value too long (%d bytes, at most 256)", len(s))
	}
	return match("sysctl value", s, sysctlValueRE)
}

func match(kind, s string, re *regexp.Regexp) error {
	if s == "" {
		return fmt.Errorf("empty %s", kind)
	}
	if !re.MatchString(s) {
		return fmt.Errorf("%s %q has characters outside its grammar", kind, s)
	}
	return nil
}

// printable reports valid UTF-8 without control characters.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if isControl(r) {
			return false
		}
	}
	return true
}
