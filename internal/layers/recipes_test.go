package layers

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// recipes are the kinds of change CONTRIBUTING.md must give a recipe for,
// each a section headed by these words.
var recipes = []string{
	"## A check", "## A probe finding", "## A finding judged against the bench", "## A targeted probe",
	"## A fix kind", "## A target kind", "## An exporter collector", "## A lab scenario",
}

// TestRecipesAreHeld: every recipe of CONTRIBUTING.md names, in its "Tests:"
// paragraph, the tests that fail when it is not followed, and each of them
// exists in the module: a recipe whose test was renamed or removed, or that
// names none, is a recipe nothing holds.
func TestRecipesAreHeld(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "CONTRIBUTING.md"))
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		for _, m := range decl.FindAllSubmatch(b, -1) {
			tests[string(m[1])] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sections := strings.Split("\n"+string(doc), "\n## ")[1:]
	for _, want := range recipes {
		found := false
		for _, sec := range sections {
			if strings.HasPrefix("## "+sec, want) {
				found = true
			}
		}
		if !found {
			t.Errorf("CONTRIBUTING.md has no recipe %q", want)
		}
	}
	named := regexp.MustCompile("`(Test\\w+)`")
	for _, sec := range sections {
		title, _, _ := strings.Cut(sec, "\n")
		_, held, ok := strings.Cut(sec, "Tests:")
		if !ok {
			t.Errorf("recipe %q says no tests", title)
			continue
		}
		ms := named.FindAllStringSubmatch(held, -1)
		if len(ms) == 0 {
			t.Errorf("recipe %q names no test that holds it", title)
		}
		for _, m := range ms {
			if !tests[m[1]] {
				t.Errorf("recipe %q names %s, which no test file of the module declares", title, m[1])
			}
		}
	}
}
