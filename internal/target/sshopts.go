package target

import (
	"fmt"
	"strings"

	"github.com/wgperf/wgperf/internal/shell"
)

// sshOptionValue is what a setting's value may look like: no blank, quote or
// shell syntax, never a leading "-".
func sshOptionValue(key, v string) error {
	if v == "" || strings.HasPrefix(v, "-") || strings.ContainsAny(v, " \t\"'\\`$;&|<>(){}*?!#~\n\r") || shell.Line(key, v) != nil {
		return fmt.Errorf("-o %s=%q: not a plain value", key, v)
	}
	return nil
}

// sshSafeOptions are the ssh -o settings a host's own configuration (an
// inventory someone else wrote) may carry: how to reach and trust the host.
// Anything that runs a local command (ProxyCommand, LocalCommand,
// KnownHostsCommand, Match exec) or forwards something is not among them.
var sshSafeOptions = map[string]bool{
	"proxyjump": true, "stricthostkeychecking": true, "userknownhostsfile": true, "globalknownhostsfile": true,
	"hostkeyalias": true, "hostkeyalgorithms": true, "pubkeyacceptedalgorithms": true, "pubkeyacceptedkeytypes": true,
	"identitiesonly": true, "identityfile": true, "port": true, "user": true, "connecttimeout": true,
	"serveraliveinterval": true, "serveralivecountmax": true, "compression": true, "addressfamily": true,
	"ciphers": true, "macs": true, "kexalgorithms": true, "loglevel": true, "checkhostip": true,
	"connectionattempts": true, "preferredauthentications": true, "updatehostkeys": true,
}

// CheckHostSSH validates every field of o: paths and values that ssh
// could read as options or a shell as syntax are refused, and so is an ssh
// setting outside the safe list, in one line naming it.
func CheckHostSSH(o HostSSH) error {
	if o.IdentityFile != "" {
		if err := sshPath("identity file", o.IdentityFile); err != nil {
			return err
		}
	}
	for _, opt := range o.Options {
		key, value, ok := strings.Cut(opt, "=")
		if !ok {
			return fmt.Errorf("ssh option %q: want Key=Value", opt)
		}
		if !sshSafeOptions[strings.ToLower(key)] {
			return fmt.Errorf("ssh option %s is refused: an inventory may say how to reach a host (ProxyJump, keys, known hosts), not make wgperf run a command or forward anything; put it in ~/.ssh/config", key)
		}
		switch strings.ToLower(key) {
		case "proxyjump":
			if err := CheckJumpHosts(value); err != nil {
				return err
			}
		case "userknownhostsfile", "globalknownhostsfile", "identityfile":
			if err := sshPath(key, value); err != nil {
				return err
			}
		case "user":
			if err := shell.User(value); err != nil {
				return err
			}
		default:
			if err := sshOptionValue(key, value); err != nil {
				return err
			}
		}
	}
	if o.BecomeUser != "" {
		if err := shell.User(o.BecomeUser); err != nil {
			return fmt.Errorf("become user: %v", err)
		}
	}
	return nil
}

// CheckJumpHosts validates a ProxyJump value: [user@]host[:port], comma
// separated, or "none".
func CheckJumpHosts(v string) error {
	if v == "none" {
		return nil
	}
	for _, hop := range strings.Split(v, ",") {
		hop = strings.TrimPrefix(hop, "ssh://")
		s, err := parseSSHSpec(hop)
		if err != nil {
			return fmt.Errorf("ProxyJump %q: %v", v, err)
		}
		if strings.Contains(s.User, "@") {
			return fmt.Errorf("ProxyJump %q: a user may not contain @", v)
		}
	}
	return nil
}

// sshPath checks a file path handed to ssh.
func sshPath(kind, p string) error {
	if p == "" || strings.HasPrefix(p, "-") || strings.ContainsAny(p, "\"'`$\\\n\r") || shell.Line(kind, p) != nil {
		return fmt.Errorf("%s %q: not a plain path", kind, p)
	}
	return nil
}
