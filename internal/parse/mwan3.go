package parse

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/facts"
)

// mwan3Check matches mwan3track's failed health checks, e.g.
// `Wed Feb  4 21:00:12 2026 user.notice mwan3track[3121]: Check (ping) failed for target "8.8.8.8" on interface wan (eth1). Current score: 10`.
var mwan3Check = regexp.MustCompile(`^(\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}) \S+ mwan3track\[\d+\]: Check \(\w+\) failed for target "([^"]{1,255})" on interface (\S+) \(([^)]*)\)\. Current score: (\d{1,4})`)

// ParseMwan3Checks sums mwan3track's failed health checks in logread output
// per interface: how many, which targets, the lowest score, first and last
// (local time as printed, labelled UTC, as ParseMwan3Events keeps it). A
// router logs thousands of them a day; the sums are what the checks need.
func ParseMwan3Checks(r io.Reader) ([]facts.HealthChecks, error) {
	out := []facts.HealthChecks{}
	at := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		m := mwan3Check.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		ts, err := time.Parse("Mon Jan _2 15:04:05 2006", m[1])
		if err != nil {
			return nil, fmt.Errorf("logread: bad time %q: %v", m[1], err)
		}
		score, _ := strconv.Atoi(m[5])
		i, ok := at[m[3]]
		if !ok {
			i = len(out)
			at[m[3]] = i
			out = append(out, facts.HealthChecks{Interface: m[3], Device: m[4], Targets: []string{}, MinScore: score, First: ts})
		}
		h := &out[i]
		h.Failed++
		h.MinScore = min(h.MinScore, score)
		if ts.Before(h.First) {
			h.First = ts
		}
		if ts.After(h.Last) {
			h.Last = ts
		}
		if !slices.Contains(h.Targets, m[2]) {
			h.Targets = append(h.Targets, m[2])
			slices.Sort(h.Targets)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("logread: %w", err)
	}
	return out, nil
}

// mwan3Uplink matches an uplink's line in "mwan3 status" as mwan3 has printed
// it over the years: " interface wan is online and tracking is active (online
// 60h:53m:10s, uptime 1485h:25m:03s)", " interface wan is online 00h:02m:18s,
// uptime 00h:03m:31s and tracking is active", " interface wanb is offline and
// tracking is down (13)".
var (
	mwan3Uplink   = regexp.MustCompile(`^\s*interface ([A-Za-z0-9_.-]{1,64}) is ([a-z]{1,16})\b`)
	mwan3Tracking = regexp.MustCompile(`\btracking is ([a-z]{1,16})\b`)
	mwan3Online   = regexp.MustCompile(`\bonline (\d{1,7})h:(\d{1,2})m(?::(\d{1,2})s)?`)
	mwan3Uptime   = regexp.MustCompile(`\buptime (\d{1,7})h:(\d{1,2})m(?::(\d{1,2})s)?`)
	// a policy's name line ("balanced:"), with its shares on the same line in
	// a condensed paste ("fiber_5g_backup: wan (100%)")
	mwan3Policy = regexp.MustCompile(`^([A-Za-z0-9_]{1,64}):(.*)$`)
	mwan3Share  = regexp.MustCompile(`(?:^|\s)([A-Za-z0-9_.-]{1,64}) \((\d{1,3})%\)`)
)

// ParseMwan3Status reads the uplinks' states and the policies' shares out of
// "mwan3 status". Policies are read under "Current ipv4/ipv6 policies:", or
// anywhere a name line carries shares; the other sections are skipped.
func ParseMwan3Status(r io.Reader) ([]facts.Mwan3Uplink, []facts.Mwan3Policy, error) {
	var uplinks []facts.Mwan3Uplink
	var policies []facts.Mwan3Policy
	family := "" // of the policies section being read; "" outside one
	var current *facts.Mwan3Policy
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := mwan3Uplink.FindStringSubmatch(line); m != nil {
			u := facts.Mwan3Uplink{Interface: m[1], Status: m[2], Online: hms(mwan3Online, line), Uptime: hms(mwan3Uptime, line)}
			if t := mwan3Tracking.FindStringSubmatch(line); t != nil {
				u.Tracking = t[1]
			}
			uplinks = append(uplinks, u)
			continue
		}
		indented := strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")
		if !indented {
			current = nil
			if line == "Current ipv4 policies:" || line == "Current ipv6 policies:" {
				family = strings.Fields(line)[1]
				continue
			}
			m := mwan3Policy.FindStringSubmatch(line)
			if m == nil {
				family = ""
				continue
			}
			shares := mwan3Shares(m[2])
			if family == "" && len(shares) == 0 {
				continue
			}
			policies = append(policies, facts.Mwan3Policy{Name: m[1], Family: family, Shares: shares})
			current = &policies[len(policies)-1]
			continue
		}
		if current != nil {
			current.Shares = append(current.Shares, mwan3Shares(line)...)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("mwan3 status: %w", err)
	}
	return uplinks, policies, nil
}

// mwan3Shares are the "wan (50%)" pairs in s.
func mwan3Shares(s string) []facts.Mwan3Share {
	out := []facts.Mwan3Share{}
	for _, m := range mwan3Share.FindAllStringSubmatch(s, -1) {
		pct, _ := strconv.Atoi(m[2])
		if pct <= 100 {
			out = append(out, facts.Mwan3Share{Interface: m[1], Percent: pct})
		}
	}
	return out
}

// hms is the duration re finds in line ("60h:53m:10s", "83h:06m") in
// seconds, 0 when absent.
func hms(re *regexp.Regexp, line string) int64 {
	m := re.FindStringSubmatch(line)
	if m == nil {
		return 0
	}
	h, _ := strconv.ParseInt(m[1], 10, 64)
	mi, _ := strconv.ParseInt(m[2], 10, 64)
	sec, _ := strconv.ParseInt(m[3], 10, 64)
	return h*3600 + mi*60 + sec
}
