package finding

import (
	"fmt"
	"io"
	"strings"
)

// WriteBrief prints findings compactly, as the probe commands (bench, mtu,
// icmp-burst) end their output: one header line each, then the evidence and
// the fixes with their commands. "wgperf diagnose" has the full layout
// (internal/report).
func WriteBrief(w io.Writer, fs []Finding) error {
	for _, f := range fs {
		if _, err := fmt.Fprintf(w, "\n%s  %s  %s: %s\n", strings.ToUpper(f.Severity.String()), f.ID, f.Host, f.Title); err != nil {
			return err
		}
		for _, e := range f.Evidence {
			fmt.Fprintf(w, "    %s\n", e)
		}
		for _, fx := range f.Fixes {
			fmt.Fprintf(w, "  fix: %s\n", fx.Description)
			for _, c := range fx.Commands {
				fmt.Fprintf(w, "    $ %s\n", c)
			}
		}
	}
	return nil
}
