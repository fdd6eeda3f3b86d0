package remedy

import (
	"context"
	"fmt"
	"strings"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/openwrt"
	"github.com/wgperf/wgperf/internal/shell"
)

// Fix kinds of this file, with their params (all strings).
const (
	KindSQM = "sqm" // device, bandwidth (e.g. "18mbit")
)

// sqm is smart queue management on a device's egress: a shaper just below
// the bottleneck's rate with an AQM under it (cake, or htb with fq_codel), so
// the queue forms where the AQM keeps it short instead of in a deep FIFO
// further on. OpenWrt's SQM package does the same with piece_of_cake.qos.
type sqm struct {
	device    string
	bandwidth string // as given, lower case, e.g. "18mbit"
	bits      uint64
}

// SQM shapes device's egress at bandwidth (a tc rate such as "18mbit",
// 100kbit to 1000gbit) with cake, or htb and fq_codel where the kernel has
// no cake.
func SQM(device, bandwidth string) (Remedy, error) {
	if err := checkIface("device", device); err != nil {
		return nil, err
	}
	bits, ok := parseRate(bandwidth)
	if !ok || bits < 1e5 || bits > 1e12 {
		return nil, fmt.Errorf("bandwidth %q: want a tc rate such as 18mbit", bandwidth)
	}
	a := &sqm{device: device, bandwidth: strings.ToLower(strings.TrimSpace(bandwidth)), bits: bits}
	return shown{a, []string{shell.Join("tc", a.cake()...)}, []finding.ConfigSnippet{
		{Path: "/etc/config/sqm (OpenWrt, package sqm-scripts)", Lines: a.uciSQM()},
		{Path: "/etc/systemd/network/" + device + ".network (systemd-networkd)", Lines: []string{"[CAKE]", "Bandwidth=" + a.networkdRate()}},
	}}, nil
}

func parseSQM(p params) (Remedy, error) {
	dev, err := p.get("device")
	if err != nil {
		return nil, err
	}
	bw, err := p.get("bandwidth")
	if err != nil {
		return nil, err
	}
	return SQM(dev, bw)
}

func (a *sqm) Kind() string { return KindSQM }

func (a *sqm) Params() map[string]string {
	return map[string]string{"device": a.device, "bandwidth": a.bandwidth}
}

func (a *sqm) Describe() string {
	return fmt.Sprintf("shape %s's egress at %s with cake (or htb + fq_codel), so the queue forms where it is kept short", a.device, a.bandwidth)
}

// cake is tc's arguments on a kernel with sch_cake.
func (a *sqm) cake() []string {
	return []string{"qdisc", "replace", "dev", a.device, "root", "cake", "bandwidth", a.bandwidth}
}

// htbFQCodel is the same shaper built from htb and fq_codel, for kernels
// without cake: one htb class at the rate, fq_codel as its queue.
func (a *sqm) htbFQCodel() []string {
	return []string{
		shell.Join("tc", "qdisc", "replace", "dev", a.device, "root", "handle", "1:", "htb", "default", "1"),
		shell.Join("tc", "class", "replace", "dev", a.device, "parent", "1:", "classid", "1:1", "htb", "rate", a.bandwidth, "ceil", a.bandwidth),
		shell.Join("tc", "qdisc", "replace", "dev", a.device, "parent", "1:1", "handle", "10:", "fq_codel"),
	}
}

// uciSQM is OpenWrt's sqm-scripts section for the device (upload in kbit/s;
// download 0 leaves ingress alone).
func (a *sqm) uciSQM() []string {
	return []string{
		"config queue 'wgperf'",
		"\toption enabled '1'",
		"\toption interface '" + a.device + "'",
		"\toption download '0'",
		fmt.Sprintf("\toption upload '%d'", a.bits/1000),
		"\toption qdisc 'cake'",
		"\toption script 'piece_of_cake.qos'",
	}
}

// networkdRate is the bandwidth as systemd-networkd writes it (K, M, G: powers of 1000).
func (a *sqm) networkdRate() string {
	switch {
	case a.bits%1e9 == 0:
		return fmt.Sprintf("%dG", a.bits/1e9)
	case a.bits%1e6 == 0:
		return fmt.Sprintf("%dM", a.bits/1e6)
	}
	return fmt.Sprintf("%dK", a.bits/1e3)
}

