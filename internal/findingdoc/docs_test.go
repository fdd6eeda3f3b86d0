//go:build !router

package findingdoc

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/check"
)

// TestFindingPages: one page per catalog ID with every part the brief of a
// finding needs, and an index linking them all; no page cites a seed number.
func TestFindingPages(t *testing.T) {
	pages := DocPages()
	if len(pages) != len(check.Catalog)+1 {
		t.Errorf("%d pages for %d IDs and the index", len(pages), len(check.Catalog))
	}
	seed := regexp.MustCompile(`(?i)\bseeds?\s+0\d\d`)
	for name, page := range pages {
		if m := seed.FindString(string(page)); m != "" {
			t.Errorf("%s says %q", name, m)
		}
	}
	for _, id := range catalog.IDs() {
		page := string(pages[string(id)+".md"])
		for _, want := range []string{"# `" + string(id) + "`", "## Why it matters", "## What fires it", "## Where it comes from", "## The fix", "```sh\n", "wgperf explain " + string(id)} {
			if !strings.Contains(page, want) {
				t.Errorf("%s.md lacks %q", id, want)
			}
		}
		if !strings.Contains(string(pages["README.md"]), "]("+string(id)+".md)") {
			t.Errorf("the index does not link %s.md", id)
		}
	}
	// A doc's list stays a list and its literal text stays literal.
	icmp := string(pages["icmp.ratelimit-drops.md"])
	if strings.Count(icmp, "\n- ") != 2 || !strings.Contains(icmp, "\n\nCounted drops above 0") {
		t.Errorf("icmp.ratelimit-drops.md: the doc's list is not a Markdown list:\n%s", icmp)
	}
	if !strings.Contains(string(pages["mtu.tunnel-too-large.md"]), `ip route get \<endpoint\>`) {
		t.Error("mtu.tunnel-too-large.md: <endpoint> would read as an HTML tag")
	}
	names := make([]string, 0, len(pages))
	for n := range pages {
		names = append(names, n)
	}
	slices.Sort(names)
	if names[0] != "README.md" {
		t.Errorf("pages %v", names)
	}
}
