// Package shell is the one place where wgperf turns values into shell text and
// checks text that others control before it gets near a command.
//
// Quote and Join make any string a single shell word. Comment and Terminal
// make foreign text safe to show: after a "#" in a script, where a newline
// would end the comment and start a command, and on a terminal, where an
// escape sequence would drive the terminal. The validators (Iface, Host,
// User, UCIKey, UCISection, SysctlName, SysctlValue) accept only the grammar of
// one kind of value and name that kind in their error.
package shell

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// plain are the bytes a word may hold and still need no quotes in a POSIX shell.
const plain = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,@%+"

// Quote quotes s as one word for a POSIX shell, leaving plain words as they are.
func Quote(s string) string {
	if s != "" && strings.Trim(s, plain) == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Join renders a program and its arguments as one shell command line.
func Join(name string, args ...string) string {
	parts := make([]string, 0, len(args)+1)
	parts = append(parts, Quote(name))
	for _, a := range args {
		parts = append(parts, Quote(a))
	}
	return strings.Join(parts, " ")
}

// Printf is a printf(1) command line that prints s exactly. Control
// characters other than newline and tab, and bytes that are not UTF-8, are
// spelled out in octal (printf %b reads them back), so the line holds none of
// them raw: a script that writes a file with a carriage return or an escape
// sequence in it stays readable, and shows the same on any output.
func Printf(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case (r == utf8.RuneError && n <= 1) || isControl(r):
			for _, c := range []byte(s[i : i+n]) {
				fmt.Fprintf(&b, `\0%03o`, c)
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return "printf '%b' " + Quote(b.String())
}

// Comment makes s safe to print after "#" on one line of a shell script:
// newlines, carriage returns and every other control character are shown
// escaped ("\n", "\x1b"), as is invalid UTF-8, so the comment cannot end early.
func Comment(s string) string { return escape(s, false) }

// Terminal makes foreign text safe to print on a terminal: it keeps newlines
// and tabs and escapes every other control character (ESC, CSI, BEL, ...) and
// invalid UTF-8, so a value cannot move the cursor, retitle the window or
// hide what precedes it.
func Terminal(s string) string { return escape(s, true) }

// escape writes s with control characters spelled out; keepLines keeps \n and \t.
func escape(s string, keepLines bool) string {
	if clean(s, keepLines) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case isControl(r):
			b.WriteString(escapeRune(r))
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}

// escapeRune spells out a control character: \xHH for C0 (as in the
// shell's $'...'), \uHHHH from DEL on. JSON reads \uHHHH as the character
// itself, so a JSON document passed through TerminalWriter keeps its values
// (encoding/json already escapes C0; DEL, C1 and bidi controls it leaves raw).
func escapeRune(r rune) string {
	if r < 0x20 {
		return fmt.Sprintf(`\x%02x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}

func clean(s string, keepLines bool) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			return false
		}
		if isControl(r) && !(keepLines && (r == '\n' || r == '\t')) {
			return false
		}
		i += n
	}
	return true
}

// isControl reports C0 and C1 controls, DEL, and the Unicode line and
// paragraph separators and bidirectional overrides that reorder what a
// reader sees.
func isControl(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r == 0x2028, r == 0x2029: // line and paragraph separator
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069: // bidi embedding, override, isolate
		return true
	}
	return false
}
