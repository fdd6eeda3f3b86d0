package target

import (
	"errors"
	"os"
	"path"
	"regexp"
)

// netnsKind is a network namespace on this machine, entered with "ip netns exec".
var netnsKind = Kind{
	Name:       "netns",
	Prefix:     "netns:",
	Syntax:     "netns:NAME",
	Help:       "a network namespace on this machine (ip netns)",
	ThisKernel: true,
	Probe:      ProbeAllowed,
	parse: func(name string) (any, error) {
		if !netnsRE.MatchString(name) {
			return nil, errors.New("netns name must be a plain name, as in netns:site-a")
		}
		return netnsName(name), nil
	},
	open: func(s Spec, o HostSSH) (Target, error) {
		if !o.IsZero() {
			return nil, errSSHOnly(s)
		}
		name, _ := s.Netns()
		return Netns(name), nil
	},
	complete: func() []string {
		var out []string
		entries, _ := os.ReadDir("/run/netns")
		for _, e := range entries {
			out = append(out, "netns:"+e.Name())
		}
		return out
	},
	// A pattern is a path.Match glob of the name: netns:site-*.
	pattern: func(glob string) (func(Spec) bool, error) {
		if _, err := path.Match(glob, ""); err != nil || glob == "" {
			return nil, errors.New("want netns:NAME, NAME a name or a pattern like site-*")
		}
		return func(s Spec) bool {
			name, _ := s.Netns()
			ok, _ := path.Match(glob, name)
			return ok
		}, nil
	},
}

// netnsName is a netns spec's parsed form: a name ip netns accepts.
type netnsName string

// netnsRE is what ip netns accepts as a name and no program reads as an option.
var netnsRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$`)
