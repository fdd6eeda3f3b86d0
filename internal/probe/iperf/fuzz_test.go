package iperf

import (
	"bytes"
	"math"
	"path/filepath"
	"testing"

	"github.com/wgperf/wgperf/internal/testutil"
)

// FuzzParse: iperf3 -J comes from the far end; whatever it holds, Parse
// returns a result or an error, and a result's rates are numbers.
func FuzzParse(f *testing.F) {
	testutil.SeedDir(f, filepath.Join("..", "..", "..", "testdata", "probe", "iperf"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Parse(bytes.NewReader(b))
		if err != nil || r == nil {
			return
		}
		for _, v := range []float64{r.SentMbit, r.ReceivedMbit} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("rate %v from %q", v, b)
			}
		}
	})
}
