// Package icmpburst is the multi-WAN case's experiment: N one-shot pings, each its own
// process as mwan3 and similar health checkers run them, against one
// persistent ping of N packets. Failures in the first but not the second point
// at a rate limiter that drops reply bursts; the firewall counters read before
// and after name the rule that grew.
package icmpburst

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/icmplimit"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// Config is one experiment on Host.
type Config struct {
	Host    target.Target
	Targets []string // addresses to ping
	Count   int      // pings per target in each mode (default 20)
	Wait    int      // ping -W seconds (default 1)
}

// Mode is one way of pinging: one-shot processes or one persistent ping.
type Mode struct {
	Sent      int            `json:"sent"`
	Failed    int            `json:"failed"`
	PerTarget map[string]int `json:"failed_per_target"`
}

// MarshalJSON writes no failures per target as {}, never null.
func (m Mode) MarshalJSON() ([]byte, error) {
	type plain Mode
	p := plain(m)
	if p.PerTarget == nil {
		p.PerTarget = map[string]int{}
	}
	return json.Marshal(p)
}

// Rate is the share of pings that failed.
func (m Mode) Rate() float64 {
	if m.Sent == 0 {
		return 0
	}
	return float64(m.Failed) / float64(m.Sent)
}

// CounterGrowth is a firewall rule, chain policy or named counter that grew
// during the test.
type CounterGrowth struct {
	Rule    *facts.FirewallRule  `json:"rule,omitempty"`
	Policy  *facts.FirewallChain `json:"policy,omitempty"`  // a base chain whose policy counter grew (iptables)
	Counter string               `json:"counter,omitempty"` // "family table name" of a named counter
	Packets uint64               `json:"packets"`           // growth during the test
	// Limit is the ICMP rate limit whose excess this counter counts: the rule
	// itself for "limit rate over ... drop", the accept rule before a drop or
	// a drop policy otherwise; nil when the counter counts no limit's drops.
	Limit *facts.FirewallRule `json:"limit,omitempty"`
}

// Result is the experiment's outcome.
type Result struct {
	Host       string          `json:"host"`
	Targets    []string        `json:"targets"`
	OneShot    Mode            `json:"one_shot"`
	Persistent Mode            `json:"persistent"`
	Grew       []CounterGrowth `json:"counters_grew"`
	// Uncounted are ICMP limits whose excess is dropped where no counter
	// counts it (an nft drop rule without "counter", an nft drop policy):
	// drops there leave no trace in Grew.
	Uncounted []Uncounted       `json:"uncounted_limits,omitempty"`
	Note      string            `json:"note,omitempty"` // why counters are missing
	Seconds   float64           `json:"seconds"`
	Findings  []finding.Finding `json:"findings"`
}

// MarshalJSON writes empty lists as [], never null.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	p := plain(r)
	if p.Targets == nil {
		p.Targets = []string{}
	}
	if p.Grew == nil {
		p.Grew = []CounterGrowth{}
	}
	if p.Findings == nil {
		p.Findings = []finding.Finding{}
	}
	return json.Marshal(p)
}

