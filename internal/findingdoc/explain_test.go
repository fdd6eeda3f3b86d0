package findingdoc

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/finding"
)

// TestEveryIDIsExplained: "wgperf explain" answers for every catalog ID with
// a title and at least one source that says what raises it.
func TestEveryIDIsExplained(t *testing.T) {
	for _, id := range catalog.IDs() {
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
	if len(Explanations()) != len(check.Catalog) {
		t.Errorf("%d explanations for %d IDs", len(Explanations()), len(check.Catalog))
	}
	if _, ok := Explain("mtu.no-such-thing"); ok {
		t.Error("an unknown ID was explained")
	}
	if got := Suggest("mtu.pmtud"); len(got) == 0 || got[0] != "mtu.mss-clamp-missing" && got[0] != "mtu.pmtud-blackhole" {
		t.Errorf("Suggest(mtu.pmtud) = %v", got)
	}
}

// TestEveryIDSaysWhyAndHowToFix: each ID's explanation says why it matters,
// names its cases as the README's case list does, and shows a fix built by
// the remedy constructors for the example host it describes.
func TestEveryIDSaysWhyAndHowToFix(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range catalog.Cases {
		if !strings.Contains(string(readme), "| "+c+" |") {
			t.Errorf("case %q is not a row of the README's case list", c)
		}
	}
	for _, e := range Explanations() {
		if len(strings.Fields(e.Why)) < 15 {
			t.Errorf("%s: why it matters in too few words: %q", e.ID, e.Why)
		}
		for _, c := range e.Cases {
			if !slices.Contains(catalog.Cases, c) {
				t.Errorf("%s: case %q is not one of catalog.Cases", e.ID, c)
			}
		}
		if e.Example.Host == "" || len(e.Example.Fixes) == 0 {
			t.Errorf("%s: no example fix", e.ID)
		}
		for _, f := range e.Example.Fixes {
			if f.Description == "" || len(f.Commands) == 0 {
				t.Errorf("%s: example fix without a description or commands: %+v", e.ID, f)
			}
		}
		text := strings.ToLower(e.Why + " " + e.Example.Host + " " + strings.Join(e.Cases, " "))
		if strings.Contains(text, "seed") {
			t.Errorf("%s: names a seed instead of the case", e.ID)
		}
	}
	// Fixes wgperf fix can apply are actions; diagnostic steps are not.
	for id, applicable := range map[finding.ID]bool{"mtu.tunnel-too-large": true, "route.stale-endpoint": true, "wg.handshake-stale": false, "throughput.tunnel-ratio": false} {
		if e, _ := Explain(id); e.Applicable() != applicable {
			t.Errorf("%s: Applicable() = %v, want %v", id, e.Applicable(), applicable)
		}
	}
}
