package collect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
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
// the files that could be read.
func ReadFiles(ctx context.Context, t target.Target, paths ...string) map[string][]byte {
	files, _, _ := readSample(ctx, t, paths, false, false)
	return files
}

// globSafe is what a path ReadSample expands may be made of: its own
// constants' letters, never a shell's quoting or substitution.
var globSafe = regexp.MustCompile(`^/[A-Za-z0-9_./*-]+$`)

// isGlob says p is a sysfs glob for the target's shell to expand.
func isGlob(p string) bool { return strings.Contains(p, "*") && globSafe.MatchString(p) }

// grepGlob reads every file p matches, each line as "path:line" (one grep,
// as Collect reads its globs); a glob that matches nothing prints nothing.
func grepGlob(p string) string { return grepFiles([]string{p}) }

// grepFiles reads the files args name (quoted paths, or globs for the shell
// to expand) in one grep: each line as "path:line", a missing trailing
// newline added, an empty or unreadable file left out.
func grepFiles(args []string) string {
	return "grep -H '' -- " + strings.Join(args, " ") + " 2>/dev/null; true"
}

// addGrepped files what grepGlob printed under each file's path.
func addGrepped(files map[string][]byte, out []byte) {
	for path, f := range parseGrepFiles(bytes.NewReader(out)) {
		if f.Err == "" {
			files[path] = []byte(f.Content)
		}
	}
}

// ReadSample is what bench reads on each end before and after every run, in
// one process: the files (path → contents, for those that could be read) and
// the firewall's counters as ReadFirewallCounters reads them (with named, the
// rules' texts as ReadFirewall does). A path with "*" in it is a glob the
// target's shell expands: each file it matches comes back under its own path.
func ReadSample(ctx context.Context, t target.Target, named bool, paths ...string) (map[string][]byte, *facts.Firewall, string) {
	return readSample(ctx, t, paths, true, named)
}

func readSample(ctx context.Context, t target.Target, paths []string, firewall, named bool) (map[string][]byte, *facts.Firewall, string) {
	files := map[string][]byte{}
	oneByOne := func() (map[string][]byte, *facts.Firewall, string) {
		for _, p := range paths {
			if isGlob(p) {
				if out, err := t.Run(ctx, "sh", "-c", grepGlob(p)); err == nil {
					addGrepped(files, out)
				}
			} else if b, err := t.ReadFile(ctx, p); err == nil {
				files[p] = b
			}
		}
		if !firewall {
			return files, nil, ""
		}
		fw, note := readFirewall(ctx, t, named)
		return files, fw, note
	}
	if t == target.Local() {
		return oneByOne()
	}
	// One grep reads the files and globs: a process each costs about 0.1 s
	// in a guest under QEMU's emulator, and bench samples both ends around
	// every run. A path grep's "path:line" output could not tell apart is
	// read by a cat of its own.
	var cmds []shellCmd
	var grepped []string
	for i, p := range paths {
		switch {
		case isGlob(p):
			grepped = append(grepped, p)
		case strings.HasPrefix(p, "/") && !strings.ContainsAny(p, ":\n"):
			grepped = append(grepped, shell.Quote(p))
		default:
			cmds = append(cmds, shellCmd{key: "file" + strconv.Itoa(i), script: "cat " + shell.Quote(p)})
		}
	}
	if len(grepped) > 0 {
		cmds = append(cmds, shellCmd{key: "files", script: grepFiles(grepped)})
	}
	if firewall {
		for _, key := range []string{"nft-json", "nft-text", "iptables", "ip6tables"} {
			if key == "nft-text" && !named {
				continue
			}
			argv := firewallArgv[key]
			cmds = append(cmds, shellCmd{key: key, script: ifInstalled(argv[0], shell.Join(argv[0], argv[1:]...))})
		}
	}
	res, err := runBatch(ctx, t, cmds)
	if err != nil || len(res) == 0 {
		return oneByOne() // no shell to batch in: the target's own reads
	}
	if r, ok := res["files"]; ok {
		addGrepped(files, []byte(r.Out))
	}
	for i, p := range paths {
		if r, ok := res["file"+strconv.Itoa(i)]; ok && r.Code == 0 {
			files[p] = []byte(r.Out)
		}
	}
	if !firewall {
		return files, nil, ""
	}
	fw, note := firewallFrom(func(key string) ([]byte, error) {
		r, ok := res[key]
		switch {
		case !ok:
			return nil, fmt.Errorf("%s did not run", firewallArgv[key][0])
		case r.Code == 127:
			return nil, fmt.Errorf("%w: %s", target.ErrNotFound, firewallArgv[key][0])
		case r.Code != 0:
			first, _, _ := strings.Cut(r.Stderr, "\n")
			return nil, fmt.Errorf("exit status %d: %s", r.Code, first)
		}
		return []byte(r.Out), nil
	}, named)
	return files, fw, note
}
