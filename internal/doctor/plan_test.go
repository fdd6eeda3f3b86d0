package doctor

import (
	"reflect"
	"slices"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/probes"
)

// TestEveryProbeIsInThePlan holds doctor's plan to the probe list: a probe
// on the list without a step in the plan would never run, a step of a probe
// not on the list (or of another definition than the list's) would run what
// the schema and the help do not name, and a probe step without a runner
// could not run.
func TestEveryProbeIsInThePlan(t *testing.T) {
	inPlan := map[catalog.Probe]bool{}
	for _, rd := range Plan() {
		for _, st := range rd.Steps {
			if st.Probe == nil {
				continue
			}
			inPlan[st.Probe.Name] = true
			def, ok := probes.Lookup(st.Probe.Name)
			if !ok {
				t.Errorf("round %q: step %s is a probe not on the list (probes.All)", rd.Name, st.Name)
			} else if !reflect.DeepEqual(def, *st.Probe) {
				t.Errorf("round %q: step %s holds another definition than the list's", rd.Name, st.Name)
			}
			if st.measure == nil {
				t.Errorf("round %q: probe %s has no runner", rd.Name, st.Name)
			}
			if !slices.Equal(st.Raises, def.Raises) {
				t.Errorf("round %q: probe %s raises %v, its definition %v", rd.Name, st.Name, st.Raises, def.Raises)
			}
		}
	}
	for _, e := range probes.All {
		if !inPlan[e.Name] {
			t.Errorf("probe %s is on the list but in no step of doctor's plan", e.Name)
		}
	}
}
