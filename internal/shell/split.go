package shell

import (
	"fmt"
	"strings"
)

// Split splits s into words the way a POSIX shell does for one kind of
// quote: quote toggles quoting, blanks outside quotes separate words, and a
// backslash escapes the next byte outside quotes and, in double quotes, inside.
func Split(s string, quote byte) ([]string, error) {
	var out []string
	var cur strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && (!quoted || quote == '"'):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == quote:
			quoted = !quoted
			inWord = true
		case (c == ' ' || c == '\t') && !quoted:
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("unterminated quote in %q", s)
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out, nil
}
