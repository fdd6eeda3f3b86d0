package target

import "strings"

// Kind is one kind of host a target spec can name, with everything wgperf
// needs to know about it in one value: how it is written and parsed, its
// help line, what shell completion offers, whether the exporter may probe it
// and how its Target opens. A new kind is its file (the Kind value and its
// Target) and its line in kinds; TestKindsAreComplete fails on a kind that
// lacks a part.
type Kind struct {
	Name string // "ssh"
	// Prefix starts every spec of the kind ("ssh:"); a prefix without a
	// colon is the whole spec ("local").
	Prefix string
	Syntax string // how a spec is written, for help and errors: "ssh:[user@]host[:port]"
	Help   string // what it reaches, one line: "a machine reached with the system ssh client"
	// ThisKernel is true when the host's programs run on the kernel wgperf
	// runs on (a drop sampler attaches in-process rather than over the wire).
	ThisKernel bool
	// Probe says whether "wgperf exporter" may collect the kind's hosts
	// when a scrape names one (--probe.allow patterns then admit them).
	Probe ProbePolicy

	// parse validates what follows the prefix and returns the kind's
	// parsed address (kept in Spec.addr); its error does not repeat the spec.
	parse func(rest string) (any, error)
	// open returns the Target of a parsed spec; o are an inventory's ssh
	// settings, which a kind not reached with ssh refuses unless empty.
	open func(s Spec, o HostSSH) (Target, error)
	// complete lists the specs of this kind shell completion offers.
	complete func() []string
	// pattern parses a --probe.allow pattern's text after the prefix into
	// the test a parsed spec of this kind must pass (ProbeAllowed kinds).
	pattern func(rest string) (func(Spec) bool, error)
}

// ProbePolicy is whether the exporter may probe a kind's hosts.
type ProbePolicy int

// A kind must say one or the other: the zero value is a mistake the
// kinds' test catches.
const (
	probeUnset   ProbePolicy = iota
	ProbeNever               // never, whatever --probe.allow says
	ProbeAllowed             // when a --probe.allow pattern admits the host
)

// kinds is every kind of target, in the order help and errors list them.
var kinds = []*Kind{&localKind, &netnsKind, &sshKind}

// Kinds lists every kind of target.
func Kinds() []*Kind { return kinds }

// claim reports whether text is written in k and returns what follows the prefix.
func (k *Kind) claim(text string) (rest string, ok bool) {
	if !strings.HasSuffix(k.Prefix, ":") {
		return "", text == k.Prefix
	}
	return strings.CutPrefix(text, k.Prefix)
}

// Pattern parses a --probe.allow pattern into the test a spec must pass;
// ok is false when the pattern is written in no kind the exporter may probe.
func Pattern(pattern string) (admits func(Spec) bool, ok bool, err error) {
	k, rest, found := kindOf(pattern)
	if !found || k.Probe != ProbeAllowed {
		return nil, false, nil
	}
	match, err := k.pattern(rest)
	if err != nil {
		return nil, true, err
	}
	return func(s Spec) bool { return s.kind == k && match(s) }, true, nil
}
