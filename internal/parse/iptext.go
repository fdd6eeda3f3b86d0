package parse

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
)

// BusyBox's ip (OpenWrt's default; "ip -j" needs the ip-full package) has no
// JSON output. The collection snippets fall back to its text output and mark
// it with ipTextMark on the first line; these parsers read that text.

// ParseIPLinkText parses "ip -o link show": one line per link,
// "2: eth0@if5: <BROADCAST,UP,LOWER_UP> mtu 1500 qdisc tbf master br0 state UP qlen 1000\ link/ether ...".
// BusyBox prints no state; UP with LOWER_UP is read as state UP.
func ParseIPLinkText(r io.Reader) ([]facts.Link, error) {
	out := []facts.Link{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		// "\" joins the link/ether line that -o folds in; it is not read.
		if i := strings.IndexByte(line, '\\'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) < 3 || !strings.HasSuffix(f[0], ":") || !strings.HasSuffix(f[1], ":") {
			return nil, fmt.Errorf("ip link: want \"N: NAME: <FLAGS> ...\", got %.60q", line)
		}
		idx, err := strconv.Atoi(strings.TrimSuffix(f[0], ":"))
		if err != nil {
			return nil, fmt.Errorf("ip link: bad index in %.60q", line)
		}
		name := strings.TrimSuffix(f[1], ":")
		if i := strings.IndexByte(name, '@'); i >= 0 {
			name = name[:i] // veth peer or VLAN parent
		}
		if name == "" {
			return nil, fmt.Errorf("ip link: link %d has no name", idx)
		}
		l := facts.Link{Name: name, Index: idx}
		flags := strings.Trim(f[2], "<>")
		for i := 3; i+1 < len(f); i++ {
			switch f[i] {
			case "mtu":
				l.MTU, _ = strconv.Atoi(f[i+1])
			case "qdisc":
				l.Qdisc = f[i+1]
			case "master":
				l.Master = f[i+1]
			case "state":
				l.State = f[i+1]
			}
		}
		if l.State == "" {
			l.State = "DOWN"
			if fl := "," + flags + ","; strings.Contains(fl, ",UP,") && strings.Contains(fl, ",LOWER_UP,") {
				l.State = "UP"
			}
		}
		out = append(out, l)
	}
	return out, sc.Err()
}

// routeTypes are the words that may start a route line before its destination.
var routeTypes = map[string]bool{"unicast": true, "local": true, "broadcast": true, "multicast": true, "anycast": true,
	"unreachable": true, "blackhole": true, "prohibit": true, "throw": true, "nat": true}

// ParseIPRouteText parses "ip -4|-6 route show table all": "[TYPE] DST [via GW]
// [dev DEV] [table T] [proto P] [scope S] [src A] [metric M] [FLAGS]", with
// multipath hops on following "nexthop via GW dev DEV weight W" lines.
func ParseIPRouteText(r io.Reader, family string) ([]facts.Route, error) {
	out := []facts.Route{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if f[0] == "nexthop" {
			if len(out) == 0 {
				return nil, fmt.Errorf("ip route: nexthop before any route")
			}
			var nh facts.Nexthop
			for i := 1; i+1 < len(f); i++ {
				switch f[i] {
				case "via":
					nh.Gateway = f[i+1]
				case "dev":
					nh.Dev = f[i+1]
				case "weight":
					nh.Weight, _ = strconv.Atoi(f[i+1])
				}
			}
			last := &out[len(out)-1]
			last.Nexthops = append(last.Nexthops, nh)
			continue
		}
		// As in ip -j, a unicast route has no type.
		rt := facts.Route{Family: family, Table: "main"}
		i := 0
		if routeTypes[f[0]] && f[0] != "unicast" {
			rt.Type, i = f[0], 1
		} else if f[0] == "unicast" {
			i = 1
		}
		if i >= len(f) {
			return nil, fmt.Errorf("ip route: no destination in %.60q", sc.Text())
		}
		rt.Dst = f[i]
		for i++; i < len(f); i++ {
			val := ""
			if i+1 < len(f) {
				val = f[i+1]
			}
			switch f[i] {
			case "via":
				rt.Gateway = val
			case "dev":
				rt.Dev = val
			case "table":
				rt.Table = val
			case "proto":
				rt.Protocol = val
			case "scope":
				rt.Scope = val
			case "src":
				rt.PrefSrc = val
			case "metric":
				rt.Metric, _ = strconv.Atoi(val)
			case "onlink", "linkdown", "dead", "pervasive", "offload":
				rt.Flags = append(rt.Flags, f[i])
				continue
			default:
				continue // a keyword wgperf does not read, or its value
			}
			i++
		}
		out = append(out, rt)
	}
	return out, sc.Err()
}

