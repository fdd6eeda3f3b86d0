package doctor

import (
	"reflect"
	"strings"
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

// TestReportHoldsEveryProbe: doctor's JSON report has each listed probe's
// result under the key its definition names, of the type it declares, so
// the schema's key and the probe's result are one.
func TestReportHoldsEveryProbe(t *testing.T) {
	fields := map[string]reflect.Type{}
	for f := range reflect.TypeFor[Report]().Fields() {
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		fields[key] = f.Type
	}
	for _, e := range probes.All {
		if got, ok := fields[e.Report]; !ok {
			t.Errorf("probe %s: doctor's Report has no field %q for its result", e.Name, e.Report)
		} else if got != e.Result {
			t.Errorf("probe %s: doctor's Report %q is a %v, its definition's result a %v", e.Name, e.Report, got, e.Result)
		}
	}
}
