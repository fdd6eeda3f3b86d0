package check

import (
	"strings"
	"testing"
)

// TestEveryIDIsExplained: "wgperf explain" answers for every catalog ID with
// a title and at least one source that says what raises it.
func TestEveryIDIsExplained(t *testing.T) {
	for _, id := range Catalog {
		e, ok := Explain(id)
		if !ok || e.Title == "" || len(e.By) == 0 {
			t.Errorf("%s: no explanation (%+v)", id, e)
			continue
		}
		for _, s := range e.By {
			if len(strings.Fields(s.Doc)) < 20 {
				t.Errorf("%s: %s %q explains too little: %q", id, s.Kind, s.Name, s.Doc)
			}
			if strings.Contains(strings.ToLower(s.Doc), "seed 00") {
				t.Errorf("%s: doc cites a seed number instead of the case", id)
			}
		}
	}
	for id := range probeDocs {
		if probeTitles[id] == "" {
			t.Errorf("%s: a probe ID without a title", id)
		}
	}
	if len(Explanations()) != len(Catalog) {
		t.Errorf("%d explanations for %d IDs", len(Explanations()), len(Catalog))
	}
	if _, ok := Explain("mtu.no-such-thing"); ok {
		t.Error("an unknown ID was explained")
	}
	if got := Suggest("mtu.pmtud"); len(got) == 0 || got[0] != "mtu.mss-clamp-missing" && got[0] != "mtu.pmtud-blackhole" {
		t.Errorf("Suggest(mtu.pmtud) = %v", got)
	}
}
