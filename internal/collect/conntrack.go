package collect

import (
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/parse"
)

// conntrackSource is the connection tracking table: its size (Sysctls) and
// its drop counters, from /proc, or from conntrack -S where /proc has none.
var conntrackSource = source{
	batch:    firewallBatch,
	files:    []string{"/proc/net/stat/nf_conntrack"},
	cmds:     []shellCmd{{"conntrack", ifInstalled("conntrack", "conntrack -S")}},
	assemble: (*collector).conntrack,
}

func (c *collector) conntrack(files map[string]*fileRead) {
	count, ok := c.snap.Sysctls["net.netfilter.nf_conntrack_count"]
	if !ok {
		return // nf_conntrack not loaded
	}
	ct := &facts.Conntrack{}
	ct.Count, _ = strconv.ParseInt(count, 10, 64)
	ct.Max, _ = strconv.ParseInt(c.snap.Sysctls["net.netfilter.nf_conntrack_max"], 10, 64)
	ct.Buckets, _ = strconv.ParseInt(c.snap.Sysctls["net.netfilter.nf_conntrack_buckets"], 10, 64)
	var stats facts.Conntrack
	var err error
	if v, ok := c.file(files, "/proc/net/stat/nf_conntrack", true); ok {
		stats, err = parse.ParseConntrackStat(strings.NewReader(v))
		if err != nil {
			c.note("/proc/net/stat/nf_conntrack", err.Error())
		}
	} else if out, ok := c.res["conntrack"]; ok && out.Code == 0 {
		if stats, err = parse.ParseConntrackS(strings.NewReader(out.Out)); err != nil {
			c.note("conntrack -S", err.Error())
		}
	}
	ct.InsertFailed, ct.Drop, ct.EarlyDrop, ct.Invalid = stats.InsertFailed, stats.Drop, stats.EarlyDrop, stats.Invalid
	c.snap.Conntrack = ct
}
