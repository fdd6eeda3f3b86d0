package collect

import (
	"context"
	"net"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/shell"
)

// routeEndpoints asks the kernel which route each peer endpoint takes, in one
// more round trip.
func (c *collector) routeEndpoints(ctx context.Context) {
	type ep struct{ iface, peer, addr string }
	var eps []ep
	seen := map[string]bool{}
	var cmds []shellCmd
	for _, w := range c.snap.WireGuard {
		for _, p := range w.Peers {
			host, _, err := net.SplitHostPort(p.Endpoint)
			if err != nil || net.ParseIP(host) == nil {
				continue
			}
			eps = append(eps, ep{w.Name, p.PublicKey, host})
			if !seen[host] {
				seen[host] = true
				get := "ip route get " + shell.Quote(host)
				cmds = append(cmds, shellCmd{"get" + strconv.Itoa(len(cmds)), parse.IPJSONOr("ip -j "+strings.TrimPrefix(get, "ip "), get)})
			}
		}
	}
	if len(cmds) == 0 {
		return
	}
	res, err := runBatch(ctx, c.t, cmds)
	if err != nil {
		c.note("ip route get", oneLine(err))
		return
	}
	byAddr := map[string]cmdResult{}
	i := 0
	for _, e := range eps {
		if _, ok := byAddr[e.addr]; !ok {
			byAddr[e.addr] = res["get"+strconv.Itoa(i)]
			i++
		}
	}
	for _, e := range eps {
		r := byAddr[e.addr]
		if r.Code != 0 {
			c.note("ip route get "+e.addr, firstNonEmpty(lastLine(r.Stderr), "no route"))
			continue
		}
		var dev, gw, src string
		var err error
		if text, ok := parse.CutIPText(r.Out); ok {
			dev, gw, src, err = parse.ParseRouteGetText(strings.NewReader(text))
		} else {
			dev, gw, src, err = parse.ParseRouteGet(strings.NewReader(r.Out))
		}
		if err != nil {
			c.note("ip route get "+e.addr, err.Error())
			continue
		}
		c.snap.Endpoints = append(c.snap.Endpoints, facts.EndpointRoute{Interface: e.iface, Peer: e.peer, Endpoint: e.addr, Dev: dev, Gateway: gw, Src: src})
	}
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
