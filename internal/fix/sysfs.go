package fix

import (
	"context"
	"fmt"
	"math/big"
	"strings"

	"github.com/wgperf/wgperf/internal/target"
)

// writeSysfs is the shell line that writes value to a sysfs or procfs file.
func writeSysfs(path, value string) string {
	return "echo " + target.Quote(value) + " > " + target.Quote(path)
}

// rps spreads receive packet processing of a device over CPUs (seed 004).
type rps struct{ device, mask string }

func newRPS(p params) (Action, error) {
	dev, err := p.get("device", ifaceRE)
	if err != nil {
		return nil, err
	}
	mask, err := p.get("mask", hexMaskRE)
	if err != nil {
		return nil, err
	}
	return &rps{device: dev, mask: mask}, nil
}

func (a *rps) Kind() string { return "rps" }

func (a *rps) Describe() string {
	return fmt.Sprintf("spread receive processing of %s over CPUs %s (RPS) so one core does not take every packet", a.device, a.mask)
}

// sameMask compares CPU masks as numbers: sysfs prints "00000003" or "0000,00000003".
func sameMask(a, b string) bool {
	x, ok1 := new(big.Int).SetString(strings.ReplaceAll(strings.TrimSpace(a), ",", ""), 16)
	y, ok2 := new(big.Int).SetString(strings.ReplaceAll(strings.TrimSpace(b), ",", ""), 16)
	return ok1 && ok2 && x.Cmp(y) == 0
}

func (a *rps) Plan(ctx context.Context, env *Env) (Step, error) {
	base := "/sys/class/net/" + a.device + "/queues"
	out, err := env.T.Run(ctx, "ls", base)
	if err != nil {
		return Step{}, fmt.Errorf("%s: no interface %q (or it has no rx queues)", env.T, a.device)
	}
	st := Step{Kind: a.Kind(), Notes: []string{"runtime only: re-apply at boot (OpenWrt: uci set network.globals.packet_steering=1)"}}
	var was []string
	for _, q := range strings.Fields(string(out)) {
		if !strings.HasPrefix(q, "rx-") {
			continue
		}
		p := base + "/" + q + "/rps_cpus"
		cur, err := env.T.ReadFile(ctx, p)
		if err != nil {
			return Step{}, err
		}
		now := strings.TrimSpace(string(cur))
		was = append(was, q+"="+now)
		if sameMask(now, a.mask) {
			continue
		}
		st.Commands = append(st.Commands, writeSysfs(p, a.mask))
		st.Undo = append(st.Undo, writeSysfs(p, now))
	}
	if len(was) == 0 {
		return Step{}, fmt.Errorf("%s: %s has no rx queues", env.T, a.device)
	}
	st.Summary = fmt.Sprintf("%s rps_cpus: %s -> %s", a.device, strings.Join(was, " "), a.mask)
	st.Done = len(st.Commands) == 0
	return st, nil
}

// bondHash makes an 802.3ad bond hash on layer 3+4 so different flows (and
// tunnels on different ports) use different links (seed 003).
type bondHash struct{ bond, policy string }

func newBondHash(p params) (Action, error) {
	bond, err := p.get("bond", ifaceRE)
	if err != nil {
		return nil, err
	}
	policy, err := p.get("policy", wordRE)
	if err != nil {
		return nil, err
	}
	return &bondHash{bond: bond, policy: policy}, nil
}

func (a *bondHash) Kind() string { return "bond-hash" }

func (a *bondHash) Describe() string {
	return fmt.Sprintf("set xmit_hash_policy of %s to %s so flows spread over all bond links", a.bond, a.policy)
}

func (a *bondHash) Plan(ctx context.Context, env *Env) (Step, error) {
	p := "/sys/class/net/" + a.bond + "/bonding/xmit_hash_policy"
	out, err := env.T.ReadFile(ctx, p)
	if err != nil {
		return Step{}, fmt.Errorf("%s: %s is not a bond", env.T, a.bond)
	}
	f := strings.Fields(string(out)) // "layer2 0"
	if len(f) == 0 {
		return Step{}, fmt.Errorf("%s: empty %s", env.T, p)
	}
	now := f[0]
	st := Step{Kind: a.Kind(), Summary: fmt.Sprintf("%s xmit_hash_policy: %s -> %s", a.bond, now, a.policy),
		Notes: []string{"runtime only: also set it where the bond is configured (e.g. bond-xmit-hash-policy in /etc/network/interfaces)"}}
	if now == a.policy {
		st.Done = true
		return st, nil
	}
	st.Commands = []string{writeSysfs(p, a.policy)}
	st.Undo = []string{writeSysfs(p, now)}
	return st, nil
}
