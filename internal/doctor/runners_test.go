package doctor

import (
	"testing"

	"github.com/wgperf/wgperf/internal/probes"
)

// TestEveryProbeHasARunner holds doctor's runners to the probe list: a probe
// added to the list and not here would be planned and never run.
func TestEveryProbeHasARunner(t *testing.T) {
	for _, e := range probes.All {
		if runners[e.Name] == nil {
			t.Errorf("probe %s has no runner in doctor", e.Name)
		}
	}
	if len(runners) != len(probes.All) {
		t.Errorf("%d runners for %d probes on the list", len(runners), len(probes.All))
	}
}
