//go:build router

package report

import (
	"html/template"

	"github.com/wgperf/wgperf/internal/probe/mtu"
)

// The router build leaves the charts out: gonum/plot and its fonts are about
// a quarter of the binary, too much for a router's flash. Its HTML report
// has every table, and no figure.

func runCharts([]BenchRun, string) ([]chart, error) { return nil, nil }

func mtuChart(*mtu.Result) (template.HTML, []legendEntry, error) { return "", nil, nil }

func barChart(string, string, bool, []string, []barSet) (template.HTML, []legendEntry, error) {
	return "", nil, nil
}
