package remedy

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
)

// Fix kinds of this file, with their params (all strings).
const (
	// KindOffload sets a device's offload features with ethtool -K: device,
	// features ("rx-udp-gro-forwarding=on,rx-gro-list=off").
	KindOffload = "offload"
)

// offloadFeatures are the ethtool features the fix may set: those that decide
// how UDP (WireGuard's packets, and what a gateway forwards into a tunnel)
// is batched, and TCP segmentation, which the PMTUD case turned off with GSO
// and GRO on its uplink (ethtool -K PHY tso off gso off gro off).
var offloadFeatures = []string{"rx-udp-gro-forwarding", "rx-gro-list", "tx-udp-segmentation", "generic-receive-offload", "generic-segmentation-offload", "tcp-segmentation-offload"}

// Feature is one offload feature and the state wanted for it.
type Feature struct {
	Name string
	On   bool
}

func (f Feature) state() string {
	if f.On {
		return "on"
	}
	return "off"
}

// offload sets device's features in the order given.
type offload struct {
	device   string
	features []Feature
}

// Offload sets device's offload features (ethtool -K): the features of
// offloadFeatures, each at most once.
func Offload(device string, features []Feature) (Remedy, error) {
	if err := checkIface("device", device); err != nil {
		return nil, err
	}
	if len(features) == 0 {
		return nil, fmt.Errorf("no feature to set on %s", device)
	}
	var seen []string
	for _, f := range features {
		if !slices.Contains(offloadFeatures, f.Name) {
			return nil, fmt.Errorf("offload feature %q: want one of %s", f.Name, strings.Join(offloadFeatures, ", "))
		}
		if slices.Contains(seen, f.Name) {
			return nil, fmt.Errorf("offload feature %s given twice", f.Name)
		}
		seen = append(seen, f.Name)
	}
	a := &offload{device: device, features: features}
	line := a.command(features)
	return shown{a, []string{line}, []finding.ConfigSnippet{{
		Path:  "the post-up hook of " + device + " (ifupdown's post-up line, a networkd-dispatcher script, OpenWrt's /etc/hotplug.d/iface)",
		Lines: []string{line},
	}}}, nil
}

func parseOffload(p params) (Remedy, error) {
	device, err := p.get("device")
	if err != nil {
		return nil, err
	}
	list, err := p.get("features")
	if err != nil {
		return nil, err
	}
	var fs []Feature
	for _, kv := range strings.Split(list, ",") {
		name, state, ok := strings.Cut(kv, "=")
		if !ok || (state != "on" && state != "off") {
			return nil, fmt.Errorf("param features=%q: want feature=on|off, separated by commas", list)
		}
		fs = append(fs, Feature{Name: name, On: state == "on"})
	}
	return Offload(device, fs)
}

// command is the ethtool line that sets fs on the device.
func (a *offload) command(fs []Feature) string {
	args := []string{"-K", a.device}
	for _, f := range fs {
		args = append(args, f.Name, f.state())
	}
	return shell.Join("ethtool", args...)
}

func (a *offload) Kind() string { return KindOffload }

func (a *offload) Params() map[string]string {
	var kv []string
	for _, f := range a.features {
		kv = append(kv, f.Name+"="+f.state())
	}
	return map[string]string{"device": a.device, "features": strings.Join(kv, ",")}
}

func (a *offload) Describe() string {
	var kv []string
	for _, f := range a.features {
		kv = append(kv, f.Name+" "+f.state())
	}
	return fmt.Sprintf("set %s's offloads: %s", a.device, strings.Join(kv, ", "))
}

// Plan reads the device's features (ethtool -k) and sets those not in the
// wanted state; the undo puts each back as it was.
func (a *offload) Plan(ctx context.Context, env *Env) (Step, error) {
	out, err := env.T.Run(ctx, "ethtool", "-k", a.device)
	if err != nil {
		return Step{}, err
	}
	now := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		name, value, ok := strings.Cut(strings.TrimSpace(l), ": ")
		if ok && slices.Contains(offloadFeatures, name) {
			now[name] = value
		}
	}
	st := Step{Kind: a.Kind(), Notes: []string{"runtime only: add the ethtool line to " + a.device + "'s post-up hook, or it is gone when the device comes up again"}}
	var change, undo []Feature
	var was []string
	for _, f := range a.features {
		v, ok := now[f.Name]
		if !ok {
			return Step{}, fmt.Errorf("%s: %s has no offload feature %s (ethtool -k)", env.T, a.device, f.Name)
		}
		state, _, _ := strings.Cut(v, " ")
		was = append(was, f.Name+" "+state)
		if state == f.state() {
			continue
		}
		if strings.Contains(v, "[fixed]") {
			return Step{}, fmt.Errorf("%s: %s's %s is %s: the driver does not let it change", env.T, a.device, f.Name, v)
		}
		change = append(change, f)
		undo = append(undo, Feature{Name: f.Name, On: state == "on"})
	}
	st.Summary = fmt.Sprintf("%s offloads: %s", a.device, strings.Join(was, ", "))
	if len(change) == 0 {
		st.Done = true
		return st, nil
	}
	st.Commands = []string{a.command(change)}
	st.Undo = []string{a.command(undo)}
	return st, nil
}
