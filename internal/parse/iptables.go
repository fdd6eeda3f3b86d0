package parse

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/shell"
)

// builtinHooks maps iptables' built-in chains to the netfilter hook they sit on.
var builtinHooks = map[string]string{
	"PREROUTING": "prerouting", "INPUT": "input", "FORWARD": "forward", "OUTPUT": "output", "POSTROUTING": "postrouting",
}

// ParseIptablesSave parses "iptables-save -c" (family "ip") or
// "ip6tables-save -c" (family "ip6"): rules in chain order, each with its
// position, and the chains with their policy and its counter
// (":INPUT DROP [104:8736]"). It also reports whether the rules came from the
// nf_tables backend, in which case "nft list ruleset" shows the same tables again.
func ParseIptablesSave(r io.Reader, family string) (rules []facts.FirewallRule, chains []facts.FirewallChain, nfBackend bool, err error) {
	rules = []facts.FirewallRule{}
	var table string
	positions := map[string]int{} // table chain -> rules seen
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line == "COMMIT":
		case strings.HasPrefix(line, "#"):
			if strings.Contains(line, "(nf_tables)") {
				nfBackend = true
			}
		case strings.HasPrefix(line, "*"):
			table = line[1:]
		case strings.HasPrefix(line, ":"):
			c, err := parseIptablesChain(line)
			if err != nil {
				return nil, nil, false, fmt.Errorf("%s line %d: %v", saveTool(family), n, err)
			}
			c.Family, c.Table = family, table
			chains = append(chains, c)
		default:
			rule, err := parseIptablesRule(line)
			if err != nil {
				return nil, nil, false, fmt.Errorf("%s line %d: %v", saveTool(family), n, err)
			}
			if table == "" {
				return nil, nil, false, fmt.Errorf("%s line %d: rule before any *table", saveTool(family), n)
			}
			rule.Family, rule.Table = family, table
			positions[table+" "+rule.Chain]++
			rule.Position = positions[table+" "+rule.Chain]
			rules = append(rules, rule)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, false, fmt.Errorf("%s: %w", saveTool(family), err)
	}
	return rules, chains, nfBackend, nil
}

// parseIptablesChain reads ":CHAIN POLICY [packets:bytes]"; a user chain's
// policy is "-".
func parseIptablesChain(line string) (facts.FirewallChain, error) {
	f := strings.Fields(line[1:])
	if len(f) < 2 || f[0] == "" {
		return facts.FirewallChain{}, fmt.Errorf("bad chain line %q", line)
	}
	c := facts.FirewallChain{Backend: "iptables", Name: f[0], Hook: builtinHooks[f[0]]}
	if f[1] != "-" {
		c.Policy = strings.ToLower(f[1])
	}
	if len(f) >= 3 && c.Hook != "" {
		p, b, ok := strings.Cut(strings.Trim(f[2], "[]"), ":")
		var perr, berr error
		c.Packets, perr = strconv.ParseUint(p, 10, 64)
		c.Bytes, berr = strconv.ParseUint(b, 10, 64)
		if !ok || perr != nil || berr != nil {
			return c, fmt.Errorf("bad policy counter %q", f[2])
		}
		c.HasCounter = true
	}
	return c, nil
}

func saveTool(family string) string {
	if family == "ip6" {
		return "ip6tables-save"
	}
	return "iptables-save"
}

