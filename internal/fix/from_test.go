package fix

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wgperf/wgperf/internal/testutil"
)

// fix --from reads findings from a diagnose or doctor report, and from a
// collect snapshot (with the kind collect writes today, or none as before)
// the findings the checks make of it.
func TestReadFrom(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	report := write("doctor.json", []byte(`{"kind": "doctor", "schema_version": 1, "findings": [
	  {"id": "mtu.pmtud-blackhole", "severity": "critical", "host": "ssh:root@golem", "title": "black hole", "evidence": [], "fixes": []}]}`))
	fs, err := ReadFrom(report, nil)
	if err != nil || len(fs) != 1 || fs[0].ID != "mtu.pmtud-blackhole" {
		t.Errorf("doctor report: %+v, %v", fs, err)
	}
	snap, err := os.ReadFile(testutil.Testdata("snapshots", "seed000-golem.json"))
	if err != nil {
		t.Fatal(err)
	}
	kinded := write("golem.json", append([]byte(`{"kind": "snapshot", "wgperf_version": "dev", "generated_at": "2026-11-22T00:36:16Z", `), snap[1:]...))
	for _, p := range []string{testutil.Testdata("snapshots", "seed000-golem.json"), kinded} {
		fs, err := ReadFrom(p, nil)
		if err != nil || len(fs) == 0 || fs[0].ID != "route.stale-endpoint" {
			t.Errorf("%s: %+v, %v: want the checks' findings on the snapshot", p, fs, err)
		}
	}
}
