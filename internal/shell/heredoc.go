package shell

import (
	"errors"
	"strings"
)

// HereEnd is the terminator line of every here-document wgperf writes.
const HereEnd = "WGPERF_EOF"

// HereDoc is the one here-document of wgperf: cmd with body on its standard
// input, as cmd <<'WGPERF_EOF', the body, then the terminator line. The body
// is quoted (no expansion), so only a line of its own that is the terminator
// could end it early and make every line after it a command: HereDoc refuses
// such a body, and one that does not end in a newline (the document would
// add one) or holds a raw control character other than newline and tab (a
// printed script must show none). Text read from a host goes into a script
// through HereDoc or Stdin, never pasted beside a terminator.
func HereDoc(cmd, body string) (string, error) {
	switch {
	case !strings.HasSuffix(body, "\n"):
		return "", errors.New("a here-document's body must end with a newline")
	case strings.HasPrefix(body, HereEnd+"\n") || strings.Contains(body, "\n"+HereEnd+"\n"):
		return "", errors.New("the text holds the line " + HereEnd + ", which would end its here-document early")
	case Terminal(body) != body:
		return "", errors.New("the text holds a control character a script must not show raw")
	}
	return cmd + " <<'" + HereEnd + "'\n" + body + HereEnd, nil
}

// Stdin is the shell that runs cmd with body, exactly, on its standard input:
// the here-document HereDoc writes when it accepts body, otherwise body
// quoted as one printf word piped into cmd (control characters in octal, as
// Printf does). Either way no line of body can become a command.
func Stdin(cmd, body string) string {
	if doc, err := HereDoc(cmd, body); err == nil {
		return doc
	}
	return PrintfWord(body) + " | " + cmd
}

// PrintfWord is a printf(1) command that prints s exactly: s as one quoted
// word, or through Printf when it holds control characters.
func PrintfWord(s string) string {
	if Terminal(s) != s {
		return Printf(s)
	}
	return "printf '%s' " + Quote(s)
}
