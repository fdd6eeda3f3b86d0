package fix

import (
	"strings"

	"github.com/wgperf/wgperf/internal/target/targettest"
)

// newFakeHost is a scripted host for plan tests (targettest.Host), whose
// wg-quick configs read as 0600, as wg-quick wants them.
func newFakeHost(spec string) *targettest.Host {
	h := targettest.New(spec)
	h.Mode = func(path string) string {
		if strings.HasPrefix(path, "/etc/wireguard/") {
			return "600"
		}
		return "644"
	}
	return h
}
