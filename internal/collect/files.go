package collect

import (
	"bufio"
	"io"
	"strings"
)

// fileRead is the outcome of reading one file on the target.
type fileRead struct {
	Content string // lines joined with "\n", ending in "\n"
	Err     string // "No such file or directory", "Permission denied"...; "" when read
}

// parseGrepFiles parses the output of "grep -H ” FILE..." run with stderr merged
// into stdout: content lines are "PATH:line", failures "grep: PATH: reason". One
// grep process reads every small /proc and /sys file in a single round trip.
// Paths must not contain ':', which holds for /proc/sys and /sys/class/net
// (interface names cannot contain ':').
func parseGrepFiles(r io.Reader) map[string]*fileRead {
	out := map[string]*fileRead{}
	content := map[string]*strings.Builder{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "grep: "); ok {
			path, reason, ok := strings.Cut(rest, ": ")
			if ok && strings.HasPrefix(path, "/") {
				if _, seen := out[path]; !seen {
					out[path] = &fileRead{Err: reason}
				}
			}
			continue
		}
		path, text, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(path, "/") {
			continue
		}
		b := content[path]
		if b == nil {
			b = &strings.Builder{}
			content[path] = b
		}
		b.WriteString(text)
		b.WriteByte('\n')
	}
	for path, b := range content {
		out[path] = &fileRead{Content: b.String()}
	}
	return out
}
