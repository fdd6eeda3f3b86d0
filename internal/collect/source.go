package collect

import (
	"strings"

	"github.com/wgperf/wgperf/internal/shell"
)

// source is one thing Collect reads, as one value in its own file: the small
// files it needs from the one grep that reads them all, the shell snippets
// that fetch the rest (run in its batch, one round trip per batch), and how
// their output becomes part of the snapshot.
type source struct {
	batch    batch
	files    []string   // /proc, /sys and /etc files
	globs    []string   // sysfs globs the target's shell expands
	cmds     []shellCmd // keyed snippets; assemble finds their output under the key
	assemble func(c *collector, files map[string]*fileRead)
}

// batch is a group of sources whose snippets run in one shell script.
type batch int

const (
	systemBatch   batch = iota // the small files, WireGuard, OpenWrt
	networkBatch               // ip and ethtool
	firewallBatch              // nft, iptables, conntrack (Options.SkipFirewall leaves it out)
)

// sources are assembled in this order: WireGuard keeps only interfaces that
// are links here (after linkSource), link speeds go on those links too, conntrack reads its size from the
// sysctls (after systemSource).
var sources = []source{systemSource, kernelSource, linkSource, nicSource, routeSource, wireguardSource, firewallSource, conntrackSource, openwrtSource, cpuLimitSource, ipsecSource}

// batches are the sources' snippets by batch, the grep of every source's
// files first; skipFirewall leaves the firewall batch out.
func batches(skipFirewall bool) [][]shellCmd {
	var files, globs []string
	for _, s := range sources {
		files, globs = append(files, s.files...), append(globs, s.globs...)
	}
	quoted := make([]string, len(files))
	for i, f := range files {
		quoted[i] = shell.Join(f)
	}
	// grep exits 2 when some file is missing; that is expected, so force 0.
	out := [][]shellCmd{{{"files", "grep -H '' -- " + strings.Join(quoted, " ") + " " + strings.Join(globs, " ") + " 2>&1; true"}}, nil, nil}
	for _, s := range sources {
		out[s.batch] = append(out[s.batch], s.cmds...)
	}
	if skipFirewall {
		out = out[:firewallBatch]
	}
	return out
}

// assemble parses every source's output into the snapshot.
func (c *collector) assemble() {
	files := map[string]*fileRead{}
	if out, ok := c.output("files", "grep /proc /sys"); ok {
		files = parseGrepFiles(strings.NewReader(out))
	}
	for _, s := range sources {
		s.assemble(c, files)
	}
}

// file returns a file's content, noting why it is missing unless optional.
func (c *collector) file(files map[string]*fileRead, name string, optional bool) (string, bool) {
	f, ok := files[name]
	switch {
	case ok && f.Err == "":
		return f.Content, true
	case ok && (optional && strings.Contains(f.Err, "No such file")):
	case ok:
		c.note(name, f.Err)
	case !optional:
		c.note(name, "empty or not readable")
	}
	return "", false
}
