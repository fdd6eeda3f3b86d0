package fix

import (
	"context"
	"fmt"
	"io/fs"
)

type fsMode = fs.FileMode

// Measurement is one figure taken by --verify, larger is better (throughput
// in Mbit/s, path MTU in bytes).
type Measurement struct {
	Name  string  `json:"name"` // "tunnel throughput", "path MTU"
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
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
