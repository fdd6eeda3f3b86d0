package icmpburst

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/firewall"
	"github.com/wgperf/wgperf/internal/icmplimit"
)

// The health checks are rarely the only pingers on a router: a monitoring
// agent (the multi-WAN case's telegraf pinged six targets ten times every
// half second), cron jobs, other mwan3 members. Their replies meet the same
// ICMP limiter, and a limiter whose burst they use up drops the health
// checks' replies that follow. So before its own pings the probe watches the
// host's ICMP for a few seconds: how many echo replies arrive and how bursty,
// and which processes hold an ICMP socket.

// watchSamples of watchEvery each: two seconds, a monitoring agent's period
// or two.
const (
	watchSamples = 20
	watchEvery   = "0.1"
)

// watchScript samples Icmp InEchoReps and OutEchos every watchEvery
// seconds ("S in out"), and every second the processes holding raw (ICMP)
// sockets as ss names them ("P ..."; nothing without ss).
var watchScript = fmt.Sprintf(`i=0; while [ $i -lt %d ]; do i=$((i+1))
awk '/^Icmp:/{if(!h){split($0,k);h=1}else{for(j=2;j<=NF;j++)v[k[j]]=$j; print "S", v["InEchoReps"], v["OutEchos"]}}' /proc/net/snmp
[ $((i %% 10)) -eq 1 ] && ss -w -a -n -p 2>/dev/null | sed -n 's/.*users:((\(.*\)))$/P \1/p'
sleep %s
done`, watchSamples, watchEvery)

// Background is what the host's ICMP did while nothing of the probe ran.
type Background struct {
	Seconds float64 `json:"seconds"`
	// Replies are the echo replies that arrived, Requests the echo requests
	// the host sent; PerSecond the replies' rate and Burst the most that
	// arrived within one sample (a tenth of a second).
	Replies   int64    `json:"replies"`
	Requests  int64    `json:"requests"`
	PerSecond float64  `json:"per_second"`
	Burst     int64    `json:"burst"`
	Pingers   []Pinger `json:"pingers"`
	Limit     *Limiter `json:"limit,omitempty"`
	Checks    int      `json:"checks"` // the health checks' replies at once: one per target
	Fits      bool     `json:"fits"`
	Verdict   string   `json:"verdict"`
}

// Pinger is a process that held an ICMP (raw) socket, and in how many of the
// once-a-second looks.
type Pinger struct {
	Command string `json:"command"`
	PID     int    `json:"pid"`
	Seen    int    `json:"seen"`
}

// Limiter is the ICMP limit the replies meet, in packets.
type Limiter struct {
	Rule      string  `json:"rule"`
	PerSecond float64 `json:"per_second"`
	Burst     uint64  `json:"burst"`
}

var userRe = regexp.MustCompile(`"([^"]{1,64})",pid=(\d+)`)

// ParseWatch reads watchScript's output. It is pure.
func ParseWatch(r io.Reader) Background {
	b := Background{Pingers: []Pinger{}}
	var prevIn, prevOut int64 = -1, -1
	n := 0 // samples with a reading before them
	seen := map[string]*Pinger{}
	var order []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 3 && f[0] == "S":
			in, err1 := strconv.ParseInt(f[1], 10, 64)
			out, err2 := strconv.ParseInt(f[2], 10, 64)
			if err1 != nil || err2 != nil {
				continue
			}
			if prevIn >= 0 && in >= prevIn && out >= prevOut {
				d := in - prevIn
				b.Replies += d
				b.Requests += out - prevOut
				b.Burst = max(b.Burst, d)
				n++
			}
			prevIn, prevOut = in, out
		case len(f) >= 2 && f[0] == "P":
			for _, m := range userRe.FindAllStringSubmatch(sc.Text(), -1) {
				pid, _ := strconv.Atoi(m[2])
				key := m[1] + "/" + m[2]
				if seen[key] == nil {
					seen[key] = &Pinger{Command: m[1], PID: pid}
					order = append(order, key)
				}
				seen[key].Seen++
			}
		}
	}
	for _, k := range order {
		b.Pingers = append(b.Pingers, *seen[k])
	}
	b.Seconds = float64(n) * 0.1
	if b.Seconds > 0 {
		b.PerSecond = float64(b.Replies) / b.Seconds
	}
	return b
}

// limiterOf is the first ICMP limit of fw counted in packets per time, as
// the replies meet it.
func limiterOf(fw *facts.Firewall) *Limiter {
	if fw == nil {
		return nil
	}
	for _, l := range icmplimit.Find(*fw) {
		lim := l.Rule.Limit
		if lim == nil || (lim.Unit != "" && lim.Unit != "packets") {
			continue
		}
		per := map[string]float64{"second": 1, "minute": 60, "hour": 3600, "day": 86400}[lim.Per]
		if per == 0 {
			continue
		}
		return &Limiter{Rule: firewall.DescribeRule(l.Rule), PerSecond: float64(lim.Rate) / per, Burst: lim.Burst}
	}
	return nil
}

// judge says whether the health checks' bursts fit the limiter beside what
// the other pingers send: the checks' replies arrive together, one per
// target, on top of whatever the others' last burst left. It is pure.
func (b *Background) judge(lim *Limiter, checks int) {
	b.Limit, b.Checks = lim, checks
	if lim == nil {
		b.Fits, b.Verdict = true, "no ICMP limit to fit"
		return
	}
	others := fmt.Sprintf("other pingers' replies: %.1f/s, up to %d within a tenth of a second", b.PerSecond, b.Burst)
	if len(b.Pingers) > 0 {
		var names []string
		for _, p := range b.Pingers {
			names = append(names, fmt.Sprintf("%s (pid %d)", p.Command, p.PID))
		}
		slices.Sort(names)
		others += " (ICMP sockets: " + strings.Join(names, ", ") + ")"
	}
	limit := fmt.Sprintf("the limit lets %.0f/s through with a burst of %d", lim.PerSecond, lim.Burst)
	switch {
	case b.PerSecond > lim.PerSecond:
		b.Verdict = others + "; " + limit + ": they alone exceed its rate"
	case uint64(b.Burst) > lim.Burst:
		b.Verdict = others + "; " + limit + ": their bursts alone exceed it"
	case uint64(b.Burst)+uint64(checks) > lim.Burst:
		b.Verdict = fmt.Sprintf("%s; %s: with the health checks' %d at once, %d replies can meet a burst of %d", others, limit, checks, b.Burst+int64(checks), lim.Burst)
	default:
		b.Fits = true
		b.Verdict = fmt.Sprintf("%s; %s: with the health checks' %d at once they fit", others, limit, checks)
	}
}

// watch samples the host's ICMP before the probe's own pings and judges it
// against the limiter of the firewall read before.
func watch(ctx context.Context, c Config, fw *facts.Firewall) *Background {
	lim := limiterOf(fw)
	if lim == nil {
		return nil
	}
	out, err := c.Host.Run(ctx, "sh", "-c", watchScript)
	if err != nil {
		return nil
	}
	b := ParseWatch(strings.NewReader(string(out)))
	b.judge(lim, len(c.Targets))
	return &b
}
