package probes

import (
	"slices"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
)

// TestListIsTheCatalogs: every probe a finding calls for is on the list, each
// entry once, with a help line, and each raises what its package declares.
func TestListIsTheCatalogs(t *testing.T) {
	seen := map[catalog.Probe]bool{}
	for _, e := range All {
		if seen[e.Name] {
			t.Errorf("%s listed twice", e.Name)
		}
		seen[e.Name] = true
		if e.Doc == "" {
			t.Errorf("%s: no help line", e.Name)
		}
		if len(e.Raises) == 0 {
			t.Errorf("%s: raises nothing: give it its package's Raises", e.Name)
		}
		if got, ok := Lookup(e.Name); !ok || got.Name != e.Name {
			t.Errorf("Lookup(%s) = %v, %v", e.Name, got, ok)
		}
	}
	for _, id := range catalog.IDs() {
		ent, _ := catalog.Lookup(id)
		if c := ent.Doctor.Calls; c != "" && !seen[c] {
			t.Errorf("%s calls for probe %q, which is not on the list", id, c)
		}
	}
	if _, ok := Lookup("no-such-probe"); ok {
		t.Error("Lookup found a probe that is not on the list")
	}
}

func TestRaises(t *testing.T) {
	e, _ := Lookup(catalog.ProbeMTU)
	if !slices.Contains(e.Raises, catalog.MTUPMTUDBlackhole) {
		t.Errorf("mtu raises %v, want %s among them", e.Raises, catalog.MTUPMTUDBlackhole)
	}
}
