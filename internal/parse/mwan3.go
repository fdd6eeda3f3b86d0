package parse

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
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
