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
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/firewall"
	"github.com/wgperf/wgperf/internal/icmplimit"
	"github.com/wgperf/wgperf/internal/probe"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// Def is the ICMP burst, as doctor's targeted probe (listed in internal/probes).
var Def = probe.Def{Name: catalog.ProbeICMPBurst, Raises: Raises,
	Doc:    "one-shot pings against one persistent ping to the health checks' targets, with the ICMP limit counters read around them: whenever health checks are configured (mwan3 track_ip, banIP, an ICMP limit rule)",
	Report: "icmp_burst", Result: reflect.TypeFor[*Result](),
	Schema: "icmp-burst.schema.json#/$defs/result"}

// Config is one experiment on Host.
type Config struct {
	Host    target.Target
	Targets []string // addresses to ping
	Count   int      // pings per target in each mode (default 20)
	Wait    int      // ping -W seconds (default 1)
	// Interface binds the pings to the uplink the health checks use (ping
	// -I): the one whose ICMP limit their replies meet. "" follows the routes.
	Interface string
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
// during the test, with the ICMP limit whose excess it counts.
type CounterGrowth struct {
	firewall.FirewallGrowth
	// Limit is the ICMP rate limit whose excess this counter counts: the rule
	// itself for "limit rate over ... drop", the accept rule before a drop or
	// a drop policy otherwise; nil when the counter counts no limit's drops.
	Limit *facts.FirewallRule `json:"limit,omitempty"`
}

// Result is the experiment's outcome.
type Result struct {
	Host       target.Spec     `json:"host"`
	Targets    []string        `json:"targets"`
	OneShot    Mode            `json:"one_shot"`
	Persistent Mode            `json:"persistent"`
	Grew       []CounterGrowth `json:"counters_grew"`
	// Interface is the uplink the pings were bound to ("" for none).
	Interface string `json:"interface,omitempty"`
	// Background is the host's ICMP before the test, judged against the
	// limiter (nil without a limit or when it could not be watched).
	Background *Background `json:"background,omitempty"`
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
	res := &Result{Host: target.Of(c.Host), Targets: c.Targets, Interface: c.Interface}
	if c.Interface != "" && shell.Iface(c.Interface) != nil {
		return nil, fmt.Errorf("interface %q is not an interface name", c.Interface)
	}
	before, noteBefore := collect.ReadFirewallCounters(ctx, c.Host) // the later read names what grew
	if _, err := c.Host.Run(ctx, "ping", "-c", "1", "-W", "1", "-n", "127.0.0.1"); target.IsNotFound(err) {
		return nil, fmt.Errorf("ping is not installed on %s (apt-get install iputils-ping)", c.Host)
	}
	// Who else pings, and how bursty, before the test's own pings.
	res.Background = watch(ctx, c, before)
	out, err := c.Host.Run(ctx, "sh", "-c", OneShotScriptOn(c.Interface, c.Targets, c.Count, c.Wait))
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
	after, noteAfter := collect.ReadFirewall(ctx, c.Host)
	res.Note = noteBefore + noteAfter
	if before != nil && after != nil {
		res.Grew = Grown(*before, *after)
	}
	if after != nil {
		res.Uncounted = UncountedLimits(*after)
	}
	res.Findings = Findings(res)
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// OneShotScript is a health checker's loop: every ping its own process, back to back.
func OneShotScript(targets []string, count, wait int) string {
	return OneShotScriptOn("", targets, count, wait)
}

// OneShotScriptOn is OneShotScript bound to an interface ("" for none), as
// mwan3track pings through the uplink it checks.
func OneShotScriptOn(iface string, targets []string, count, wait int) string {
	var quoted []string
	for _, t := range targets {
		quoted = append(quoted, shell.Join(t))
	}
	bind := ""
	if iface != "" {
		bind = "-I " + shell.Join(iface) + " "
	}
	return fmt.Sprintf(`i=0; n=0; f=0; while [ $i -lt %d ] && [ $f -lt %d ]; do i=$((i+1)); for t in %s; do n=$((n+1)); ping %s-n -c 1 -W %d "$t" >/dev/null 2>&1 || { echo "FAIL $i $t"; f=$((f+1)); }; done; done; echo "SENT $n"`,
		count, EnoughFailures, strings.Join(quoted, " "), bind, wait)
}

// EnoughFailures ends the one-shot loop early: that many lost replies prove
// the limiter, and each costs the checker's whole wait (-W), so a limiter
// that drops a third of them would otherwise stretch the probe to half a
// minute.
const EnoughFailures = 5

var (
	failRe = regexp.MustCompile(`^FAIL (\d+) (\S+)$`)
	sentRe = regexp.MustCompile(`^SENT (\d+)$`)
)

// ParseOneShot counts the "FAIL i target" lines of OneShotScript, and how
// many pings it sent ("SENT n": fewer than count per target when it stopped
// at EnoughFailures).
func ParseOneShot(r io.Reader, targets []string, count int) Mode {
	m := Mode{Sent: count * len(targets), PerTarget: map[string]int{}}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if f := failRe.FindStringSubmatch(line); f != nil {
			m.Failed++
			m.PerTarget[f[2]]++
		}
		if s := sentRe.FindStringSubmatch(line); s != nil {
			if n, err := strconv.Atoi(s[1]); err == nil && n > 0 && n <= m.Sent {
				m.Sent = n
			}
		}
	}
	m.Failed = min(m.Failed, m.Sent)
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
				args := []string{"-n", "-c", strconv.Itoa(c.Count), "-i", strconv.FormatFloat(persistentInterval.Seconds(), 'f', -1, 64), "-W", strconv.Itoa(c.Wait)}
				if c.Interface != "" {
					args = append(args, "-I", c.Interface)
				}
				out, err = c.Host.Run(ctx, "ping", append(args, addr)...)
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

// Grown lists the rules, chain policies and named counters whose packet
// count rose between two rulesets (firewall.FirewallGrown), each with the ICMP
// limit whose excess it counts (icmplimit.Find on the later ruleset).
func Grown(before, after facts.Firewall) []CounterGrowth {
	limitOf, policyOf := map[string]*facts.FirewallRule{}, map[string]*facts.FirewallRule{}
	for _, l := range icmplimit.Find(after) {
		lim := l.Rule
		switch {
		case l.Counter != nil:
			limitOf[firewall.RuleKey(*l.Counter)] = &lim
		case l.Policy != nil:
			policyOf[firewall.ChainKey(*l.Policy)] = &lim
		}
	}
	var out []CounterGrowth
	for _, g := range firewall.FirewallGrown(before, after) {
		c := CounterGrowth{FirewallGrowth: g}
		switch {
		case g.Rule != nil:
			c.Limit = limitOf[firewall.RuleKey(*g.Rule)]
		case g.Policy != nil:
			c.Limit = policyOf[firewall.ChainKey(*g.Policy)]
		}
		out = append(out, c)
	}
	return out
}

// String names the counter (firewall.FirewallGrowth.String) and the limit
// whose excess it drops.
func (g CounterGrowth) String() string {
	s := g.FirewallGrowth.String()
	switch {
	case g.Limit == nil, g.Rule == nil && g.Policy == nil:
		return s
	case g.Rule != nil && firewall.RuleKey(*g.Limit) == firewall.RuleKey(*g.Rule):
		return s // the limit drops its own excess
	}
	return s + " (drops what " + firewall.DescribeRule(*g.Limit) + " does not accept)"
}
