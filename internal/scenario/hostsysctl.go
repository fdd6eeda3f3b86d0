package scenario

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// setHostSysctls sets initial-namespace sysctls and returns a func that puts
// back the exact previous values.
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
