package scenario

import (
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/target"
)

// allowedCC is the host sysctl listing the congestion controls a child
// namespace may choose.
const allowedCC = "net.ipv4.tcp_allowed_congestion_control"

// hostSysctlsFor is sc.HostSysctls, its RateScaled keys shrunk to the lab's
// sized rate s, plus, when the host does not already allow the lab's
// congestion control cc in child namespaces, an allowed list with it (a
// distro host whose default is CUBIC allows only reno and cubic).
func hostSysctlsFor(sc Scenario, s Sizing, cc string, readHost func(key string) (string, error)) map[string]string {
	want := maps.Clone(sc.HostSysctls)
	if s.RateMbit > 0 && s.RateMbit < s.CatalogMbit {
		for _, key := range sc.RateScaled {
			if v, err := strconv.Atoi(want[key]); err == nil {
				want[key] = strconv.Itoa(max(1, int(math.Round(float64(v*s.RateMbit)/float64(s.CatalogMbit)))))
			}
		}
	}
	if cc == "" {
		return want
	}
	allowed, ok := want[allowedCC]
	if !ok {
		v, err := readHost(allowedCC)
		if err != nil {
			return want
		}
		allowed = v
	}
	if slices.Contains(strings.Fields(allowed), cc) {
		return want
	}
	if want == nil {
		want = map[string]string{}
	}
	want[allowedCC] = strings.TrimSpace(allowed + " " + cc)
	return want
}

// readHostSysctl reads an initial-namespace sysctl.
func readHostSysctl(key string) (string, error) {
	b, err := os.ReadFile(sysctlPath(key))
	return strings.TrimSpace(string(b)), err
}

// setHostSysctls sets initial-namespace sysctls and returns a func that puts
// back the exact previous values. The congestion controls an allowed list
// names are loaded first (a distro kernel builds BBR as a module).
func setHostSysctls(want map[string]string) (func(), error) {
	old := map[string]string{}
	// procfs takes writes in place only (no temporary file and rename).
	restore := func() {
		for k, v := range old {
			if err := os.WriteFile(sysctlPath(k), []byte(v+"\n"), 0o644); err != nil {
				fmt.Fprintf(os.Stderr, "wgperf: could not restore host sysctl %s=%s: %v\n", k, v, err)
			}
		}
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if k == allowedCC {
			for _, cc := range strings.Fields(want[k]) {
				_, _ = target.Local().Run(context.Background(), "modprobe", "-q", "tcp_"+cc)
			}
		}
		b, err := os.ReadFile(sysctlPath(k))
		if err != nil {
			return restore, fmt.Errorf("host sysctl %s: %w", k, err)
		}
		old[k] = strings.TrimSpace(string(b))
		if err := os.WriteFile(sysctlPath(k), []byte(want[k]+"\n"), 0o644); err != nil {
			return restore, fmt.Errorf("host sysctl %s=%s: %w", k, want[k], err)
		}
	}
	return restore, nil
}

func sysctlPath(key string) string {
	return filepath.Join("/proc/sys", strings.ReplaceAll(key, ".", "/"))
}
