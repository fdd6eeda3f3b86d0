package target

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kindExamples is a spec of every kind, opened and matched below: a new kind
// without one fails TestKindsAreComplete.
var kindExamples = map[string]string{
	"local": "local",
	"netns": "netns:site-a",
	"ssh":   "ssh:root@golem:2222",
}

// TestKindsAreComplete: every kind has each of its parts, a prefix no other
// kind's overlaps, and a spec that parses back to it, opens as itself and
// is offered by help and errors.
func TestKindsAreComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Kinds() {
		switch {
		case k.Name == "" || k.Prefix == "" || k.Help == "":
			t.Errorf("kind %+v: name, prefix and help line are required", *k)
		case !strings.HasPrefix(k.Syntax, k.Prefix):
			t.Errorf("kind %s: syntax %q does not start with its prefix %q", k.Name, k.Syntax, k.Prefix)
		case k.parse == nil || k.open == nil || k.complete == nil:
			t.Errorf("kind %s: parse, open and complete are required", k.Name)
		case k.Probe != ProbeNever && k.Probe != ProbeAllowed:
			t.Errorf("kind %s: say whether the exporter may probe it (ProbeNever or ProbeAllowed)", k.Name)
		case (k.Probe == ProbeAllowed) != (k.pattern != nil):
			t.Errorf("kind %s: a kind the exporter may probe has a --probe.allow pattern, and only it", k.Name)
		}
		if seen[k.Name] {
			t.Errorf("kind %s listed twice", k.Name)
		}
		seen[k.Name] = true
		for _, other := range Kinds() {
			if other != k && strings.HasPrefix(other.Prefix, k.Prefix) {
				t.Errorf("kind %s's prefix %q also starts kind %s's %q", k.Name, k.Prefix, other.Name, other.Prefix)
			}
		}
		if !strings.Contains(Syntax(), k.Syntax) || !strings.Contains(Help(), k.Help) {
			t.Errorf("kind %s: missing from Syntax %q or Help", k.Name, Syntax())
		}
		example, ok := kindExamples[k.Name]
		if !ok {
			t.Errorf("kind %s: no example spec in kindExamples", k.Name)
			continue
		}
		s, err := ParseSpec(example)
		if err != nil || s.Kind() != k || s.String() != example {
			t.Errorf("ParseSpec(%q) = %v (kind %v), %v; want kind %s", example, s, s.Kind(), err, k.Name)
			continue
		}
		if tg, err := s.Open(); err != nil || tg.String() != example {
			t.Errorf("%q opens as %v, %v", example, tg, err)
		} else if again, err := SpecOf(tg); err != nil || again.Kind() != k {
			t.Errorf("SpecOf(%q) = %v, %v", example, again, err)
		}
		if k.Probe != ProbeAllowed {
			continue
		}
		if admits, ok, err := Pattern(example); !ok || err != nil || !admits(s) {
			t.Errorf("pattern %q: ok %v, %v; want it to admit itself", example, ok, err)
		}
	}
	if len(kindExamples) != len(Kinds()) {
		t.Errorf("kindExamples names %d kinds, there are %d", len(kindExamples), len(Kinds()))
	}
}

// TestPatternKeepsToItsKind: a pattern admits specs of its own kind only.
func TestPatternKeepsToItsKind(t *testing.T) {
	sshAny, ok, err := Pattern("ssh:*")
	if !ok || err != nil {
		t.Fatalf("Pattern(ssh:*) = %v, %v", ok, err)
	}
	for _, spec := range []string{"local", "netns:golem"} {
		s, _ := ParseSpec(spec)
		if sshAny(s) {
			t.Errorf("ssh:* admits %s", spec)
		}
	}
	if _, ok, _ := Pattern("telnet:golem"); ok {
		t.Error("a pattern of no kind was read")
	}
}

func TestSpecParts(t *testing.T) {
	s, err := ParseSpec("ssh:ops@[2001:db8::1]:22")
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := s.SSH(); !ok || a != (SSHAddress{User: "ops", Host: "2001:db8::1", Port: 22}) {
		t.Errorf("SSH() = %+v, %v", a, ok)
	}
	if _, ok := s.Netns(); ok {
		t.Error("an ssh spec has a netns name")
	}
	n, _ := ParseSpec("netns:site-b")
	if name, ok := n.Netns(); !ok || name != "site-b" {
		t.Errorf("Netns() = %q, %v", name, ok)
	}
	if _, ok := n.SSH(); ok {
		t.Error("a netns spec has an ssh address")
	}
	if l, err := ParseSpec(""); err != nil || l.String() != "local" || !l.Kind().ThisKernel {
		t.Errorf(`ParseSpec("") = %v, %v; want local`, l, err)
	}
	if _, err := (Spec{}).Open(); err == nil {
		t.Error("the zero Spec opened")
	}
	if got, want := FlagHelp("target to watch"), "target to watch: local, netns:NAME or ssh:[user@]host[:port]"; got != want {
		t.Errorf("FlagHelp = %q, want %q", got, want)
	}
}

func TestSSHConfigHosts(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(cfg, []byte("Host golem m42\n  User root\nHost *.lan !bad\nhost router\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(sshConfigHostsIn(cfg, ""), " "); got != "golem m42 router" {
		t.Errorf("ssh config hosts = %q", got)
	}
}
