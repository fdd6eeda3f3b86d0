package collect

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/shell"
)

// routeEndpoints asks the kernel which route each peer endpoint takes, in one
// more round trip (one per maxScriptBytes of lookups, on a hub). iproute2
// answers every lookup in one process (ip -batch); BusyBox ip and ip without
// JSON get one "ip route get" each.
func (c *collector) routeEndpoints(ctx context.Context) {
	type ep struct{ iface, peer, addr string }
	var eps []ep
	var addrs []string
	seen := map[string]bool{}
	for _, w := range c.snap.WireGuard {
		for _, p := range w.Peers {
			host, _, err := net.SplitHostPort(p.Endpoint)
			ip := net.ParseIP(host)
			if err != nil || ip == nil {
				continue
			}
			host = ip.String() // as ip prints it back
			eps = append(eps, ep{w.Name, p.PublicKey, host})
			if !seen[host] {
				seen[host] = true
				addrs = append(addrs, host)
			}
		}
	}
	if len(addrs) == 0 {
		return
	}
	routes, failed, err := c.routeGetBatch(ctx, addrs)
	if err != nil {
		c.note("ip route get", oneLine(err))
		return
	}
	if routes == nil {
		if routes, failed, err = c.routeGetEach(ctx, addrs); err != nil {
			c.note("ip route get", oneLine(err))
			return
		}
	}
	for _, e := range eps {
		r, ok := routes[e.addr]
		if !ok {
			c.note("ip route get "+e.addr, firstNonEmpty(failed[e.addr], "no route"))
			continue
		}
		r.Interface, r.Peer, r.Endpoint = e.iface, e.peer, e.addr
		c.snap.Endpoints = append(c.snap.Endpoints, r)
	}
}

// routeGetBatch looks up every address with "ip -j -force -batch -", one
// process per round trip of at most maxScriptBytes/2 of commands. It returns
// nil routes when this ip has no JSON batch mode (BusyBox, old iproute2);
// failed holds why ip found no route for an address, where it said.
func (c *collector) routeGetBatch(ctx context.Context, addrs []string) (routes map[string]facts.EndpointRoute, failed map[string]string, err error) {
	routes, failed = map[string]facts.EndpointRoute{}, map[string]string{}
	for len(addrs) > 0 {
		var b strings.Builder
		n := 0
		for n < len(addrs) && b.Len() < maxScriptBytes/2 {
			b.WriteString("route get " + addrs[n] + "\n")
			n++
		}
		// The addresses are parsed ones (net.ParseIP): no line of them can end the here-document.
		script := "if ip -j -force -batch - </dev/null >/dev/null 2>&1; then " + shell.Stdin("ip -j -force -batch -", b.String()) + "\nelse skip; fi"
		res, err := runBatch(ctx, c.t, []shellCmd{{"routes", script}})
		if err != nil {
			return nil, nil, err
		}
		r, ok := res["routes"]
		if !ok || r.Code == codeSkipped {
			return nil, nil, nil
		}
		batchRoutes(r.Out, routes)
		batchFailures(r.Stderr, addrs[:n], failed)
		addrs = addrs[n:]
	}
	return routes, failed, nil
}

// batchRoutes reads ip -j -batch's output, one JSON array a line for each
// lookup that found a route, into routes by destination.
func batchRoutes(out string, routes map[string]facts.EndpointRoute) {
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var dst []struct {
			Dst string `json:"dst"`
		}
		if json.Unmarshal(line, &dst) != nil || len(dst) == 0 {
			continue
		}
		ip := net.ParseIP(dst[0].Dst)
		dev, gw, src, err := parse.ParseRouteGet(strings.NewReader(string(line)))
		if ip == nil || err != nil {
			continue
		}
		routes[ip.String()] = facts.EndpointRoute{Dev: dev, Gateway: gw, Src: src}
	}
}

// batchFailures reads ip -batch's "Command failed -:N" lines (after the
// error of command N) into failed, by the address of line N.
func batchFailures(stderr string, addrs []string, failed map[string]string) {
	prev := ""
	for _, line := range strings.Split(stderr, "\n") {
		line = strings.TrimSpace(line)
		if n, ok := strings.CutPrefix(line, "Command failed -:"); ok {
			if i, err := strconv.Atoi(n); err == nil && i >= 1 && i <= len(addrs) && prev != "" {
				failed[addrs[i-1]] = prev
			}
		}
		prev = line
	}
}

// routeGetEach looks up each address with its own "ip route get", as
// BusyBox ip needs, in one round trip per maxScriptBytes of lookups.
func (c *collector) routeGetEach(ctx context.Context, addrs []string) (routes map[string]facts.EndpointRoute, failed map[string]string, err error) {
	cmds := make([]shellCmd, len(addrs))
	for i, a := range addrs {
		get := "ip route get " + shell.Quote(a)
		cmds[i] = shellCmd{"get" + strconv.Itoa(i), parse.IPJSONOr("ip -j "+strings.TrimPrefix(get, "ip "), get)}
	}
	res := map[string]cmdResult{}
	for _, chunk := range scriptChunks(cmds, maxScriptBytes) {
		got, err := runBatch(ctx, c.t, chunk)
		if err != nil {
			return nil, nil, err
		}
		for k, v := range got {
			res[k] = v
		}
	}
	routes, failed = map[string]facts.EndpointRoute{}, map[string]string{}
	for i, a := range addrs {
		r := res["get"+strconv.Itoa(i)]
		if r.Code != 0 {
			failed[a] = lastLine(r.Stderr)
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
			failed[a] = err.Error()
			continue
		}
		routes[a] = facts.EndpointRoute{Dev: dev, Gateway: gw, Src: src}
	}
	return routes, failed, nil
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// maxScriptBytes bounds one batch's script: it travels as one argument
// ("sh -c SCRIPT", locally, in a namespace and through ssh's remote shell),
// and Linux takes at most 128 KiB for one (MAX_ARG_STRLEN). A hub's 1,000
// endpoints looked up one by one take about 270 KB.
const maxScriptBytes = 64 << 10

// scriptChunks splits cmds into runs whose batch script stays under max
// bytes (a run holds one command at least).
func scriptChunks(cmds []shellCmd, max int) [][]shellCmd {
	var out [][]shellCmd
	start, size := 0, len(batchPrelude)
	for i, c := range cmds {
		n := len(batchScript([]shellCmd{c})) - len(batchPrelude)
		if i > start && size+n > max {
			out = append(out, cmds[start:i])
			start, size = i, len(batchPrelude)
		}
		size += n
	}
	return append(out, cmds[start:])
}