// Plan reads the device's root qdisc (kept for the undo) and which of
// cake, fq_codel and htb the kernel has; it refuses, saying so, where the
// kernel has neither cake nor fq_codel.
func (a *sqm) Plan(ctx context.Context, env *Env) (Step, error) {
	out, err := env.T.Run(ctx, "tc", "qdisc", "show", "dev", a.device, "root")
	if err != nil {
		return Step{}, fmt.Errorf("%s: no interface %q: %w", env.T, a.device, err)
	}
	root, err := parseRootQdisc(string(out))
	if err != nil {
		return Step{}, fmt.Errorf("%s: tc qdisc show dev %s: %w", env.T, a.device, err)
	}
	if root.kind == "cake" && root.bandwidth() == a.bits {
		return Step{Kind: a.Kind(), Summary: fmt.Sprintf("%s root qdisc: cake at %s already", a.device, a.bandwidth), Done: true}, nil
	}
	st := Step{Kind: a.Kind()}
	switch {
	case root.handle == "0:": // the default qdisc: deleting ours brings it back
		st.Undo = []string{shell.Join("tc", "qdisc", "del", "dev", a.device, "root")}
	case root.kind == "tbf" || root.kind == "cake":
		// Classless: its printed parameters make it again.
		st.Undo = []string{shell.Join("tc", append([]string{"qdisc", "replace", "dev", a.device, "root", root.kind}, root.params...)...)}
	default:
		return Step{}, fmt.Errorf("%s: %s already has a configured root qdisc (%s %s); remove it or add the AQM to it by hand", env.T, a.device, root.kind, root.handle)
	}
	have, err := Qdiscs(ctx, env)
	if err != nil {
		return Step{}, err
	}
	switch {
	case have.Cake == Has || have.Cake == Unsure && have.FQCodel != Has:
		st.Summary = fmt.Sprintf("%s root qdisc: %s -> cake bandwidth %s", a.device, root.kind, a.bandwidth)
		st.Commands = []string{shell.Join("tc", a.cake()...)}
		if have.Cake == Unsure {
			st.Notes = append(st.Notes, "could not tell whether this kernel has sch_cake: if tc answers \"Specified qdisc kind is unknown\", it has none")
		}
	case have.FQCodel == Has && have.HTB != Lacks:
		st.Summary = fmt.Sprintf("%s root qdisc: %s -> htb %s with fq_codel (this kernel has no cake)", a.device, root.kind, a.bandwidth)
		st.Commands = a.htbFQCodel()
	default:
		return Step{}, fmt.Errorf("%s: cake/fq_codel not available on this kernel (%s: %s): boot one that has sch_cake or sch_fq_codel (distribution kernels build both), "+
			"or shape with an AQM on the device that holds the queue", env.T, env.Kernel, have.Evidence)
	}
	if env.Platform == OpenWrt {
		st.Notes = append(st.Notes, "runtime only: on OpenWrt make it last with sqm-scripts ("+openwrt.Install("sqm-scripts")+"; the uci section shown), which also restarts it with the interface")
	} else {
		st.Notes = append(st.Notes, "runtime only: re-apply when "+a.device+" comes up (systemd-networkd's [CAKE] section, or a hook of the tool that configures it)")
	}
	return st, nil
}

// rootQdisc is a device's root qdisc as "tc qdisc show dev X root" prints it.
type rootQdisc struct {
	kind, handle string
	params       []string // after "refcnt N"
}

// parseRootQdisc reads "qdisc KIND HANDLE root refcnt N PARAMS...".
func parseRootQdisc(out string) (rootQdisc, error) {
	line, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	f := strings.Fields(line)
	if len(f) < 3 || f[0] != "qdisc" {
		return rootQdisc{}, fmt.Errorf("unexpected output %q", out)
	}
	q := rootQdisc{kind: f[1], handle: f[2], params: f[3:]}
	for i, w := range q.params {
		if w == "refcnt" && i+1 < len(q.params) {
			q.params = q.params[i+2:]
			break
		}
	}
	if q.params == nil {
		q.params = []string{}
	}
	return q, nil
}

// bandwidth is a cake qdisc's shaped rate in bits/s (0: none or unreadable).
func (q rootQdisc) bandwidth() uint64 {
	for i, w := range q.params {
		if w == "bandwidth" && i+1 < len(q.params) {
			if bits, ok := parseRate(q.params[i+1]); ok {
				return bits
			}
		}
	}
	return 0
}
