package fix

import (
	"strings"
	"testing"
)

func TestReadFindings(t *testing.T) {
	const one = `{"id":"route.stale-endpoint","severity":"critical","host":"ssh:root@golem","title":"t","evidence":[],"fixes":[{"description":"d","commands":[],"action":{"kind":"endpoint-route","params":{"endpoint":"46.38.233.77"}}}]}`
	for _, tc := range []struct {
		name, in string
		want     int
		err      string
	}{
		{"array", "[" + one + "," + one + "]", 2, ""},
		{"report object", `{"hosts":["ssh:root@golem"],"findings":[` + one + `]}`, 1, ""},
		{"empty findings", `{"findings":[]}`, 0, ""},
		{"no findings key", `{"schema_version":1}`, 0, `no "findings"`},
		{"bad severity", `[{"id":"x","severity":"dire"}]`, 0, "severity"},
		{"not json", `hello`, 0, "not JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, err := ReadFindings(strings.NewReader(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want error containing %q", err, tc.err)
				}
				return
			}
			if err != nil || len(fs) != tc.want {
				t.Fatalf("got %d findings, %v; want %d", len(fs), err, tc.want)
			}
		})
	}
}