// ParseIPRuleText parses "ip -4|-6 rule show": "PRIO:\tfrom SRC [to DST]
// [fwmark M[/MASK]] [iif DEV] lookup TABLE|goto N|ACTION".
func ParseIPRuleText(r io.Reader, family string) ([]facts.RouteRule, error) {
	out := []facts.RouteRule{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		prio, err := strconv.Atoi(strings.TrimSuffix(f[0], ":"))
		if err != nil || !strings.HasSuffix(f[0], ":") {
			return nil, fmt.Errorf("ip rule: want \"PRIO: ...\", got %.60q", sc.Text())
		}
		ru := facts.RouteRule{Family: family, Priority: prio}
		for i := 1; i < len(f); i++ {
			val := ""
			if i+1 < len(f) {
				val = f[i+1]
			}
			switch f[i] {
			case "from":
				if val != "all" {
					ru.Src = val
				}
			case "to":
				ru.Dst = val
			case "fwmark":
				ru.FwMark = val
			case "iif":
				ru.IIf = val
			case "lookup", "table":
				ru.Table = val
			case "goto":
				ru.Action = "goto " + val
			case "blackhole", "unreachable", "prohibit":
				ru.Action = f[i]
				continue
			default:
				continue
			}
			i++
		}
		out = append(out, ru)
	}
	return out, sc.Err()
}

// ParseRouteGetText parses "ip route get ADDR":
// "203.0.113.2 via 198.51.100.1 dev eth0  src 198.51.100.2".
func ParseRouteGetText(r io.Reader) (dev, gateway, src string, err error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return "", "", "", err
	}
	f := strings.Fields(string(b))
	for i := 0; i+1 < len(f); i++ {
		switch f[i] {
		case "dev":
			dev = f[i+1]
		case "via":
			gateway = f[i+1]
		case "src":
			src = f[i+1]
		}
	}
	if dev == "" {
		return "", "", "", fmt.Errorf("ip route get: no route")
	}
	return dev, gateway, src, nil
}

// ParseIPAddrText parses "ip addr show" (BusyBox or iproute2, one line per
// item or -o's one line per address): "N: NAME[@PEER]: <FLAGS> ..." starts a
// link, "inet ADDR/LEN ..." and "inet6 ADDR/LEN ..." (or "inet ADDR peer
// PEER/LEN") give its addresses; other lines are not read.
func ParseIPAddrText(r io.Reader) ([]LinkAddrs, error) {
	var out []LinkAddrs
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if idx, ok := strings.CutSuffix(f[0], ":"); ok {
			if _, err := strconv.Atoi(idx); err != nil || len(f) < 2 {
				return nil, fmt.Errorf("ip addr: want \"N: NAME: ...\", got %.60q", sc.Text())
			}
			name := strings.TrimSuffix(f[1], ":")
			if i := strings.IndexByte(name, '@'); i >= 0 {
				name = name[:i]
			}
			if name == "" {
				return nil, fmt.Errorf("ip addr: link %s has no name", idx)
			}
			if len(out) == 0 || out[len(out)-1].Name != name { // -o repeats the link on each address
				out = append(out, LinkAddrs{Name: name})
			}
			f = f[2:]
		}
		for i := 0; i+1 < len(f); i++ {
			if f[i] != "inet" && f[i] != "inet6" {
				continue
			}
			if len(out) == 0 {
				return nil, fmt.Errorf("ip addr: an address before any link")
			}
			addr, _, _ := strings.Cut(f[i+1], "/")
			if addr != "" {
				out[len(out)-1].Addrs = append(out[len(out)-1].Addrs, addr)
			}
			break
		}
	}
	return out, sc.Err()
}

// ipTextMark starts the output of a snippet that fell back to text.
const ipTextMark = "@@ip-text"

// CutIPText reports whether out is IPJSONOr's fallback text and returns it
// without the mark.
func CutIPText(out string) (string, bool) {
	rest, ok := strings.CutPrefix(out, ipTextMark+"\n")
	return rest, ok
}

// IPJSONOr is a shell snippet that runs jsonCmd when ip speaks JSON,
// otherwise prints the mark CutIPText finds and runs textCmd (BusyBox ip).
func IPJSONOr(jsonCmd, textCmd string) string {
	return fmt.Sprintf("if ip -j link show dev lo >/dev/null 2>&1; then %s; else echo '%s'; %s; fi", jsonCmd, ipTextMark, textCmd)
}
