package fix

import (
	"os"
	"path/filepath"
	"testing"
)

// A "wgperf doctor --json" report carries a schema_version like a snapshot,
// but it is findings (what the doctor's probes proved), not facts.
func TestReadSourceDoctorReport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doctor.json")
	doc := `{"kind": "doctor", "schema_version": 1, "findings": [
	  {"id": "mtu.pmtud-blackhole", "severity": "critical", "host": "ssh:root@golem", "title": "black hole", "evidence": [], "fixes": []}]}`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := ReadSource(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(src.Findings) != 1 || src.Findings[0].ID != "mtu.pmtud-blackhole" {
		t.Errorf("findings %+v", src.Findings)
	}
	// A snapshot (schema_version, no kind) is still read as facts.
	if _, err := ReadSource(filepath.Join("..", "..", "testdata", "snapshots", "lab-healthy-a.json")); err != nil {
		t.Errorf("snapshot: %v", err)
	}
}

// "wgperf collect" names its output kind "snapshot": it is read as facts,
// as one from before collect wrote a kind.
func TestReadSourceKindedSnapshot(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "snapshots", "seed000-golem.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "golem.json")
	kinded := append([]byte(`{"kind": "snapshot", "wgperf_version": "dev", "generated_at": "2026-11-22T00:36:16Z", `), b[1:]...)
	if err := os.WriteFile(path, kinded, 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := ReadSource(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(src.Findings) == 0 || src.Findings[0].ID != "route.stale-endpoint" {
		t.Errorf("findings %+v: want the checks' findings on the snapshot", src.Findings)
	}
}
