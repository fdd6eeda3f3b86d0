package check

import (
	"errors"
	"maps"

	"github.com/wgperf/wgperf/internal/facts"
)

// proposedBy is the HostRule of an entry whose check builds each fix from the
// host's own facts (a rule's handle, a device's offloads, mwan3's log): the
// action, kind and every param, is one the check proposes on the host as it
// is now. A findings file can then ask for nothing that check would not.
func proposedBy(c *Check, kind string) HostRule {
	return func(h *facts.Snapshot, p map[string]string, _ string) error {
		fs, _ := c.Run(h, Options{})
		for _, f := range fs {
			for _, x := range f.Fixes {
				if x.Action != nil && x.Action.Kind == kind && maps.Equal(x.Action.Params, p) {
					return nil
				}
			}
		}
		return errors.New("is not what the check proposes on this host as it is now")
	}
}
