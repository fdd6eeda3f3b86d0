package collect

import (
	"io"
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/openwrt"
	"github.com/wgperf/wgperf/internal/parse"
)

// routeSource is the routing tables and the policy rules, both families.
var routeSource = source{
	batch: networkBatch,
	cmds: []shellCmd{
		{"route4", parse.IPJSONOr("ip -j -4 route show table all", "ip -4 route show table all")},
		{"route6", parse.IPJSONOr("ip -j -6 route show table all", "ip -6 route show table all")},
		{"rule4", parse.IPJSONOr("ip -j -4 rule show", "ip -4 rule show")},
		{"rule6", parse.IPJSONOr("ip -j -6 rule show", "ip -6 rule show")},
	},
	assemble: (*collector).routing,
}

func (c *collector) routing(map[string]*fileRead) {
	for _, fam := range []struct{ key, family string }{{"route4", "inet"}, {"route6", "inet6"}} {
		if out, ok := c.output(fam.key, "ip route "+fam.family); ok {
			routes, err := parseIPOutput(c, out, func(r io.Reader) ([]facts.Route, error) { return parse.ParseIPRoute(r, fam.family) },
				func(r io.Reader) ([]facts.Route, error) { return parse.ParseIPRouteText(r, fam.family) })
			if err != nil {
				c.note("ip route "+fam.family, err.Error())
				continue
			}
			c.snap.Routes = append(c.snap.Routes, routes...)
		}
	}
	for _, fam := range []struct{ key, family string }{{"rule4", "inet"}, {"rule6", "inet6"}} {
		if out, ok := c.output(fam.key, "ip rule "+fam.family); ok {
			rules, err := parseIPOutput(c, out, func(r io.Reader) ([]facts.RouteRule, error) { return parse.ParseIPRule(r, fam.family) },
				func(r io.Reader) ([]facts.RouteRule, error) { return parse.ParseIPRuleText(r, fam.family) })
			if err != nil {
				c.note("ip rule "+fam.family, err.Error())
				continue
			}
			c.snap.Rules = append(c.snap.Rules, rules...)
		}
	}
}

// ipTextNote is the one line a snapshot carries when ip had no JSON.
var ipTextNote = "BusyBox ip (no JSON): read its text, which lacks route protocols (an endpoint's host route is judged by its gateway alone), multipath hops, link kinds and bonds: " + openwrt.Install("ip-full")

// parseIPOutput parses ip's JSON, or the text BusyBox's ip printed instead, in
// which case the snapshot says so once.
func parseIPOutput[T any](c *collector, out string, fromJSON, fromText func(io.Reader) ([]T, error)) ([]T, error) {
	text, ok := parse.CutIPText(out)
	if !ok {
		return fromJSON(strings.NewReader(out))
	}
	if !c.snap.IPText {
		c.snap.IPText = true
		c.note("ip", ipTextNote)
	}
	return fromText(strings.NewReader(text))
}