// Run does the experiment: counters, one-shot pings, persistent pings, counters.
func Run(ctx context.Context, c Config) (*Result, error) {
	if len(c.Targets) == 0 {
		return nil, fmt.Errorf("no targets to ping")
	}
	if c.Count <= 0 {
		c.Count = 20
	}
	if c.Wait <= 0 {
		c.Wait = 1
	}
	start := time.Now()
	res := &Result{Host: c.Host.String(), Targets: c.Targets}
	before, noteBefore := ruleset(ctx, c.Host)
	if _, err := c.Host.Run(ctx, "ping", "-c", "1", "-W", "1", "-n", "127.0.0.1"); target.IsNotFound(err) {
		return nil, fmt.Errorf("ping is not installed on %s (apt-get install iputils-ping)", c.Host)
	}
	out, err := c.Host.Run(ctx, "sh", "-c", OneShotScript(c.Targets, c.Count, c.Wait))
	if err != nil {
		return nil, err
	}
	res.OneShot = ParseOneShot(bytes.NewReader(out), c.Targets, c.Count)
	// The one-shot loop leaves a limiter's bucket empty: the persistent ping's
	// first replies would pay for the burst before them.
	if err := sleep(ctx, Settle); err != nil {
		return nil, err
	}
	res.Persistent, err = persistent(ctx, c)
	if err != nil {
		return nil, err
	}
	after, noteAfter := ruleset(ctx, c.Host)
	res.Note = noteBefore + noteAfter
	if before != nil && after != nil {
		res.Grew = Grown(before.fw, after.fw)
	}
	if after != nil {
		res.Uncounted = UncountedLimits(after.fw)
	}
	res.Findings = Findings(res)
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// OneShotScript is a health checker's loop: every ping its own process, back to back.
func OneShotScript(targets []string, count, wait int) string {
	var quoted []string
	for _, t := range targets {
		quoted = append(quoted, shell.Join(t))
	}
	return fmt.Sprintf(`i=0; while [ $i -lt %d ]; do i=$((i+1)); for t in %s; do ping -n -c 1 -W %d "$t" >/dev/null 2>&1 || echo "FAIL $i $t"; done; done`,
		count, strings.Join(quoted, " "), wait)
}

var failRe = regexp.MustCompile(`^FAIL (\d+) (\S+)$`)

// ParseOneShot counts the "FAIL i target" lines of OneShotScript.
func ParseOneShot(r io.Reader, targets []string, count int) Mode {
	m := Mode{Sent: count * len(targets), PerTarget: map[string]int{}}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if f := failRe.FindStringSubmatch(strings.TrimSpace(sc.Text())); f != nil {
			m.Failed++
			m.PerTarget[f[2]]++
		}
	}
	return m
}

var statsRe = regexp.MustCompile(`(\d+) packets transmitted, (\d+) (?:packets )?received`)

// ParsePingStats reads "N packets transmitted, M received" from ping's summary.
func ParsePingStats(r io.Reader) (sent, received int, err error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return 0, 0, err
	}
	m := statsRe.FindSubmatch(b)
	if m == nil {
		return 0, 0, fmt.Errorf("ping printed no statistics")
	}
	sent, _ = strconv.Atoi(string(m[1]))
	received, _ = strconv.Atoi(string(m[2]))
	return sent, received, nil
}

// Settle is the pause between the one-shot loop and the persistent ping, for
// a limiter to refill its burst (5 packets at 2.5/s and faster).
const Settle = 2 * time.Second

// persistentInterval is the persistent ping's -i: one echo per target every 200 ms.
const persistentInterval = 200 * time.Millisecond

