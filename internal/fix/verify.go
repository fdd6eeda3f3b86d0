package fix

import (
	"context"
	"fmt"
	"io"
	"io/fs"
)

type fsMode = fs.FileMode

// Measurement is one figure taken by --verify, larger is better (throughput
// in Mbit/s, path MTU in bytes).
type Measurement struct {
	Name  string  `json:"name"` // "tunnel throughput", "path MTU"
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
	// Detail says what the figure is made of (directions, MTUs seen).
	Detail string `json:"detail,omitempty"`
}

func (m Measurement) String() string { return fmt.Sprintf("%.1f %s", m.Value, m.Unit) }

// Better reports whether m improves on before by more than measurement noise (2%).
func (m Measurement) Better(before Measurement) bool {
	return m.Value > before.Value*1.02
}

// Measure takes one measurement for --verify.
type Measure func(ctx context.Context) (Measurement, error)

// Verification is the before/after comparison of one apply.
type Verification struct {
	Before Measurement `json:"before"`
	After  Measurement `json:"after"`
	Kept   bool        `json:"kept"` // false: the change did not help and was rolled back
}

// WriteText prints the two figures side by side and the verdict.
func (v *Verification) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("Verify (%s):\n", v.Before.Name)
	width := max(len(v.Before.String()), len(v.After.String()))
	for _, row := range []struct {
		label string
		m     Measurement
	}{{"before", v.Before}, {"after", v.After}} {
		ew.printf("  %-6s  %*s", row.label, width, row.m)
		if row.m.Detail != "" {
			ew.printf("   (%s)", row.m.Detail)
		}
		ew.printf("\n")
	}
	change := "no figure before"
	if v.Before.Value > 0 {
		change = fmt.Sprintf("%+.1f%%", (v.After.Value/v.Before.Value-1)*100)
	}
	if v.Kept {
		ew.printf("  kept: the change helped (%s)\n", change)
	} else {
		ew.printf("  rolled back: the change did not help (%s; needs more than +2%%)\n", change)
	}
	return ew.err
}
