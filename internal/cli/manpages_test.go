//go:build !router

package cli

import "testing"

func TestRoffEscape(t *testing.T) {
	for in, want := range map[string]string{
		`.hidden request`: `\&.hidden request`,
		`'quote`:          `\&'quote`,
		`a\b --flag`:      `a\eb \-\-flag`,
	} {
		if got := roffEscape(in); got != want {
			t.Errorf("roffEscape(%q) = %q, want %q", in, got, want)
		}
	}
}
