package target

import (
	"fmt"
	"strings"
)

// Spec is a target spec parsed once: which kind of host it names and that
// kind's own parsed address. Packages take a Spec and ask it (Kind, SSH,
// Netns, Open) instead of looking at the text again. The zero Spec is
// invalid; get one from ParseSpec.
//
// Two specs are compared with Same (identity.go), never ==, which would
// compare their spelling: Spec is not comparable, so the compiler holds
// every comparison to Same, and a map of hosts is keyed by Key.
type Spec struct {
	_    [0]func() // not comparable: Same, or Key for a map
	kind *Kind
	text string // as the user wrote it: String, and what errors name
	addr any    // the kind's parsed form, a comparable value (netnsName, SSHAddress)
}

// ParseSpec parses a target spec: "" is "local"; otherwise the kind whose
// prefix it starts with parses the rest.
func ParseSpec(text string) (Spec, error) {
	if text == "" {
		text = localKind.Prefix
	}
	k, rest, ok := kindOf(text)
	if !ok {
		return Spec{}, fmt.Errorf("target %q: want %s", text, Syntax())
	}
	addr, err := k.parse(rest)
	if err != nil {
		return Spec{}, fmt.Errorf("target %q: %v", text, err)
	}
	return Spec{kind: k, text: text, addr: addr}, nil
}

// IsSpec reports whether text starts as a target spec of some kind (it may
// still fail to parse): an inventory line that is not one names an Ansible
// host instead.
func IsSpec(text string) bool {
	_, _, ok := kindOf(text)
	return ok
}

// Parse turns a spec into a Target: ParseSpec, then Open.
func Parse(text string) (Target, error) {
	s, err := ParseSpec(text)
	if err != nil {
		return nil, err
	}
	return s.Open()
}

// ParseAll parses each spec (Parse), failing on the first bad one.
func ParseAll(specs []string) ([]Target, error) {
	var out []Target
	for _, s := range specs {
		t, err := Parse(s)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// String is the spec as written ("local", "netns:a", "ssh:root@golem").
func (s Spec) String() string { return s.text }

// Kind is the kind of host s names.
func (s Spec) Kind() *Kind { return s.kind }

// Open returns the Target s names.
func (s Spec) Open() (Target, error) { return s.OpenWith(HostSSH{}) }

// OpenWith is Open with a host's ssh settings (an inventory's key, options,
// become); only a kind reached with ssh takes them.
func (s Spec) OpenWith(o HostSSH) (Target, error) {
	if s.kind == nil {
		return nil, fmt.Errorf("target: empty spec")
	}
	return s.kind.open(s, o)
}

// SSH is who an ssh spec logs in as and where; ok is false for any other kind.
func (s Spec) SSH() (a SSHAddress, ok bool) {
	a, ok = s.addr.(SSHAddress)
	return a, ok
}

// Netns is a netns spec's namespace name; ok is false for any other kind.
func (s Spec) Netns() (name string, ok bool) {
	v, ok := s.addr.(netnsName)
	return string(v), ok
}

// SpecOf is the spec of an open target (a fake one's String must parse too).
func SpecOf(t Target) (Spec, error) { return ParseSpec(t.String()) }

// kindOf finds the kind a spec's text is written in and returns the text
// after its prefix.
func kindOf(text string) (k *Kind, rest string, ok bool) {
	for _, k := range Kinds() {
		if rest, ok := k.claim(text); ok {
			return k, rest, true
		}
	}
	return nil, "", false
}

// Syntax is how a target is written, one form per kind, for help and errors:
// "local, netns:NAME or ssh:[user@]host[:port]".
func Syntax() string { return syntaxOf(Kinds()) }

// ProbeSyntax is Syntax for the kinds the exporter may probe.
func ProbeSyntax() string {
	var ks []*Kind
	for _, k := range Kinds() {
		if k.Probe == ProbeAllowed {
			ks = append(ks, k)
		}
	}
	return syntaxOf(ks)
}

func syntaxOf(ks []*Kind) string {
	forms := make([]string, len(ks))
	for i, k := range ks {
		forms[i] = k.Syntax
	}
	if len(forms) < 2 {
		return strings.Join(forms, "")
	}
	return strings.Join(forms[:len(forms)-1], ", ") + " or " + forms[len(forms)-1]
}

// FlagHelp is a target flag's usage: what the flag's host does, then how a
// target is written ("target to watch: local, netns:NAME or ssh:...").
func FlagHelp(what string) string { return what + ": " + Syntax() }

// Help is one line per kind, for a command's long help: its form and what
// it reaches.
func Help() string {
	var b strings.Builder
	for _, k := range Kinds() {
		fmt.Fprintf(&b, "  %-24s %s\n", k.Syntax, k.Help)
	}
	return b.String()
}

// Complete lists the targets shell completion offers: each kind's own
// (this machine, its network namespaces, the hosts of ~/.ssh/config and
// ~/.ssh/known_hosts).
func Complete() []string {
	var out []string
	for _, k := range Kinds() {
		out = append(out, k.complete()...)
	}
	return out
}
