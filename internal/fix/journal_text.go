package fix

import (
	"fmt"
	"io"

	"github.com/wgperf/wgperf/internal/finding"
)

// WriteText reports what an apply, confirm or rollback did, step by step,
// and the verification when there was one.
func (j *Journal) WriteText(w io.Writer) error {
	for i, e := range j.Entries {
		line := fmt.Sprintf("%2d. %-8s [%s] %s", i+1, e.Status, finding.JoinIDs(e.Findings, ", "), e.Description)
		if e.Error != "" {
			line += ": " + e.Error
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	if j.Verify != nil {
		return j.Verify.WriteText(w)
	}
	return nil
}
