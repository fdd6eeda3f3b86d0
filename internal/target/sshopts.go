package target

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/shell"
)

// The ssh -o settings a host's own configuration (an inventory someone else
// wrote) may carry, and what each value may be: how to reach the host and
// which algorithms and key to use, nothing more. Not among them, so refused:
// anything that runs a local command (ProxyCommand, LocalCommand,
// KnownHostsCommand, PermitLocalCommand, Match exec), forwards something,
// writes a file (UserKnownHostsFile, GlobalKnownHostsFile, UpdateHostKeys,
// ControlPath, a CheckHostIP that adds addresses to known_hosts) or weakens
// host key checking (StrictHostKeyChecking other than yes, HostKeyAlias,
// which checks and records the key under another name). Root's ssh writes
// what those say, wherever they point: an inventory that could set them could
// append a key of its choosing to any file. The user's own ssh_config applies
// as it does for ssh: it is read after these options.
var sshSafeOptions = map[string]func(key, v string) error{
	"proxyjump":                func(_, v string) error { return CheckJumpHosts(v) },
	"stricthostkeychecking":    sshEnum("yes"),
	"checkhostip":              sshEnum("no"),
	"hostkeyalgorithms":        sshAlgorithms,
	"pubkeyacceptedalgorithms": sshAlgorithms,
	"pubkeyacceptedkeytypes":   sshAlgorithms,
	"ciphers":                  sshAlgorithms,
	"macs":                     sshAlgorithms,
	"kexalgorithms":            sshAlgorithms,
	"preferredauthentications": sshAlgorithms,
	"identitiesonly":           sshEnum("yes", "no"),
	"compression":              sshEnum("yes", "no"),
	"addressfamily":            sshEnum("any", "inet", "inet6"),
	"loglevel":                 sshEnum("quiet", "fatal", "error", "info", "verbose", "debug", "debug1", "debug2", "debug3"),
	"identityfile":             sshOptionPath,
	"user":                     sshUser,
	"port":                     sshNumber(1, 65535),
	"connecttimeout":           sshNumber(1, 3600),
	"connectionattempts":       sshNumber(1, 100),
	"serveraliveinterval":      sshNumber(0, 3600),
	"serveralivecountmax":      sshNumber(0, 100),
}

// sshWordRE is one word of an algorithm list ("+ssh-rsa,rsa-sha2-256"):
// nothing ssh's config reader would split (blanks, "=", quotes), expand or
// read as a comment.
var sshWordRE = regexp.MustCompile(`^[+^-]?[A-Za-z0-9@._-]+(,[A-Za-z0-9@._-]+)*$`)

func sshAlgorithms(key, v string) error {
	if len(v) > 1024 || !sshWordRE.MatchString(v) {
		return fmt.Errorf("-o %s=%q: want a comma-separated list of names", key, v)
	}
	return nil
}

// sshEnum accepts one of the words (as ssh does, in any case).
func sshEnum(words ...string) func(key, v string) error {
	return func(key, v string) error {
		if !slices.Contains(words, strings.ToLower(v)) {
			return fmt.Errorf("-o %s=%q: an inventory may set it to %s only", key, v, strings.Join(words, " or "))
		}
		return nil
	}
}

func sshNumber(lo, hi int) func(key, v string) error {
	return func(key, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi || strconv.Itoa(n) != v {
			return fmt.Errorf("-o %s=%q: want a number from %d to %d", key, v, lo, hi)
		}
		return nil
	}
}

// sshOptionPath is a path inside one -o setting, which ssh's config reader
// splits at blanks, "=" and quotes: none of them, nor anything sshPath refuses.
func sshOptionPath(key, v string) error {
	if err := sshPath(key, v); err != nil {
		return err
	}
	if strings.ContainsAny(v, " \t=#") {
		return fmt.Errorf("%s %q: not a plain path", key, v)
	}
	return nil
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
		if err := checkSSHOption(opt); err != nil {
			return err
		}
	}
	if o.BecomeUser != "" {
		if err := shell.User(o.BecomeUser); err != nil {
			return fmt.Errorf("become user: %v", err)
		}
	}
	return nil
}

// sshUser is a user name as -o User takes it: a name shell.User allows (a
// machine account's trailing "$" among them), less the "$" and "%" ssh
// expands in that option's value (${VAR}, %h): found by fuzzing "User=0$".
func sshUser(key, v string) error {
	if strings.ContainsAny(v, "$%") {
		return fmt.Errorf("-o %s=%q: ssh expands $ and %% in it", key, v)
	}
	return shell.User(v)
}

// checkSSHOption validates one Key=Value setting against sshSafeOptions.
func checkSSHOption(opt string) error {
	key, value, ok := strings.Cut(opt, "=")
	if !ok {
		return fmt.Errorf("ssh option %q: want Key=Value", opt)
	}
	check := sshSafeOptions[strings.ToLower(key)]
	if check == nil {
		return fmt.Errorf("ssh option %s is refused: an inventory may say how to reach a host (ProxyJump, port, user, key, algorithms), not make root's ssh write a file, trust host keys less or run a command; put it in your ~/.ssh/config", shell.Comment(key))
	}
	if value == "" || shell.Line(key, value) != nil {
		return fmt.Errorf("-o %s=%q: not a plain value", key, value)
	}
	return check(key, value)
}

// CheckJumpHosts validates a ProxyJump value: [user@]host[:port], comma
// separated, or "none". A machine account's "$" is refused in a hop's user as
// in -o User (sshUser): found by fuzzing "ProxyJump=0$@0".
func CheckJumpHosts(v string) error {
	if v == "none" {
		return nil
	}
	if strings.ContainsAny(v, "$%") {
		return fmt.Errorf("ProxyJump %q: ssh expands $ and %% in it", v)
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
