package collect

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/openwrt"
	"github.com/wgperf/wgperf/internal/target"
)

// Options tune what Collect reads.
type Options struct {
	// Timeout bounds the whole collection; 0 means 30 s.
	Timeout time.Duration
	// SkipFirewall leaves out nft, iptables and conntrack (large rulesets are slow to dump).
	SkipFirewall bool
	// Now stamps the snapshot; nil means time.Now.
	Now func() time.Time
}

// MaxReadBytes bounds what one collection reads from a host, all commands
// together: the snapshot it makes must stay under document.MaxBytes to be
// read back, and real hosts print a few MiB at most.
const MaxReadBytes = 64 << 20

// Collect reads everything wgperf knows how to read from t. It fails only when
// t cannot be reached at all; every other problem becomes a Note.
func Collect(ctx context.Context, t target.Target, opts Options) (*facts.Snapshot, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	// A host that prints without end costs a collection MaxReadBytes at
	// most, besides target.MaxOutput per command.
	ctx = target.WithReadBudget(ctx, MaxReadBytes)

	// Over ssh every command of the collection runs in one remote shell:
	// one ssh process and session instead of one per command.
	t, closeShell := target.Shell(t)
	defer closeShell()
	// One cheap command proves the target answers before anything else runs.
	kernel, err := t.Run(ctx, "uname", "-r")
	if err != nil {
		return nil, unreachable(t, err)
	}
	c := &collector{t: t, snap: &facts.Snapshot{
		SchemaVersion: facts.SchemaVersion,
		Host:          target.Of(t),
		CollectedAt:   now().UTC(),
		System:        facts.System{Kernel: strings.TrimSpace(string(kernel))},
		WireGuard:     []facts.WGInterface{},
		Links:         []facts.Link{},
		Routes:        []facts.Route{},
		Rules:         []facts.RouteRule{},
		Endpoints:     []facts.EndpointRoute{},
		Sysctls:       map[string]string{},
		Softnet:       []facts.SoftnetCPU{},
		CPU:           []facts.CPUTimes{},
		IRQs:          []facts.IRQ{},
		Firewall:      facts.Firewall{Rules: []facts.FirewallRule{}, Counters: []facts.NamedCounter{}},
		Notes:         []facts.Note{},
	}}

	groups := batches(opts.SkipFirewall)
	results := make([]map[string]cmdResult, len(groups))
	var wg sync.WaitGroup
	for i, g := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := runBatch(ctx, t, g)
			if err != nil {
				c.note("sh", "could not run the collection script: "+oneLine(err))
			}
			results[i] = res
		}()
	}
	wg.Wait()
	all := map[string]cmdResult{}
	for _, r := range results {
		for k, v := range r {
			all[k] = v
		}
	}
	c.res = all
	c.assemble()
	// Endpoint routes depend on the WireGuard dump and the link list: one more round trip.
	c.routeEndpoints(ctx)
	// CPU quotas: the cgroups' directories are known once the processes are.
	c.cpuLimits(ctx)
	sort.Slice(c.snap.Notes, func(i, j int) bool { return c.snap.Notes[i].Source < c.snap.Notes[j].Source })
	return c.snap, nil
}

// unreachable turns the probe's failure into one line that names the target
// (and the command, when the host answered with too much).
func unreachable(t target.Target, err error) error {
	var te *target.Error
	if errors.Is(err, target.ErrOutputTooLarge) && errors.As(err, &te) {
		return fmt.Errorf("%s: %s: %v", t, te.Command, te.Err)
	}
	if errors.As(err, &te) {
		msg := strings.TrimSpace(te.Stderr)
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = strings.TrimSpace(msg[i+1:])
		}
		if msg == "" && te.Err != nil {
			msg = te.Err.Error()
		}
		if msg != "" {
			return fmt.Errorf("%s: %s", t, msg)
		}
	}
	return fmt.Errorf("%s: %v", t, err)
}

// collector assembles one snapshot.
type collector struct {
	t       target.Target
	openWrt bool       // /etc/openwrt_release exists: notes name OpenWrt packages
	mu      sync.Mutex // guards snap.Notes while groups run
	snap    *facts.Snapshot
	res     map[string]cmdResult
}

func (c *collector) note(source, msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.snap.Notes = append(c.snap.Notes, facts.Note{Source: source, Message: msg})
}

func oneLine(err error) string {
	s := strings.TrimSpace(err.Error())
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// output returns a source's standard output, or notes why there is none.
// A skipped source (not applicable to this host) is silent.
func (c *collector) output(key, source string) (string, bool) {
	r, ok := c.res[key]
	if !ok {
		c.note(source, "no output (the collection script was cut short)")
		return "", false
	}
	switch r.Code {
	case 0:
		return r.Out, true
	case codeSkipped:
		return "", false
	case codeCut:
		c.note(source, r.Stderr+" (wgperf stopped reading it)")
	case 127:
		prog := strings.Fields(source)[0]
		if c.openWrt && (prog == "iptables-save" || prog == "ip6tables-save") {
			return "", false // fw4 keeps its rules in nftables, read with nft
		}
		msg := prog + " not installed"
		if pkg := opkgPackages[prog]; c.openWrt && pkg != "" {
			msg += " (" + openwrt.Install(pkg) + ")"
		}
		c.note(source, msg)
	default:
		msg := lastLine(r.Stderr)
		if msg == "" {
			msg = "exit status " + strconv.Itoa(r.Code)
		}
		c.note(source, msg)
	}
	return "", false
}

// opkgPackages names the OpenWrt package of each program a source needs, for
// the note that says it is missing on a router.
var opkgPackages = map[string]string{
	"ethtool": "ethtool", "conntrack": "conntrack", "nft": "nftables", "wg": "wireguard-tools",
	"ip": "ip-full", "tc": "tc-full", "iperf3": "iperf3", "tcpdump": "tcpdump",
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[i+1:])
	}
	return s
}

// ifInstalled wraps a snippet so a missing program exits 127 with a clear message.
func ifInstalled(prog, script string) string {
	return fmt.Sprintf("if command -v %s >/dev/null 2>&1; then %s; else missing %s; fi", prog, script, prog)
}

// onOpenWrt wraps a snippet that only makes sense on OpenWrt.
func onOpenWrt(script string) string {
	return "if [ -e /etc/openwrt_release ]; then " + script + "; else skip; fi"
}
