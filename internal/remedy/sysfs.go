package remedy

import (
	"context"
	"fmt"
	"math/big"
	"strings"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
)

// Fix kinds of this file, with their params (all strings).
const (
	KindRPS      = "rps"       // device, mask (hex CPU mask for every rx queue)
	KindBondHash = "bond-hash" // bond, policy (e.g. "layer3+4")
)

// WriteSysfs is the shell line that writes value to a sysfs or procfs file.
func WriteSysfs(path, value string) string {
	return "echo " + shell.Join(value) + " > " + shell.Join(path)
}

// rps spreads receive packet processing of a device over CPUs (softirq on one core).
type rps struct{ device, mask string }

// RPS sets every rx queue of device to steer packets to the CPUs in mask
// (hex, as sysfs prints it). platform decides how the display persists it.
func RPS(device, mask string, platform Platform) (Remedy, error) {
	if err := checkIface("device", device); err != nil {
		return nil, err
	}
	if !hexMaskRE.MatchString(mask) {
		return nil, fmt.Errorf("CPU mask %q: want hex digits", mask)
	}
	a := &rps{device: device, mask: mask}
	cmds := []string{fmt.Sprintf("for q in /sys/class/net/%s/queues/rx-*/rps_cpus; do echo %s > \"$q\"; done", shell.Join(device), mask)}
	cfg := []finding.ConfigSnippet{{
		Path:  "/etc/udev/rules.d/90-wgperf-rps.rules",
		Lines: []string{fmt.Sprintf(`SUBSYSTEM=="net", ACTION=="add", KERNEL=="%s", ATTR{queues/rx-0/rps_cpus}="%s"`, device, mask)},
	}}
	if platform == OpenWrt {
		cmds = append(cmds, "uci set network.globals.packet_steering=1", "uci commit network")
		cfg = []finding.ConfigSnippet{{Path: "/etc/config/network (config globals 'globals')", Lines: []string{"option packet_steering '1'"}}}
	}
	return shown{a, cmds, cfg}, nil
}

func parseRPS(p params) (Remedy, error) {
	dev, err := p.get("device")
	if err != nil {
		return nil, err
	}
	mask, err := p.get("mask")
	if err != nil {
		return nil, err
	}
	return RPS(dev, mask, Unknown)
}

func (a *rps) Params() map[string]string {
	return map[string]string{"device": a.device, "mask": a.mask}
}

func (a *rps) Kind() string { return KindRPS }

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
		st.Commands = append(st.Commands, WriteSysfs(p, a.mask))
		st.Undo = append(st.Undo, WriteSysfs(p, now))
	}
	if len(was) == 0 {
		return Step{}, fmt.Errorf("%s: %s has no rx queues", env.T, a.device)
	}
	st.Summary = fmt.Sprintf("%s rps_cpus: %s -> %s", a.device, strings.Join(was, " "), a.mask)
	st.Done = len(st.Commands) == 0
	return st, nil
}

// bondHash makes an 802.3ad bond hash on layer 3+4 so different flows (and
// tunnels on different ports) use different links.
type bondHash struct{ bond, policy string }

// bondPolicies are the kernel's xmit_hash_policy names.
var bondPolicies = map[string]bool{"layer2": true, "layer2+3": true, "layer3+4": true, "encap2+3": true, "encap3+4": true, "vlan+srcmac": true}

// BondHash sets bond's xmit_hash_policy to policy. On OpenWrt the display
// persists it in uci section uciSection (the bond's name when "").
func BondHash(bond, policy string, platform Platform, uciSection string) (Remedy, error) {
	if err := checkIface("bond", bond); err != nil {
		return nil, err
	}
	if !bondPolicies[policy] {
		return nil, fmt.Errorf("xmit_hash_policy %q is not valid", policy)
	}
	uciSection, err := uciSectionOf(bond, uciSection)
	if err != nil {
		return nil, err
	}
	a := &bondHash{bond: bond, policy: policy}
	cmds := []string{shell.Join("ip", "link", "set", "dev", bond, "type", "bond", "xmit_hash_policy", policy)}
	cfg := []finding.ConfigSnippet{
		{Path: "/etc/network/interfaces (iface " + bond + ")", Lines: []string{"bond-xmit-hash-policy " + policy}},
		{Path: "/etc/systemd/network/" + bond + ".netdev [Bond]", Lines: []string{"TransmitHashPolicy=" + policy}},
	}
	if platform == OpenWrt && uciSection != "" {
		cmds = append(cmds, shell.Join("uci", "set", "network."+uciSection+".xmit_hash_policy="+policy), "uci commit network")
		cfg = []finding.ConfigSnippet{{Path: "/etc/config/network (interface " + uciSection + ")", Lines: []string{"option xmit_hash_policy '" + policy + "'"}}}
	}
	return shown{a, cmds, cfg}, nil
}

func parseBondHash(p params) (Remedy, error) {
	bond, err := p.get("bond")
	if err != nil {
		return nil, err
	}
	policy, err := p.get("policy")
	if err != nil {
		return nil, err
	}
	return BondHash(bond, policy, Unknown, "")
}

func (a *bondHash) Params() map[string]string {
	return map[string]string{"bond": a.bond, "policy": a.policy}
}

func (a *bondHash) Kind() string { return KindBondHash }

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
	st.Commands = []string{WriteSysfs(p, a.policy)}
	st.Undo = []string{WriteSysfs(p, now)}
	return st, nil
}
