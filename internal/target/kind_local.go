package target

import "fmt"

// localKind is the machine wgperf runs on.
var localKind = Kind{
	Name:       "local",
	Prefix:     "local",
	Syntax:     "local",
	Help:       "the machine wgperf runs on (the default)",
	ThisKernel: true,
	Probe:      ProbeAllowed,
	parse:      func(string) (any, error) { return nil, nil },
	open: func(s Spec, o HostSSH) (Target, error) {
		if !o.IsZero() {
			return nil, errSSHOnly(s)
		}
		return Local(), nil
	},
	complete: func() []string { return []string{"local"} },
	// "local" as a pattern admits this machine; there is nothing to match.
	pattern: func(string) (func(Spec) bool, error) { return func(Spec) bool { return true }, nil },
}

// errSSHOnly refuses ssh settings for a kind not reached with ssh.
func errSSHOnly(s Spec) error {
	return fmt.Errorf("target %q: ssh settings (key, options, become) apply to ssh targets only", s)
}
