package collect

import (
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/parse"
)

// ipsecSource is the host's IPsec layer: its policies, and its security
// associations with their keys cut by sed before the output leaves the host
// (ip prints them in hex; every 0x number goes, SPIs and sequence numbers
// with them). BusyBox ip and a user without CAP_NET_ADMIN get no answer:
// then there is nothing to say, as on a host without IPsec.
var ipsecSource = source{
	batch: networkBatch,
	cmds: []shellCmd{
		{"xfrm-policy", "if ip xfrm policy list 2>/dev/null; then :; else skip; fi"},
		{"xfrm-state", "ip xfrm state list 2>/dev/null | sed 's/0x[0-9a-fA-F]*/0x/g'"},
	},
	assemble: (*collector).ipsec,
}

func (c *collector) ipsec(map[string]*fileRead) {
	out, ok := c.output("xfrm-policy", "ip xfrm policy")
	if !ok {
		return
	}
	policies, err := parse.ParseXfrmPolicy(strings.NewReader(out))
	if err != nil {
		c.note("ip xfrm policy", err.Error())
		return
	}
	if len(policies) == 0 {
		return
	}
	ipsec := &facts.IPsec{Policies: policies, States: []facts.XfrmState{}}
	if out, ok := c.output("xfrm-state", "ip xfrm state"); ok {
		if states, err := parse.ParseXfrmState(strings.NewReader(out)); err != nil {
			c.note("ip xfrm state", err.Error())
		} else {
			ipsec.States = states
		}
	}
	c.snap.IPsec = ipsec
}
