package lab

import (
	"strings"

	"github.com/wgperf/wgperf/internal/target"
)

// NodeOf splits a target spec "netns:wgl-NAME-NODE" into the lab's name and
// the node; ok is false for any other spec.
func NodeOf(spec string) (name, node string, ok bool) {
	parsed, err := target.ParseSpec(spec)
	if err != nil {
		return "", "", false
	}
	netns, _ := parsed.Netns()
	rest, ok := strings.CutPrefix(netns, Prefix)
	if !ok {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, '-')
	if i <= 0 || i == len(rest)-1 {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}

// PeerOf is, for site A or B of a lab that is up, the site at the other end
// of its tunnel ("fix --verify" measures to it when no --server is given).
func PeerOf(spec string) (target.Target, bool) {
	name, node, ok := NodeOf(spec)
	if !ok {
		return nil, false
	}
	l, err := Load(name)
	if err != nil {
		return nil, false
	}
	other := map[string]string{"a": "b", "b": "a"}[node]
	if l.Node(other) == nil {
		return nil, false
	}
	return l.Target(other), true
}
