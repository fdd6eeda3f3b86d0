package collect

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/facts"
)

// secretUCIWords mark an option whose value is a secret: PPPoE and mobile
// passwords and PINs, Wi-Fi and WireGuard keys, API tokens. Matched against
// the option name's "_"-separated words, or contained anywhere in it.
var (
	secretUCIWords = map[string]bool{"key": true, "psk": true, "pin": true, "pass": true, "pw": true, "pwd": true}
	secretUCIParts = []string{"password", "passwd", "passphrase", "secret", "token", "private", "preshared",
		"psk", "pincode", "credential", "cookie"}
	keyNumberRE = regexp.MustCompile(`^key[0-9]+$`) // WEP key1..key4
)

// secretUCIOption reports whether the option of a uci key
// ("config.section.option") looks like it holds a secret. Public keys do not.
func secretUCIOption(key string) bool {
	parts := strings.Split(key, ".")
	if len(parts) < 2 {
		return false
	}
	// The last part is an option, or a section name ("config.section=type"):
	// a section named like a secret loses only its type line.
	opt := strings.ToLower(parts[len(parts)-1])
	if strings.Contains(opt, "public") {
		return false
	}
	for _, p := range secretUCIParts {
		if strings.Contains(opt, p) {
			return true
		}
	}
	if keyNumberRE.MatchString(opt) {
		return true
	}
	for _, w := range strings.Split(opt, "_") {
		if secretUCIWords[w] {
			return true
		}
	}
	return false
}

// ParseUCI parses "uci show CONFIG": lines "config.section.option='value'" and
// "config.section=type". List values ("'a' 'b'") become space-separated.
// Options whose names look secret (keys, passwords, PSKs, PINs, tokens) are
// dropped: a snapshot is meant to be sent to someone else.
func ParseUCI(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		key, raw, ok := strings.Cut(line, "=")
		if !ok || key == "" || strings.ContainsAny(key, " '\"") || slices.Contains(strings.Split(key, "."), "") {
			// uci names every part of a key; an empty one (".private_key")
			// would also slip past the secret filter, which reads the parts.
			return nil, fmt.Errorf("uci show line %d: want config.section[.option]=value, got %q", n, line)
		}
		if secretUCIOption(key) {
			continue
		}
		vals, err := uciValues(raw)
		if err != nil {
			return nil, fmt.Errorf("uci show line %d: %v", n, err)
		}
		out[key] = strings.Join(vals, " ")
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("uci show: %w", err)
	}
	return out, nil
}

// uciValues unquotes uci's shell quoting: 'a b' 'c', with ' written as '\”.
func uciValues(s string) ([]string, error) { return splitWords(s, '\'') }

// mwan3Event matches mwan3track's state changes, e.g.
// "Sat Apr  5 06:53:12 2026 user.notice mwan3track[4321]: Interface wan (eth1) is offline".
var mwan3Event = regexp.MustCompile(`^(\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}) \S+ mwan3track\[\d+\]: Interface (\S+) \(([^)]*)\) is (online|offline)`)

// ParseMwan3Events picks mwan3track's "Interface X (dev) is online|offline"
// lines out of logread output. logread prints the router's local time without a
// zone; times are kept as printed and labelled UTC.
func ParseMwan3Events(r io.Reader) ([]facts.LinkEvent, error) {
	out := []facts.LinkEvent{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		m := mwan3Event.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		ts, err := time.Parse("Mon Jan _2 15:04:05 2006", m[1])
		if err != nil {
			return nil, fmt.Errorf("logread: bad time %q: %v", m[1], err)
		}
		out = append(out, facts.LinkEvent{Time: ts, Interface: m[2], Device: m[3], State: m[4]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("logread: %w", err)
	}
	return out, nil
}

// openwrtSource is OpenWrt's configuration wgperf reads (network, mwan3,
// banIP), mwan3's status and its tracker's log lines; nothing on other hosts.
var openwrtSource = source{
	cmds: []shellCmd{
		{"uci-network", onOpenWrt(ifInstalled("uci", "uci -q show network"))},
		{"uci-mwan3", onOpenWrt("if [ -e /etc/config/mwan3 ]; then uci -q show mwan3; else skip; fi")},
		{"uci-banip", onOpenWrt("if [ -e /etc/config/banip ]; then uci -q show banip; else skip; fi")},
		{"mwan3-status", onOpenWrt("if command -v mwan3 >/dev/null 2>&1; then mwan3 status; else skip; fi")},
		{"logread", onOpenWrt(ifInstalled("logread", "logread -e mwan3track"))},
	},
	assemble: (*collector).openwrt,
}

func (c *collector) openwrt(map[string]*fileRead) {
	if c.res["uci-network"].Code == codeSkipped {
		return
	}
	ow := &facts.OpenWrt{Network: map[string]string{}}
	for _, src := range []struct {
		key string
		dst *map[string]string
	}{{"uci-network", &ow.Network}, {"uci-mwan3", &ow.Mwan3}, {"uci-banip", &ow.Banip}} {
		source := "uci show " + strings.TrimPrefix(src.key, "uci-")
		if out, ok := c.output(src.key, source); ok {
			m, err := ParseUCI(strings.NewReader(out))
			if err != nil {
				c.note(source, err.Error())
				continue
			}
			*src.dst = m
		}
	}
	if out, ok := c.output("mwan3-status", "mwan3 status"); ok {
		ow.Mwan3Status = strings.TrimSpace(out)
	}
	if out, ok := c.output("logread", "logread"); ok {
		ev, err := ParseMwan3Events(strings.NewReader(out))
		if err != nil {
			c.note("logread", err.Error())
		} else {
			ow.Events = ev
		}
	}
	c.snap.OpenWrt = ow
}
