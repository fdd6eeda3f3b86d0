package verify

import (
	"testing"
)

// The cost line: retransmissions four times the run before's and 100 more
// (the multi-tunnel case's 432 -> 119,501) are pointed out; a stray few, or
// a rise from a high count, are not.
func TestParallelCost(t *testing.T) {
	for _, tc := range []struct {
		before, after Cost
		costly        bool
	}{
		{Cost{Retransmits: 432, Reordered: -1}, Cost{Retransmits: 119501, Reordered: -1}, true},
		{Cost{Retransmits: 10}, Cost{Retransmits: 90}, false},
		{Cost{Retransmits: 1000}, Cost{Retransmits: 3000}, false},
		{Cost{}, Cost{Retransmits: 100}, true},
	} {
		if got := Costly(tc.before, tc.after); got != tc.costly {
			t.Errorf("%v -> %v: costly %v, want %v", tc.before, tc.after, got, tc.costly)
		}
	}
	if got := (Cost{Retransmits: 119501, Reordered: -1}).String(); got != "119,501 retransmits" {
		t.Errorf("unread reordering: %q", got)
	}
	if got := (Cost{Retransmits: 432, Reordered: 8}).String(); got != "432 retransmits, 8 reordered" {
		t.Errorf("%q", got)
	}
}
