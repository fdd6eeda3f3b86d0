package collect

import (
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/parse"
)

// openwrtSource is OpenWrt's configuration wgperf reads (network, mwan3,
// banIP), netifd's interfaces, mwan3's status and its tracker's log lines;
// nothing on other hosts.
var openwrtSource = source{
	cmds: []shellCmd{
		{"uci-network", onOpenWrt(ifInstalled("uci", "uci -q show network"))},
		{"uci-mwan3", onOpenWrt("if [ -e /etc/config/mwan3 ]; then uci -q show mwan3; else skip; fi")},
		{"uci-banip", onOpenWrt("if [ -e /etc/config/banip ]; then uci -q show banip; else skip; fi")},
		{"mwan3-status", onOpenWrt("if command -v mwan3 >/dev/null 2>&1; then mwan3 status; else skip; fi")},
		{"netifd", onOpenWrt("if command -v ubus >/dev/null 2>&1; then ubus call network.interface dump; else skip; fi")},
		{"logread", onOpenWrt(ifInstalled("logread", "logread -e mwan3track"))},
	},
	assemble: (*collector).openwrt,
}

func (c *collector) openwrt(map[string]*fileRead) {
	if c.res["uci-network"].Code == codeSkipped {
		return
	}
	ow := &facts.OpenWrt{Network: map[string]string{}}
	for _, src := range []struct {
		key string
		dst *map[string]string
	}{{"uci-network", &ow.Network}, {"uci-mwan3", &ow.Mwan3}, {"uci-banip", &ow.Banip}} {
		source := "uci show " + strings.TrimPrefix(src.key, "uci-")
		if out, ok := c.output(src.key, source); ok {
			m, err := parse.ParseUCI(strings.NewReader(out))
			if err != nil {
				c.note(source, err.Error())
				continue
			}
			*src.dst = m
		}
	}
	if out, ok := c.output("mwan3-status", "mwan3 status"); ok {
		ow.Mwan3Status = strings.TrimSpace(out)
		if uplinks, policies, err := parse.ParseMwan3Status(strings.NewReader(out)); err != nil {
			c.note("mwan3 status", err.Error())
		} else {
			ow.Uplinks, ow.Policies = uplinks, policies
		}
	}
	if out, ok := c.output("netifd", "ubus call network.interface dump"); ok {
		if ifaces, err := parse.ParseNetifdDump(strings.NewReader(out)); err != nil {
			c.note("ubus call network.interface dump", err.Error())
		} else if len(ifaces) > 0 {
			ow.Interfaces = ifaces
		}
	}
	if out, ok := c.output("logread", "logread"); ok {
		ev, err := parse.ParseMwan3Events(strings.NewReader(out))
		if err != nil {
			c.note("logread", err.Error())
		} else {
			ow.Events = ev
		}
		if checks, err := parse.ParseMwan3Checks(strings.NewReader(out)); err != nil {
			c.note("logread", err.Error())
		} else if len(checks) > 0 {
			ow.Checks = checks
		}
	}
	c.snap.OpenWrt = ow
}
