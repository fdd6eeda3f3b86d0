package doctor

import "fmt"

// blockedLine is doctor's one line for a blocked underlay baseline: where
// only WireGuard's port reaches the far end (a NAT forwarding it alone, a
// firewall), the hosts' own iperf3 cannot connect, and the tunnel has
// nothing to be compared against. It says what to give instead.
func blockedLine(why string, c *Config) string {
	line := "underlay baseline blocked: " + why + ": the tunnel's rates stand alone, compared against nothing"
	if c.UnderlayPort == 0 {
		line += "; give --underlay-port with a port the far end lets in (and --underlay-addr where it is reached at another address)"
	}
	return line
}

// blockedThreshold is the report's threshold line when the baseline is blocked.
func blockedThreshold(why string) string {
	return fmt.Sprintf("not applied: the underlay baseline is blocked (%s)", why)
}
