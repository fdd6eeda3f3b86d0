package fix

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/wgperf/wgperf/internal/target"
)

// uciSet changes one OpenWrt uci option, commits it, and restarts what reads it
// ("ifup:wg" for an interface, or an init script such as /etc/init.d/banip).
type uciSet struct{ key, value, restart string }

func newUCISet(p params) (Action, error) {
	key, err := p.get("key", uciKeyRE)
	if err != nil {
		return nil, err
	}
	value, err := p.get("value", nil)
	if err != nil {
		return nil, err
	}
	restart, err := p.opt("restart", nil)
	if err != nil {
		return nil, err
	}
	if restart != "" {
		if _, err := restartCommand(restart); err != nil {
			return nil, err
		}
	}
	return &uciSet{key: key, value: value, restart: restart}, nil
}

// restartCommand turns "ifup:wg", "banip" or "/etc/init.d/banip" into a shell line.
func restartCommand(r string) (string, error) {
	if iface, ok := strings.CutPrefix(r, "ifup:"); ok {
		if !ifaceRE.MatchString(iface) {
			return "", fmt.Errorf("param restart=%q: bad interface", r)
		}
		return fmt.Sprintf("ifdown %s && ifup %s", iface, iface), nil
	}
	if wordRE.MatchString(r) {
		r = "/etc/init.d/" + r
	}
	if !initPathRE.MatchString(r) {
		return "", fmt.Errorf("param restart=%q: want ifup:IFACE or an init script", r)
	}
	return r + " restart", nil
}

func (a *uciSet) Kind() string { return "uci-set" }

func (a *uciSet) Describe() string {
	s := fmt.Sprintf("uci set %s=%s and commit", a.key, a.value)
	if a.restart != "" {
		s += ", then restart " + strings.TrimPrefix(a.restart, "ifup:")
	}
	return s
}

func (a *uciSet) Plan(ctx context.Context, env *Env) (Step, error) {
	now, set, err := uciGet(ctx, env, a.key)
	if err != nil {
		return Step{}, err
	}
	shown := now
	if !set {
		shown = "(unset)"
	}
	st := Step{Kind: a.Kind(), Summary: fmt.Sprintf("%s: %s -> %s", a.key, shown, a.value)}
	if set && now == a.value {
		st.Done = true
		return st, nil
	}
	config, _, _ := strings.Cut(a.key, ".")
	st.Commands = []string{target.Quote("uci", "set", a.key+"="+a.value), target.Quote("uci", "commit", config)}
	if set {
		st.Undo = []string{target.Quote("uci", "set", a.key+"="+now)}
	} else {
		st.Undo = []string{target.Quote("uci", "delete", a.key)}
	}
	st.Undo = append(st.Undo, target.Quote("uci", "commit", config))
	if a.restart != "" {
		cmd, _ := restartCommand(a.restart)
		st.Commands = append(st.Commands, cmd)
		st.Undo = append(st.Undo, cmd)
		if strings.HasPrefix(a.restart, "ifup:") {
			st.Notes = append(st.Notes, "restarting the interface can cut a session that runs through it: use --confirm")
		}
	}
	return st, nil
}

// uciGet reads an option; set is false when it does not exist (uci -q get exits 1).
func uciGet(ctx context.Context, env *Env, key string) (value string, set bool, err error) {
	out, err := env.T.Run(ctx, "uci", "-q", "get", key)
	if err == nil {
		return strings.TrimSpace(string(out)), true, nil
	}
	var te *target.Error
	if errors.As(err, &te) && te.ExitCode == 1 {
		return "", false, nil
	}
	return "", false, err
}
