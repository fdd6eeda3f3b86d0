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

// ECMPSite is what "fix ecmp" takes from the lab a site belongs to: the
// other site, the site's tunnel, site B's address to measure to (from A),
// and how the lab makes a WireGuard interface.
type ECMPSite struct {
	Peer      target.Target
	Interface string
	Addr      string
	Userspace func(dev string) string
}

// ECMPOf is spec's ECMPSite when it is site A or B of a lab that is up
// (the zero value otherwise); new tunnel ends run exe, as "lab up"'s do.
func ECMPOf(spec, exe string) ECMPSite {
	name, node, ok := NodeOf(spec)
	if !ok || (node != "a" && node != "b") {
		return ECMPSite{}
	}
	l, err := Load(name)
	if err != nil {
		return ECMPSite{}
	}
	l.Executable = exe
	peer, _ := PeerOf(spec)
	e := ECMPSite{Peer: peer, Interface: l.WGInterface(node), Userspace: l.NewWireGuard()}
	if node == "a" {
		e.Addr = SiteBLAN
	}
	return e
}
