package remedy

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// Fix kinds of this file, with their params (all strings).
const (
	KindUCISet = "uci-set" // key (e.g. "network.wg.nohostroute"), value, restart (optional init script or "ifup:wg")
)

// uciSet changes one OpenWrt uci option, commits it, and restarts what reads it
// ("ifup:wg" for an interface, or an init script such as /etc/init.d/banip).
type uciSet struct{ key, value, restart string }

// UCISet sets OpenWrt uci option key ("config.section.option") to value,
// commits it, and runs restart when not "": "ifup:IFACE" for an interface,
// or an init script ("mwan3", "/etc/init.d/banip").
func UCISet(key, value, restart string) (Remedy, error) {
	a, err := newUCISet(key, value, restart)
	if err != nil {
		return nil, err
	}
	config, _, _ := strings.Cut(key, ".")
	cmds := []string{shell.Join("uci", "set", key+"="+value), shell.Join("uci", "commit", config)}
	if restart != "" {
		cmd, _ := restartCommand(restart)
		cmds = append(cmds, cmd)
	}
	return shown{a, cmds, nil}, nil
}

func newUCISet(key, value, restart string) (*uciSet, error) {
	// shell.UCIKey is the one uci key grammar (no leading "-" a command would
	// read as an option).
	if err := shell.UCIKey(key); err != nil || len(key) > 128 {
		return nil, fmt.Errorf("uci key %q: want config.section.option", key)
	}
	if err := checkText("uci value", value); err != nil {
		return nil, err
	}
	if restart != "" {
		if _, err := restartCommand(restart); err != nil {
			return nil, err
		}
	}
	return &uciSet{key: key, value: value, restart: restart}, nil
}

func parseUCISet(p params) (Remedy, error) {
	key, err := p.get("key")
	if err != nil {
		return nil, err
	}
	value, err := p.get("value")
	if err != nil {
		return nil, err
	}
	return UCISet(key, value, strings.TrimSpace(p["restart"]))
}

func (a *uciSet) Params() map[string]string {
	p := map[string]string{"key": a.key, "value": a.value}
	if a.restart != "" {
		p["restart"] = a.restart
	}
	return p
}

// initNameRE is an init script's name in /etc/init.d.
var initNameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,63}$`)

// ifupRE is an interface section safe to name unquoted in a shell line.
var ifupRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}$`)

// restartCommand turns "ifup:wg", "banip" or "/etc/init.d/banip" into a shell line.
func restartCommand(r string) (string, error) {
	if iface, ok := strings.CutPrefix(r, "ifup:"); ok {
		if !ifupRE.MatchString(iface) {
			return "", fmt.Errorf("restart %q: bad interface", r)
		}
		return fmt.Sprintf("ifdown %s && ifup %s", iface, iface), nil
	}
	// Only an init script by name: a path from a findings file would run any
	// program as root.
	name := strings.TrimPrefix(r, "/etc/init.d/")
	if !initNameRE.MatchString(name) {
		return "", fmt.Errorf("restart %q: want ifup:IFACE or an init script in /etc/init.d", r)
	}
	return "/etc/init.d/" + name + " restart", nil
}

func (a *uciSet) Kind() string { return KindUCISet }

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
	st.Commands = []string{shell.Join("uci", "set", a.key+"="+a.value), shell.Join("uci", "commit", config)}
	if set {
		st.Undo = []string{shell.Join("uci", "set", a.key+"="+now)}
	} else {
		st.Undo = []string{shell.Join("uci", "delete", a.key)}
	}
	st.Undo = append(st.Undo, shell.Join("uci", "commit", config))
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
