package remedy

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
)

// Fix kinds of this file, with their params (all strings).
const (
	KindTBFCap = "tbf-cap" // device, rate (e.g. "150mbit")
)

// tbfCap shapes a device with a token bucket just below the rate where
// throughput starts to collapse: steady beats peaky.
type tbfCap struct {
	device string
	rate   string // as given, e.g. "150mbit"
	bits   uint64
}

var rateRE = regexp.MustCompile(`^(?i)([0-9]+(?:\.[0-9]+)?)(bit|kbit|mbit|gbit)$`)

// parseRate reads a tc rate ("150mbit", "1Gbit") as bits per second.
func parseRate(s string) (uint64, bool) {
	m := rateRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		return 0, false
	}
	mult := map[string]float64{"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9}[strings.ToLower(m[2])]
	return uint64(v * mult), true
}

// TBF caps device at rate (a tc rate such as "150mbit", at least 100kbit)
// with a token bucket whose burst holds 10 ms at that rate.
func TBF(device, rate string) (Remedy, error) {
	a, err := newTBF(device, rate)
	if err != nil {
		return nil, err
	}
	cmd := a.command()
	return shown{a, []string{shell.Join(cmd[0], cmd[1:]...)},
		[]finding.ConfigSnippet{{Path: "/etc/wireguard/" + device + ".conf [Interface]", Lines: []string{a.postUp()}}}}, nil
}

// TBFCommand is the tc command that caps device at rate exactly as the
// tbf-cap fix does (its burst and queue), for a sweep that measures caps: the
// cap a sweep proves steady is the one the fix applies.
func TBFCommand(device, rate string) ([]string, error) {
	a, err := newTBF(device, rate)
	if err != nil {
		return nil, err
	}
	return a.command(), nil
}

func newTBF(device, rate string) (*tbfCap, error) {
	if err := checkIface("device", device); err != nil {
		return nil, err
	}
	bits, ok := parseRate(rate)
	if !ok || bits < 1e5 || bits > 1e12 {
		return nil, fmt.Errorf("rate %q: want a tc rate such as 150mbit", rate)
	}
	return &tbfCap{device: device, rate: strings.ToLower(strings.TrimSpace(rate)), bits: bits}, nil
}

func (a *tbfCap) command() []string {
	return append([]string{"tc", "qdisc", "replace", "dev", a.device, "root", "tbf"}, a.args()...)
}

func parseTBF(p params) (Remedy, error) {
	dev, err := p.get("device")
	if err != nil {
		return nil, err
	}
	rate, err := p.get("rate")
	if err != nil {
		return nil, err
	}
	return TBF(dev, rate)
}

func (a *tbfCap) Params() map[string]string {
	return map[string]string{"device": a.device, "rate": a.rate}
}

func (a *tbfCap) Kind() string { return KindTBFCap }

func (a *tbfCap) Describe() string {
	return fmt.Sprintf("cap %s at %s with a token bucket, below the rate where throughput collapses", a.device, a.rate)
}

// burst holds 10 ms at the rate, and at least one 64 KiB GSO super-packet.
func (a *tbfCap) burst() string {
	b := a.bits / 8 / 100
	if b < 64<<10 {
		b = 64 << 10
	}
	return fmt.Sprintf("%dkb", (b+1023)/1024)
}

// postUp is the wg-quick line that makes the cap again when the tunnel comes up.
func (a *tbfCap) postUp() string {
	return "PostUp = " + shell.Join("tc", append([]string{"qdisc", "replace", "dev", "%i", "root", "tbf"}, a.args()...)...)
}

func (a *tbfCap) args() []string {
	return []string{"rate", a.rate, "burst", a.burst(), "latency", "400ms"}
}

func (a *tbfCap) Plan(ctx context.Context, env *Env) (Step, error) {
	out, err := env.T.Run(ctx, "tc", "qdisc", "show", "dev", a.device, "root")
	if err != nil {
		return Step{}, fmt.Errorf("%s: no interface %q: %w", env.T, a.device, err)
	}
	f := strings.Fields(string(out)) // qdisc KIND HANDLE root refcnt N PARAMS...
	if len(f) < 3 || f[0] != "qdisc" {
		return Step{}, fmt.Errorf("%s: tc qdisc show dev %s: unexpected output %q", env.T, a.device, out)
	}
	kind, handle := f[1], f[2]
	params := f[3:]
	for i, w := range params {
		if w == "refcnt" && i+1 < len(params) {
			params = params[i+2:]
			break
		}
	}
	st := Step{Kind: a.Kind(), Summary: fmt.Sprintf("%s root qdisc: %s -> tbf %s", a.device, kind, a.rate)}
	already := false
	switch {
	case handle == "0:": // the default qdisc: deleting ours brings it back
		st.Undo = []string{shell.Join("tc", "qdisc", "del", "dev", a.device, "root")}
	case kind == "tbf":
		for i, w := range params {
			if w == "rate" && i+1 < len(params) {
				if bits, ok := parseRate(params[i+1]); ok && bits == a.bits {
					already = true
				}
			}
		}
		st.Summary = fmt.Sprintf("%s root qdisc: tbf %s -> tbf %s", a.device, strings.Join(params, " "), a.rate)
		st.Undo = []string{shell.Join("tc", append([]string{"qdisc", "replace", "dev", a.device, "root", "tbf"}, params...)...)}
	default:
		return Step{}, fmt.Errorf("%s: %s already has a configured root qdisc (%s %s); remove it or cap it by hand", env.T, a.device, kind, handle)
	}
	if !already {
		st.Commands = []string{shell.Join("tc", append([]string{"qdisc", "replace", "dev", a.device, "root", "tbf"}, a.args()...)...)}
	} else {
		st.Undo = nil
	}
	conf := env.Path("/etc/wireguard/" + a.device + ".conf")
	if ok, err := env.exists(ctx, conf); err != nil {
		return Step{}, err
	} else if ok {
		line := a.postUp()
		fc, err := env.change(ctx, conf, func(old []byte, _ bool) ([]byte, error) {
			return setIniLine(old, "Interface", func(l string) bool {
				return iniKey(l) == "postup" && strings.Contains(l, "root tbf")
			}, line)
		})
		if err != nil {
			return Step{}, err
		}
		if fc != nil {
			q := shell.Join(conf)
			fc.Edit = []string{
				`sed -i '/^\[Interface\]/,/^\[Peer\]/{/^PostUp.*root tbf/d}' ` + q,
				fmt.Sprintf(`sed -i '/^\[Interface\]/a %s' %s`, strings.ReplaceAll(line, "'", `'\''`), q),
			}
			st.Files = append(st.Files, *fc)
		}
	} else {
		st.Notes = append(st.Notes, "runtime only: re-apply when "+a.device+" comes up (e.g. a PostUp line or hotplug script)")
	}
	st.Done = len(st.Commands) == 0 && len(st.Files) == 0
	return st, nil
}
