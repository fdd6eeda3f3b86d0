package parse

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/shell"
)

// uciKept lists, per config, the only uci options a snapshot keeps: those
// the checks and fixes read, and a few that say how the tunnel and the
// uplinks are wired. Anything else (PPPoE passwords in pppd_options, DDNS
// update keys, API keys, peer notes...) never leaves the host, whatever it is
// called. Section lines ("network.wg=interface") are kept when uciTypes
// lists their type.
var uciKept = map[string]map[string]bool{
	"network": setOf("proto", "device", "ifname", "type", "mtu", "metric", "nohostroute", "packet_steering",
		"xmit_hash_policy", "listen_port", "endpoint_host", "endpoint_port", "route_allowed_ips", "persistent_keepalive"),
	"mwan3": setOf("interface", "enabled", "family", "track_ip", "track_method", "reliability", "count",
		"interval", "down", "up"),
	"banip": setOf("ban_enabled", "ban_icmplimit"),
}

// uciTypes lists, per config, the section types a snapshot keeps, besides a
// WireGuard peer's "wireguard_IFACE" in network (uciPeerTypeRE). A type is a
// fixed word: a section line that is not one of them, however it is named
// ("network.private_key=..."), is no line uci writes for these configs, and
// its value could be a secret.
var uciTypes = map[string]map[string]bool{
	"network": setOf("interface", "device", "globals", "route", "route6", "rule", "rule6", "switch", "switch_vlan",
		"bridge-vlan"),
	"mwan3": setOf("globals", "interface", "member", "policy", "rule"),
	"banip": setOf("banip"),
}

// uciPeerTypeRE is the section type of a WireGuard peer of an interface.
var uciPeerTypeRE = regexp.MustCompile(`^wireguard_[A-Za-z0-9_.-]{1,15}$`)

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// uciKeptKey reports whether a snapshot may keep a "uci show" line: a
// section line (config.section=type) of a type uciTypes lists, or an option
// uciKept lists for its config.
func uciKeptKey(key, value string) bool {
	parts := strings.Split(key, ".")
	switch len(parts) {
	case 2:
		return uciTypes[parts[0]][value] || parts[0] == "network" && uciPeerTypeRE.MatchString(value)
	case 3:
		return uciKept[parts[0]][parts[2]]
	}
	return false
}

// ParseUCI parses "uci show CONFIG": lines "config.section.option='value'" and
// "config.section=type". List values ("'a' 'b'") become space-separated.
// Only the section lines of uciTypes and the options of uciKept are kept: a
// snapshot is meant to be sent to someone else, and a deny-list of secret
// names always misses one (updatekey, pppd_options 'password ...').
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
		vals, err := uciValues(raw)
		if err != nil {
			return nil, fmt.Errorf("uci show line %d: %v", n, err)
		}
		if v := strings.Join(vals, " "); uciKeptKey(key, v) {
			out[key] = v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("uci show: %w", err)
	}
	return out, nil
}

// uciValues unquotes uci's shell quoting: 'a b' 'c', with ' written as '\”.
func uciValues(s string) ([]string, error) { return shell.Split(s, '\'') }

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

// ParseNetifdDump reads "ubus call network.interface dump": each logical
// interface's state, uptime, layer-3 device and protocol. Names and devices
// that are not names are left out.
func ParseNetifdDump(r io.Reader) ([]facts.NetifdInterface, error) {
	var doc struct {
		Interface []struct {
			Interface string `json:"interface"`
			Up        bool   `json:"up"`
			Uptime    int64  `json:"uptime"`
			L3Device  string `json:"l3_device"`
			Proto     string `json:"proto"`
		} `json:"interface"`
	}
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return nil, fmt.Errorf("ubus call network.interface dump: %w", err)
	}
	out := []facts.NetifdInterface{}
	for _, i := range doc.Interface {
		if !netifdName.MatchString(i.Interface) {
			continue
		}
		n := facts.NetifdInterface{Name: i.Interface, Up: i.Up, Proto: i.Proto}
		if !netifdName.MatchString(n.Proto) {
			n.Proto = ""
		}
		if i.Up && i.Uptime > 0 {
			n.Uptime = i.Uptime
		}
		if shell.Iface(i.L3Device) == nil {
			n.Device = i.L3Device
		}
		out = append(out, n)
	}
	return out, nil
}

// netifdName is a uci section or protocol name.
var netifdName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
