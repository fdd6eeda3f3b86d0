package shell

import (
	"fmt"
	"io"
	"sync"
	"unicode/utf8"
)

// sgrKept are the SGR sequences wgperf itself uses for colour and weight;
// every other escape sequence (cursor moves, erases, titles, hidden text)
// that foreign text might carry is shown escaped.
var sgrKept = []string{"\x1b[0m", "\x1b[1m", "\x1b[2m", "\x1b[22m", "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[34m", "\x1b[36m", "\x1b[39m"}

// TerminalWriter is an io.Writer for wgperf's standard output, a terminal or
// not (| tee, > file), that passes text, newlines, tabs and wgperf's own
// colours through and escapes every other control character as Terminal
// does. JSON passes with its values intact (see escapeRune). It keeps an
// incomplete UTF-8 character or colour sequence at the end of a write for
// the next one; Flush writes it out.
type TerminalWriter struct {
	mu      sync.Mutex // progress lines may come from several goroutines
	w       io.Writer
	pending []byte
}

// NewTerminalWriter returns a TerminalWriter writing to w.
func NewTerminalWriter(w io.Writer) *TerminalWriter { return &TerminalWriter{w: w} }

func (t *TerminalWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	buf := append(t.pending, p...)
	t.pending = nil
	out := make([]byte, 0, len(buf))
	for i := 0; i < len(buf); {
		c := buf[i]
		if c == 0x1b {
			n, partial := sgrAt(buf[i:])
			if partial {
				t.pending = append([]byte(nil), buf[i:]...)
				break
			}
			if n > 0 {
				out = append(out, buf[i:i+n]...)
				i += n
				continue
			}
		}
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				out = append(out, escapeRune(rune(c))...)
			} else {
				out = append(out, c)
			}
			i++
			continue
		}
		if !utf8.FullRune(buf[i:]) {
			t.pending = append([]byte(nil), buf[i:]...)
			break
		}
		r, n := utf8.DecodeRune(buf[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = fmt.Appendf(out, `\x%02x`, c)
		case isControl(r):
			out = append(out, escape(string(r), true)...)
		default:
			out = append(out, buf[i:i+n]...)
		}
		i += n
	}
	if _, err := t.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes out what Write kept back, escaped.
func (t *TerminalWriter) Flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.pending) == 0 {
		return nil
	}
	_, err := io.WriteString(t.w, escape(string(t.pending), true))
	t.pending = nil
	return err
}

// sgrAt reports the length of a kept SGR sequence at the start of b, or
// partial when b ends inside what could still become one.
func sgrAt(b []byte) (n int, partial bool) {
	for _, s := range sgrKept {
		switch {
		case len(b) >= len(s) && string(b[:len(s)]) == s:
			return len(s), false
		case len(b) < len(s) && string(b) == s[:len(b)]:
			partial = true
		}
	}
	return 0, partial
}