// parseIptablesRule reads one "[packets:bytes] -A CHAIN ..." line.
func parseIptablesRule(line string) (facts.FirewallRule, error) {
	rule := facts.FirewallRule{Backend: "iptables"}
	if strings.HasPrefix(line, "[") {
		end := strings.IndexByte(line, ']')
		if end < 0 {
			return rule, fmt.Errorf("unterminated counter %q", line)
		}
		p, b, ok := strings.Cut(line[1:end], ":")
		var perr, berr error
		rule.Packets, perr = strconv.ParseUint(p, 10, 64)
		rule.Bytes, berr = strconv.ParseUint(b, 10, 64)
		if !ok || perr != nil || berr != nil {
			return rule, fmt.Errorf("bad counter %q", line[:end+1])
		}
		rule.HasCounter = true
		line = strings.TrimSpace(line[end+1:])
	}
	args, err := splitShell(line)
	if err != nil {
		return rule, err
	}
	if len(args) < 2 || args[0] != "-A" {
		return rule, fmt.Errorf("want \"-A CHAIN ...\", got %q", line)
	}
	rule.Chain = args[1]
	rule.Hook = builtinHooks[rule.Chain]
	rule.Text = line
	not := ""
	var module, target string
	for i := 2; i < len(args); i++ {
		a := args[i]
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch a {
		case "!":
			not = "!"
			continue
		case "-i", "--in-interface":
			rule.IIf = not + next()
		case "-o", "--out-interface":
			rule.OIf = not + next()
		case "-p", "--protocol":
			rule.Protocol = not + next()
		case "-m", "--match":
			module = next()
		case "-j", "--jump", "-g", "--goto":
			target = next()
			switch target {
			case "ACCEPT", "DROP", "REJECT", "RETURN", "QUEUE":
				rule.Verdict = strings.ToLower(target)
			case "NOTRACK":
				rule.NoTrack = true
			case "TCPMSS", "CT", "LOG", "MARK", "CONNMARK", "MASQUERADE", "SNAT", "DNAT":
				// non-terminal or NAT targets: details follow as options
			default:
				verb := "jump "
				if a == "-g" || a == "--goto" {
					verb = "goto "
				}
				rule.Verdict = verb + target
			}
		case "--notrack":
			if target == "CT" {
				rule.NoTrack = true
			}
		case "--clamp-mss-to-pmtu":
			rule.MSSClamp = "pmtu"
		case "--set-mss":
			rule.MSSClamp = next()
		case "--limit", "--hashlimit-upto", "--hashlimit-above", "--hashlimit":
			lim, err := parseIptablesRate(next())
			if err != nil {
				return rule, err
			}
			lim.Over = a == "--hashlimit-above"
			if rule.Limit != nil {
				lim.Burst = rule.Limit.Burst
			}
			rule.Limit = lim
		case "--limit-burst", "--hashlimit-burst":
			v := next()
			burst, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return rule, fmt.Errorf("bad burst %q", v)
			}
			if rule.Limit == nil {
				rule.Limit = &facts.RateLimit{Unit: "packets"}
			}
			rule.Limit.Burst = burst
		}
		not = ""
	}
	// iptables' limit match defaults to a burst of 5 and does not print it.
	if rule.Limit != nil && rule.Limit.Burst == 0 && module == "limit" {
		rule.Limit.Burst = 5
	}
	if rule.Protocol == "ipv6-icmp" {
		rule.Protocol = "icmpv6"
	}
	return rule, nil
}

// parseIptablesRate reads "25/sec", "10/min", "100/hour", "1mb/s" (hashlimit bytes).
func parseIptablesRate(s string) (*facts.RateLimit, error) {
	num, per, ok := strings.Cut(s, "/")
	if !ok {
		per = "second" // hashlimit: a bare number is per second
	}
	lim := &facts.RateLimit{Unit: "packets"}
	mult := uint64(1)
	lower := strings.ToLower(num)
	for _, u := range []struct {
		suffix string
		mult   uint64
	}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"b", 1}} {
		if strings.HasSuffix(lower, u.suffix) {
			lim.Unit, mult, num = "bytes", u.mult, num[:len(num)-len(u.suffix)]
			break
		}
	}
	rate, err := strconv.ParseUint(num, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("bad rate %q", s)
	}
	lim.Rate = rate * mult
	switch per {
	case "s", "sec", "second":
		lim.Per = "second"
	case "m", "min", "minute":
		lim.Per = "minute"
	case "h", "hour":
		lim.Per = "hour"
	case "d", "day":
		lim.Per = "day"
	default:
		return nil, fmt.Errorf("bad rate unit in %q", s)
	}
	return lim, nil
}

// splitShell splits an iptables-save line into words; iptables-save quotes
// arguments with spaces ("--comment \"a b\"") using double quotes and backslashes.
func splitShell(s string) ([]string, error) { return splitWords(s, '"') }

// splitWords splits s into words the way a POSIX shell does for one kind of quote.
func splitWords(s string, quote byte) ([]string, error) { return shell.Split(s, quote) }
