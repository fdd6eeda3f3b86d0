package main

import "testing"

// TestLegend: legendFormat's {{label}} takes the series' label, spaces
// inside the braces allowed, a missing label empty; no legendFormat names
// the series by its labels.
func TestLegend(t *testing.T) {
	labels := map[string]string{"__name__": "wgperf_finding", "instance": "netns:wgl-dash-a", "interface": "wg0", "id": "mtu"}
	for _, tc := range []struct{ format, want string }{
		{"{{instance}} {{id}} {{interface}}", "netns:wgl-dash-a mtu wg0"},
		{"rx {{ instance }} {{interface}} {{name}}", "rx netns:wgl-dash-a wg0"},
		{"dropped cpu{{cpu}} {{instance}}", "dropped cpu netns:wgl-dash-a"},
		{"critical", "critical"},
		{"", `wgperf_finding{id="mtu", instance="netns:wgl-dash-a", interface="wg0"}`},
	} {
		if got := legend(tc.format, labels); got != tc.want {
			t.Errorf("legend(%q) = %q, want %q", tc.format, got, tc.want)
		}
	}
}

// TestExpand: the dashboard's variables become their values in both of
// Grafana's spellings; an unknown one stays, for Prometheus to refuse.
func TestExpand(t *testing.T) {
	vars := map[string]string{"instance": ".+", "__rate_interval": "30s"}
	for _, tc := range []struct{ expr, want string }{
		{`rate(x{instance=~"$instance"}[$__rate_interval])`, `rate(x{instance=~".+"}[30s])`},
		{`x{instance=~"${instance}"}`, `x{instance=~".+"}`},
		{`x[$__unknown]`, `x[$__unknown]`},
	} {
		if got := expand(tc.expr, vars); got != tc.want {
			t.Errorf("expand(%q) = %q, want %q", tc.expr, got, tc.want)
		}
	}
}
