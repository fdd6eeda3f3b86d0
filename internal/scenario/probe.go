package scenario

import (
	"context"

	"github.com/wgperf/wgperf/internal/finding"
)

// probe runs one active measurement and returns the findings it proves.
func (r *runner) probe(ctx context.Context, p Probe) ([]finding.Finding, string, error) {
	return nil, "", errNoProbe
}
