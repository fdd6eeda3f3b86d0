package target

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSpecJSONRoundTrip: a spec marshals to the text it was written as, and
// that text reads back to a spec that is the same host.
func TestSpecJSONRoundTrip(t *testing.T) {
	for _, text := range []string{"local", "netns:site-a", "ssh:golem", "ssh:root@golem:2222", "ssh:root@[2001:db8::1]:22", "ssh:fe80::1%eth0"} {
		s := MustParseSpec(text)
		b, err := json.Marshal(struct {
			Host Spec `json:"host"`
		}{s})
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"host":` + quoteJSON(text) + `}`; string(b) != want {
			t.Errorf("%s marshals as %s, want %s", text, b, want)
		}
		var back struct {
			Host Spec `json:"host"`
		}
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if !back.Host.Same(s) || back.Host.String() != text {
			t.Errorf("%s reads back as %q", b, back.Host)
		}
		if _, err := back.Host.Open(); err != nil {
			t.Errorf("%s read back does not open: %v", text, err)
		}
	}
}

func quoteJSON(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestSpecUnmarshalRefusesMalformed: a document's host that is no target
// spec is an error of one line that quotes it; "" is no host.
func TestSpecUnmarshalRefusesMalformed(t *testing.T) {
	for _, tt := range []struct{ doc, want string }{
		{`"golem"`, `target "golem": want local, netns:NAME or ssh:[user@]host[:port]`},
		{`"netns:a/b"`, `target "netns:a/b": netns name must be a plain name`},
		{`"ssh:-oProxyCommand=x"`, `target "ssh:-oProxyCommand=x": host`},
		{`"ssh:golem:99999"`, `bad port "99999"`},
		{`"ssh:root@golem\n# forged"`, `target "ssh:root@golem\n# forged"`},
		{`"netns:\u001b[2J"`, `target "netns:\x1b[2J"`},
		{`42`, `cannot unmarshal number`},
	} {
		var s Spec
		err := json.Unmarshal([]byte(tt.doc), &s)
		if err == nil {
			t.Errorf("%s: read as %q, want an error", tt.doc, s)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %q, want one line containing %q", tt.doc, err, tt.want)
		}
	}
	var s Spec
	if err := json.Unmarshal([]byte(`""`), &s); err != nil || !s.IsZero() {
		t.Errorf(`"" reads as %q, %v; want the zero Spec`, s, err)
	}
	if b, _ := json.Marshal(Spec{}); string(b) != `""` {
		t.Errorf("the zero Spec marshals as %s", b)
	}
}

// TestSpecSame: specs of one host however spelled are Same, and Key agrees;
// a user or port left to the ssh config is not the same as one given.
func TestSpecSame(t *testing.T) {
	same := [][2]string{
		{"", "local"},
		{"ssh:[2001:db8::1]", "ssh:2001:db8::1"},
		{"ssh:[golem]:22", "ssh:golem:22"},
		{"ssh:root@[golem]", "ssh:root@golem"},
		{"netns:a", "netns:a"},
	}
	for _, p := range same {
		a, b := MustParseSpec(p[0]), MustParseSpec(p[1])
		if !a.Same(b) || !b.Same(a) || a.Key() != b.Key() || !a.Equal(b) {
			t.Errorf("%q and %q: not the same host", p[0], p[1])
		}
	}
	differ := [][2]string{
		{"ssh:root@h", "ssh:root@h:22"}, // the ssh config may give h another port
		{"ssh:h", "ssh:root@h"},         // or another user
		{"ssh:root@h", "ssh:admin@h"},
		{"netns:a", "netns:b"},
		{"local", "netns:local"},
		{"ssh:a", "netns:a"},
	}
	for _, p := range differ {
		a, b := MustParseSpec(p[0]), MustParseSpec(p[1])
		if a.Same(b) || a.Key() == b.Key() {
			t.Errorf("%q and %q: the same host", p[0], p[1])
		}
	}
	if !(Spec{}).Same(Spec{}) || (Spec{}).Same(MustParseSpec("local")) {
		t.Error("the zero Spec is Same only as itself")
	}
}

// fakeTarget is a Target whose String is any text, as a test's stand-in's.
type fakeTarget struct {
	Target
	name string
}

func (f fakeTarget) String() string { return f.name }

// TestOf: an open target's spec is the one it was opened from; a stand-in
// named by no spec keeps its name, is Same only as itself and opens nothing.
func TestOf(t *testing.T) {
	tg, err := Parse("ssh:root@[golem]:2222")
	if err != nil {
		t.Fatal(err)
	}
	if s := Of(tg); !s.Same(MustParseSpec("ssh:root@golem:2222")) || s.Kind() != &sshKind {
		t.Errorf("Of(%s) = %q", tg, s)
	}
	odd := Of(fakeTarget{name: "the other end"})
	if odd.String() != "the other end" || odd.IsZero() || !odd.Same(Of(fakeTarget{name: "the other end"})) || odd.Same(Of(fakeTarget{name: "b"})) {
		t.Errorf("a stand-in's spec: %q", odd)
	}
	if _, err := odd.Open(); err == nil {
		t.Error("a stand-in's spec opened")
	}
}
