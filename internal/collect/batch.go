package collect

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// A shellCmd is one source in a batch: a POSIX shell snippet and the key its
// output is filed under.
type shellCmd struct {
	key    string
	script string
}

// cmdResult is what one snippet printed and how it exited.
type cmdResult struct {
	Out    string
	Stderr string
	Code   int
}

// Exit codes the snippets use on top of the shell's own 127 (command not found).
const (
	codeSkipped = 200 // the source does not apply to this host (no OpenWrt...)
	codeCut     = 201 // wgperf stopped the batch in this snippet: it printed too much (Stderr says how much)
)

// batchMark separates the snippets' outputs; it cannot occur in the sources read.
const batchMark = "@@wgperf-collect@@"

// batchPrelude sets up fd 3 (the real stdout) so each snippet's stderr can be
// captured separately, and two helpers the snippets call.
const batchPrelude = `exec 3>&1
M='` + batchMark + `'
skip() { return ` + "200" + `; }
missing() { echo "$1: not found" >&2; return 127; }
`

// batchScript renders cmds as one shell script, so a whole group of sources
// costs one process (and, over ssh, one connection).
func batchScript(cmds []shellCmd) string {
	var b strings.Builder
	b.WriteString(batchPrelude)
	for _, c := range cmds {
		fmt.Fprintf(&b, "printf '%%s out %s\\n' \"$M\"\n", c.key)
		fmt.Fprintf(&b, "e=$( { %s\n} 2>&1 >&3 3>&-); rc=$?\n", c.script)
		fmt.Fprintf(&b, "printf '\\n%%s err %s %%d\\n%%s\\n' \"$M\" \"$rc\" \"$e\"\n", c.key)
	}
	return b.String()
}

// runBatch runs cmds in one "sh -c" on t and splits the output per key. The
// error is non-nil only when the shell itself could not run.
func runBatch(ctx context.Context, t target.Target, cmds []shellCmd) (map[string]cmdResult, error) {
	out, err := t.Run(ctx, "sh", "-c", batchScript(cmds))
	res := parseBatch(string(out))
	var te *target.Error
	if errors.Is(err, target.ErrOutputTooLarge) && errors.As(err, &te) {
		// The snippet that was printing when the output was cut is the one
		// to blame; those after it never ran.
		if key := lastStarted(string(out)); key != "" {
			if _, done := res[key]; !done {
				res[key] = cmdResult{Code: codeCut, Stderr: te.Err.Error()}
			}
		}
	}
	if err != nil && len(res) == 0 {
		return nil, err
	}
	return res, nil
}

// lastStarted is the key of the last snippet whose output began, "" for none.
func lastStarted(out string) string {
	i := strings.LastIndex(out, batchMark+" out ")
	if i < 0 {
		return ""
	}
	key, _, ok := strings.Cut(out[i+len(batchMark+" out "):], "\n")
	if !ok {
		return ""
	}
	return key
}

// parseBatch splits the batch script's output into results by key.
func parseBatch(out string) map[string]cmdResult {
	res := map[string]cmdResult{}
	outPrefix := batchMark + " out "
	for {
		i := strings.Index(out, outPrefix)
		if i < 0 {
			return res
		}
		out = out[i+len(outPrefix):]
		key, rest, ok := strings.Cut(out, "\n")
		if !ok {
			return res
		}
		errPrefix := "\n" + batchMark + " err " + key + " "
		j := strings.Index(rest, errPrefix)
		if j < 0 {
			return res // truncated: the shell died mid-snippet
		}
		r := cmdResult{Out: rest[:j]}
		rest = rest[j+len(errPrefix):]
		codeText, rest, _ := strings.Cut(rest, "\n")
		r.Code, _ = strconv.Atoi(codeText)
		if k := strings.Index(rest, batchMark+" out "); k >= 0 {
			r.Stderr, out = rest[:k], rest[k:]
		} else {
			r.Stderr, out = rest, ""
		}
		r.Stderr = strings.TrimSpace(r.Stderr)
		res[key] = r
	}
}

// ReadFiles reads several files of t, in one process where reading costs one
// (a namespace's "ip netns exec", an ssh round trip): path → contents, for
// the files that could be read. Bench samples counters this way before and
// after every run, on both ends.
func ReadFiles(ctx context.Context, t target.Target, paths ...string) map[string][]byte {
	out := map[string][]byte{}
	oneByOne := func() map[string][]byte {
		for _, p := range paths {
			if b, err := t.ReadFile(ctx, p); err == nil {
				out[p] = b
			}
		}
		return out
	}
	if t == target.Local() {
		return oneByOne()
	}
	cmds := make([]shellCmd, len(paths))
	for i, p := range paths {
		cmds[i] = shellCmd{key: "file" + strconv.Itoa(i), script: "cat " + shell.Quote(p)}
	}
	res, err := runBatch(ctx, t, cmds)
	if err != nil || len(res) == 0 {
		return oneByOne() // no shell to batch in: the target's own reads
	}
	for i, p := range paths {
		if r, ok := res["file"+strconv.Itoa(i)]; ok && r.Code == 0 {
			out[p] = []byte(r.Out)
		}
	}
	return out
}
