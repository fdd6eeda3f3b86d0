package fix

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestVerificationWriteText(t *testing.T) {
	m := func(v float64, d string) Measurement {
		return Measurement{Name: "tunnel throughput", Value: v, Unit: "Mbit/s", Detail: d}
	}
	tests := []struct {
		name string
		v    Verification
		want string
	}{
		{"kept", Verification{Before: m(0.2, "upload 0.1, download 0.3 Mbit/s"), After: m(183.3, ""), Kept: true},
			"Verify (tunnel throughput):\n" +
				"  before    0.2 Mbit/s   (upload 0.1, download 0.3 Mbit/s)\n" +
				"  after   183.3 Mbit/s\n" +
				"  kept: the change helped (+91550.0%)\n"},
		{"rolled back", Verification{Before: m(183, ""), After: m(182.4, "")},
			"Verify (tunnel throughput):\n" +
				"  before  183.0 Mbit/s\n" +
				"  after   182.4 Mbit/s\n" +
				"  rolled back: the change did not help (-0.3%; needs more than +2%)\n"},
		{"nothing before", Verification{Before: m(0, ""), After: m(0, "")},
			"Verify (tunnel throughput):\n" +
				"  before  0.0 Mbit/s\n" +
				"  after   0.0 Mbit/s\n" +
				"  rolled back: the change did not help (no figure before; needs more than +2%)\n"},
	}
	for _, tt := range tests {
		var b strings.Builder
		if err := tt.v.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, b.String()); diff != "" {
			t.Errorf("%s (-want +got)\n%s", tt.name, diff)
		}
	}
}
