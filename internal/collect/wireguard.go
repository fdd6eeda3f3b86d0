package collect

import (
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/parse"
)

// wireguardSource is the WireGuard interfaces and peers (wg show all dump)
// and the userspace implementations' UAPI sockets.
var wireguardSource = source{
	cmds: []shellCmd{
		{"wg", ifInstalled("wg", "wg show all dump")},
		{"wgsock", `for s in /var/run/wireguard/*.sock; do [ -S "$s" ] && { s=${s##*/}; echo "${s%.sock}"; }; done; true`},
	},
	assemble: (*collector).wireguard,
}

// wireguard keeps only interfaces that are links in this namespace: the UAPI
// socket folder is shared by every namespace, so "wg show all dump" also lists
// userspace interfaces living elsewhere.
func (c *collector) wireguard(map[string]*fileRead) {
	out, ok := c.output("wg", "wg show")
	if !ok {
		return
	}
	ifaces, err := parse.ParseWGDump(strings.NewReader(out))
	if err != nil {
		c.note("wg show", err.Error())
		return
	}
	sockets := map[string]bool{}
	if s, ok := c.output("wgsock", "/var/run/wireguard"); ok {
		for _, name := range strings.Fields(s) {
			sockets[name] = true
		}
	}
	links := map[string]facts.Link{}
	for _, l := range c.snap.Links {
		links[l.Name] = l
	}
	for _, w := range ifaces {
		l, ok := links[w.Name]
		if !ok {
			continue
		}
		w.MTU = l.MTU
		switch {
		case l.Kind == "wireguard":
			w.Implementation = "kernel"
		case l.Kind == "tun" && sockets[w.Name]:
			w.Implementation = "userspace"
		}
		c.snap.WireGuard = append(c.snap.WireGuard, w)
	}
}
