package parse

import (
	"strconv"
	"strings"
)

// TracerouteHop reads one hop line of "traceroute -n -q 1" (BusyBox's or
// the traceroute package's): " 2  198.51.100.1  0.008 ms !F-1400" is hop 2
// answered by 198.51.100.1, " 1  *" hop 1 silent (addr "*"). addr is the
// host's text, unchecked; what follows it (times, !flags) is the caller's
// to read from the line. ok is false for any other line (the "traceroute
// to" header, a blank one) and for a TTL outside 1..255. It is pure.
func TracerouteHop(line string) (ttl int, addr string, ok bool) {
	f := strings.Fields(line)
	if len(f) < 2 || !isDigits(f[0]) {
		return 0, "", false
	}
	ttl, err := strconv.Atoi(f[0])
	if err != nil || ttl < 1 || ttl > 255 {
		return 0, "", false
	}
	return ttl, f[1], true
}
