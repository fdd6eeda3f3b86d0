package sizing

import (
	"strings"
	"testing"
)

func TestSize(t *testing.T) {
	tests := []struct {
		name             string
		catalog          int
		capacity         float64
		uplinks          int
		rate             int
		skip             bool
		describeContains string
	}{
		{"fast machine keeps the catalog rate", 200, 1900, 1, 200, false, "catalog's 200"},
		{"2-core box with a delay element", 200, 383, 1, 110, false, "at most 200"},
		{"busy box", 200, 150, 1, 40, false, "150 Mbit/s"},
		{"ecmp shares the machine between uplinks", 100, 500, 2, 70, false, "at most 100"},
		{"too slow to judge", 200, 60, 1, 0, true, "too little to judge"},
		{"ecmp too slow", 100, 120, 2, 0, true, "need 133"},
	}
	for _, tt := range tests {
		s := Size(tt.catalog, tt.capacity, tt.uplinks)
		if s.RateMbit != tt.rate || (s.Skip != "") != tt.skip || !strings.Contains(s.String(), tt.describeContains) {
			t.Errorf("%s: rate %d skip %q (%s), want %d skip %v containing %q", tt.name, s.RateMbit, s.Skip, s, tt.rate, tt.skip, tt.describeContains)
		}
	}
}

func TestHeld(t *testing.T) {
	tests := []struct {
		name    string
		sizing  Sizing
		ceiling int
		rate    int
		says    string
	}{
		{"no ceiling", Size(200, 1900, 1), 0, 200, "catalog's 200"},
		{"held below the catalog", Size(200, 1900, 1), 50, 50, "held at 50 Mbit/s (catalog: at most 200), other labs share"},
		{"held below the sized rate", Size(200, 383, 1), 50, 50, "383 Mbit/s"},
		{"a slower sizing keeps its rate", Size(200, 150, 1), 50, 40, "underlay at 40"},
		{"a skip stays a skip", Size(200, 60, 1), 50, 0, "too little to judge"},
	}
	for _, tt := range tests {
		s := tt.sizing.Held(tt.ceiling)
		if s.RateMbit != tt.rate || !strings.Contains(s.String(), tt.says) {
			t.Errorf("%s: rate %d (%s), want %d saying %q", tt.name, s.RateMbit, s, tt.rate, tt.says)
		}
	}
}