// persistent runs one "ping -c N -i 0.2" per target, at the same time but
// started apart, so the targets' replies interleave (a steady checker) rather
// than arrive together as a burst.
func persistent(ctx context.Context, c Config) (Mode, error) {
	m := Mode{PerTarget: map[string]int{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var firstErr error
	for i, t := range c.Targets {
		wg.Add(1)
		go func(addr string, offset time.Duration) {
			defer wg.Done()
			var out []byte
			err := sleep(ctx, offset)
			if err == nil {
				out, err = c.Host.Run(ctx, "ping", "-n", "-c", strconv.Itoa(c.Count), "-i", strconv.FormatFloat(persistentInterval.Seconds(), 'f', -1, 64), "-W", strconv.Itoa(c.Wait), addr)
			}
			sent, recv, perr := ParsePingStats(bytes.NewReader(out))
			mu.Lock()
			defer mu.Unlock()
			if perr != nil {
				if err == nil {
					err = perr
				}
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			m.Sent += sent
			m.Failed += sent - recv
			m.PerTarget[addr] = sent - recv
		}(t, persistentInterval*time.Duration(i)/time.Duration(len(c.Targets)))
	}
	wg.Wait()
	return m, firstErr
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type snapshot struct{ fw facts.Firewall }

// ruleset reads nft's ruleset and, where iptables is installed, the
// counters iptables-save prints (rule positions and chain policy counters,
// which nft does not show), joined as the collector joins them.
func ruleset(ctx context.Context, t target.Target) (*snapshot, string) {
	var nft *facts.Firewall
	note := ""
	out, err := t.Run(ctx, "nft", "-j", "list", "ruleset")
	switch {
	case target.IsNotFound(err):
		note = "nft not installed. "
	case err != nil:
		note = fmt.Sprintf("nft -j list ruleset failed: %v. ", err)
	default:
		fw, err := collect.ParseNftFirewall(bytes.NewReader(out))
		if err != nil {
			note = fmt.Sprintf("nft ruleset unreadable: %v. ", err)
		} else {
			withTexts(ctx, t, &fw)
			nft = &fw
		}
	}
	var ipt collect.IptablesView
	for _, fam := range []struct{ tool, family string }{{"iptables-save", "ip"}, {"ip6tables-save", "ip6"}} {
		out, err := t.Run(ctx, fam.tool, "-c")
		if err != nil {
			continue // not installed, or no iptables: nft's view is all there is
		}
		rules, chains, nf, err := collect.ParseIptablesSave(bytes.NewReader(out), fam.family)
		if err != nil {
			note += fmt.Sprintf("%s unreadable: %v. ", fam.tool, err)
			continue
		}
		ipt.Rules, ipt.Chains, ipt.NfBackend = append(ipt.Rules, rules...), append(ipt.Chains, chains...), ipt.NfBackend || nf
	}
	if nft == nil && len(ipt.Rules) == 0 {
		return nil, note + "no firewall counters. "
	}
	return &snapshot{collect.MergeFirewall(nft, ipt)}, note
}

// Uncounted is an ICMP limit and what drops its excess without counting it.
type Uncounted struct {
	Limit  facts.FirewallRule   `json:"limit"`
	Drop   *facts.FirewallRule  `json:"drop,omitempty"`   // the drop or reject rule
	Policy *facts.FirewallChain `json:"policy,omitempty"` // or the chain whose policy drops
}

// UncountedLimits lists the ICMP limits of fw whose drops nothing counts.
func UncountedLimits(fw facts.Firewall) []Uncounted {
	var out []Uncounted
	for _, l := range icmplimit.Find(fw) {
		if !l.Counted {
			out = append(out, Uncounted{Limit: l.Rule, Drop: l.Drop, Policy: l.Policy})
		}
	}
	return out
}

// withTexts fills the rules' text from "nft -a list ruleset", which the
// fixes quote; without it they show where to look instead.
func withTexts(ctx context.Context, t target.Target, fw *facts.Firewall) {
	out, err := t.Run(ctx, "nft", "-a", "list", "ruleset")
	if err != nil {
		return
	}
	texts, err := collect.ParseNftText(bytes.NewReader(out))
	if err != nil {
		return
	}
	for i, r := range fw.Rules {
		fw.Rules[i].Text = texts[collect.NftRuleKey(r.Family, r.Table, r.Chain, strconv.Itoa(r.Handle))]
	}
}

// ruleKey names a rule across two reads: nft by handle, iptables by position.
func ruleKey(r facts.FirewallRule) string {
	return fmt.Sprintf("%s %s %s %s %d/%d", r.Backend, r.Family, r.Table, r.Chain, r.Handle, r.Position)
}

func chainKey(c facts.FirewallChain) string {
	return fmt.Sprintf("%s %s %s %s", c.Backend, c.Family, c.Table, c.Name)
}

// Grown lists the rules, chain policies and named counters whose packet
// count rose between two rulesets, each with the ICMP limit whose excess it
// counts (icmplimit.Find on the later ruleset). A named counter is listed
// through the rule that feeds it (which names the counter and carries the
// limit), not a second time on its own.
func Grown(before, after facts.Firewall) []CounterGrowth {
	prev := map[string]uint64{}
	for _, r := range before.Rules {
		prev[ruleKey(r)] = r.Packets
	}
	prevP := map[string]uint64{}
	for _, c := range before.Chains {
		prevP[chainKey(c)] = c.Packets
	}
	prevC := map[string]uint64{}
	for _, c := range before.Counters {
		prevC[c.Family+" "+c.Table+" "+c.Name] = c.Packets
	}
	// Which limit each counter, or policy, counts the drops of.
	limitOf, policyOf := map[string]*facts.FirewallRule{}, map[string]*facts.FirewallRule{}
	for _, l := range icmplimit.Find(after) {
		lim := l.Rule
		switch {
		case l.Counter != nil:
			limitOf[ruleKey(*l.Counter)] = &lim
		case l.Policy != nil:
			policyOf[chainKey(*l.Policy)] = &lim
		}
	}
	var out []CounterGrowth
	fed := map[string]bool{} // named counters a grown rule already stands for
	for _, r := range after.Rules {
		p, ok := prev[ruleKey(r)]
		if !ok || !r.HasCounter || r.Packets <= p {
			continue
		}
		r := r
		g := CounterGrowth{Rule: &r, Packets: r.Packets - p, Limit: limitOf[ruleKey(r)]}
		if r.CounterName != "" {
			g.Counter = r.Family + " " + r.Table + " " + r.CounterName
			fed[g.Counter] = true
		}
		out = append(out, g)
	}
	for _, c := range after.Chains {
		p, ok := prevP[chainKey(c)]
		if !ok || !c.HasCounter || c.Policy != "drop" || c.Packets <= p {
			continue
		}
		c := c
		out = append(out, CounterGrowth{Policy: &c, Packets: c.Packets - p, Limit: policyOf[chainKey(c)]})
	}
	for _, c := range after.Counters {
		k := c.Family + " " + c.Table + " " + c.Name
		if p, ok := prevC[k]; ok && c.Packets > p && !fed[k] {
			out = append(out, CounterGrowth{Counter: k, Packets: c.Packets - p})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Packets > out[j].Packets })
	return out
}

// String names the counter: the rule (with its limit), the chain policy or
// the named counter, and the limit whose excess it drops.
func (g CounterGrowth) String() string {
	var s string
	switch {
	case g.Policy != nil:
		c := g.Policy
		s = fmt.Sprintf("%s %s %s policy %s", c.Family, c.Table, c.Name, strings.ToUpper(c.Policy))
	case g.Rule != nil:
		s = describeRule(*g.Rule)
	default:
		return g.Counter
	}
	if g.Limit != nil && (g.Rule == nil || ruleKey(*g.Limit) != ruleKey(*g.Rule)) {
		s += " (drops what " + describeRule(*g.Limit) + " does not accept)"
	}
	return s
}

// describeRule names a rule in its chain with its text, or its limit.
func describeRule(r facts.FirewallRule) string {
	s := fmt.Sprintf("%s %s %s handle %d", r.Family, r.Table, r.Chain, r.Handle)
	if r.Backend == "iptables" {
		s = fmt.Sprintf("%s %s %s rule %d", r.Family, r.Table, r.Chain, r.Position)
	}
	switch {
	case r.Text != "":
		s += ": " + r.Text
	case r.Limit != nil:
		over := ""
		if r.Limit.Over {
			over = "over "
		}
		s += fmt.Sprintf(": limit rate %s%d/%s burst %d %s", over, r.Limit.Rate, r.Limit.Per, r.Limit.Burst, r.Limit.Unit)
	}
	if r.CounterName != "" {
		s += " (counter " + r.CounterName + ")"
	}
	return s
}
