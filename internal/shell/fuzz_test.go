package shell

import (
	"strings"
	"testing"
)

// unquote reverses Quote the way a POSIX shell reads one word.
func unquote(s string) (string, bool) {
	if !strings.HasPrefix(s, "'") {
		return s, strings.Trim(s, plain) == "" && s != ""
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case s[i] == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return "", false
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 2
		case strings.HasPrefix(s[i:], `\'`):
			b.WriteByte('\'')
			i += 2
		default:
			return "", false
		}
	}
	return b.String(), true
}

func FuzzQuote(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := Quote(s)
		got, ok := unquote(q)
		if !ok || got != s {
			t.Fatalf("Quote(%q) = %s reads back as %q (ok %v)", s, q, got, ok)
		}
	})
}

func FuzzCommentAndTerminal(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if c := Comment(s); !printable(c) {
			t.Fatalf("Comment(%q) = %q holds control characters", s, c)
		}
		if c := Terminal(s); !printable(strings.NewReplacer("\n", "", "\t", "").Replace(c)) {
			t.Fatalf("Terminal(%q) = %q holds control characters", s, c)
		}
	})
}

// FuzzTerminalWriter: however the text is split into writes, no escape
// sequence but wgperf's own colours comes out.
func FuzzTerminalWriter(f *testing.F) {
	f.Add("\x1b[31mred\x1b[0m \x1b]0;t\x07", 3)
	f.Add("caf\xc3\xa9 \xc2\x9b2J", 5)
	f.Fuzz(func(t *testing.T, s string, cut int) {
		var b strings.Builder
		w := NewTerminalWriter(&b)
		if cut < 0 {
			cut = -cut
		}
		for len(s) > 0 {
			n := cut%7 + 1
			if n > len(s) {
				n = len(s)
			}
			_, _ = w.Write([]byte(s[:n]))
			s = s[n:]
		}
		_ = w.Flush()
		out := b.String()
		for _, k := range sgrKept {
			out = strings.ReplaceAll(out, k, "")
		}
		out = strings.NewReplacer("\n", "", "\t", "").Replace(out)
		if !printable(out) {
			t.Fatalf("raw control characters in %q", b.String())
		}
	})
}

// FuzzHostUser: what the ssh validators accept can be neither an option nor
// shell syntax.
func FuzzHostUser(f *testing.F) {
	f.Add("golem")
	f.Add("-oProxyCommand=x")
	f.Add("fe80::1%eth0")
	f.Fuzz(func(t *testing.T, s string) {
		bad := func(s string) bool {
			return strings.HasPrefix(s, "-") || strings.ContainsAny(s, " \t\n;|&$`'\"\\<>(){}*?/") || !printable(s)
		}
		if Host(s) == nil && bad(s) {
			t.Fatalf("host %q accepted", s)
		}
		// A trailing "$" (Windows machine accounts) expands to nothing in a shell.
		if User(s) == nil && bad(strings.TrimSuffix(s, "$")) {
			t.Fatalf("user %q accepted", s)
		}
	})
}
