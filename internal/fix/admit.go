package fix

import (
	"fmt"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
)

// Admit refuses, in one line, the first action of fs that its finding's
// catalog entry does not allow (check.Allows): another fix kind, a param out
// of its range or not as wgperf writes it, an ID outside the catalog. With
// host, the facts of the target collected now, each action must also be one
// the checks would propose there (check.AllowsOn): its interface one of the
// host's tunnels, its route via the host's preferred gateway, its sysctl a
// raise of the current value. Findings from a file pass it before anything
// is planned; a fix without an action (commands shown to a person) has
// nothing to admit.
func Admit(fs []finding.Finding, host *facts.Snapshot) error {
	for i, f := range fs {
		for _, fx := range f.Fixes {
			if fx.Action == nil {
				continue
			}
			var err error
			if host == nil {
				err = check.Allows(f.ID, *fx.Action)
			} else {
				err = check.AllowsOn(f.ID, *fx.Action, host)
			}
			if err != nil {
				return fmt.Errorf("finding %d: refused, not a fix wgperf proposes: %w", i+1, err)
			}
		}
	}
	return nil
}
