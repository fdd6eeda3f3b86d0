package diagnose

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/fleet"
	"github.com/wgperf/wgperf/internal/target/targettest"
	"github.com/wgperf/wgperf/internal/testutil"
)

// golden compares got with testdata/name (go test -update rewrites it).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testutil.Golden(t, filepath.Join("testdata", name), got)
}

func load(t *testing.T, name string) *facts.Snapshot {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "snapshots", name))
	if err != nil {
		t.Fatal(err)
	}
	var s facts.Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// diagnosis runs the real checks over the multi-WAN case's router and the broken lab pair.
func diagnosis(t *testing.T) Diagnosis {
	snaps := []*facts.Snapshot{
		load(t, "seed000-golem.json"),
		load(t, "lab-mtu1480-icmplimit-lan-a.json"),
		load(t, "lab-mtu1480-icmplimit-lan-b.json"),
	}
	snaps[1].Softnet = nil // two skipped checks, so the skipped section renders
	snaps[1].Notes = append(snaps[1].Notes, facts.Note{Source: "/proc/net/softnet_stat", Message: "permission denied"})
	return NewDiagnosis(snaps, check.Run(snaps, check.Options{}))
}

func TestWriteTextGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteText(&buf, diagnosis(t), TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "\x1b[") {
		t.Error("colour escapes without Color")
	}
	golden(t, "diagnosis.txt", buf.Bytes())
}

func TestWriteJSONGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, diagnosis(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "diagnosis.json", buf.Bytes())

	// The JSON contract: these names, whatever Go calls the fields.
	var doc struct {
		Findings []map[string]any `json:"findings"`
		Skipped  []map[string]any `json:"skipped"`
		Hosts    []map[string]any `json:"hosts"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Findings) == 0 || len(doc.Skipped) != 3 || len(doc.Hosts) != 3 {
		t.Fatalf("findings %d, skipped %d, hosts %d", len(doc.Findings), len(doc.Skipped), len(doc.Hosts))
	}
	for _, k := range []string{"id", "severity", "host", "title", "detail", "evidence", "fixes"} {
		if _, ok := doc.Findings[0][k]; !ok {
			t.Errorf("finding lacks %q: %v", k, doc.Findings[0])
		}
	}
	fix := doc.Findings[0]["fixes"].([]any)[0].(map[string]any)
	for _, k := range []string{"description", "commands", "action"} {
		if _, ok := fix[k]; !ok {
			t.Errorf("fix lacks %q: %v", k, fix)
		}
	}
	for _, k := range []string{"check", "host", "reason"} {
		if _, ok := doc.Skipped[0][k]; !ok {
			t.Errorf("skip lacks %q", k)
		}
	}
}

func TestWriteTextColorAndEmpty(t *testing.T) {
	d := Diagnosis{
		Hosts: []Host{{Host: targettest.Spec("local"), Hostname: "h", CollectedAt: time.Unix(0, 0), WireGuard: []string{"wg0"}}},
		Findings: []finding.Finding{{ID: "udp.rcvbuf-errors", Severity: finding.Warning, Host: targettest.Spec("local"), Title: "t", Detail: "d",
			Evidence: []finding.Evidence{{Source: "s", Key: "k", Value: "v"}}, Fixes: []finding.Fix{{Description: "x", Commands: []string{"true"}}}}},
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, d, TextOptions{Color: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "\x1b[33m") {
		t.Errorf("warning not yellow on a terminal:\n%q", buf.String())
	}
	// One ID: the hint names it alone.
	if !strings.HasSuffix(buf.String(), "\n\n\x1b[2mdetails: wgperf explain udp.rcvbuf-errors\x1b[0m\n") {
		t.Errorf("no closing hint:\n%q", buf.String())
	}
	// A fleet's unreachable hosts come before the hint, which stays last.
	buf.Reset()
	fl := Fleet{Diagnosis: d, Unreachable: []fleet.Unreachable{{Host: targettest.Spec("ssh:m42"), Error: "ssh:m42: no route to host"}}}
	if err := fl.WriteText(&buf, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(buf.String(), "  ssh:m42: no route to host\n\ndetails: wgperf explain udp.rcvbuf-errors\n") {
		t.Errorf("fleet text does not end with the hint after the unreachable hosts:\n%s", buf.String())
	}
	buf.Reset()
	if err := WriteText(&buf, d.AtLeast(finding.Critical), TextOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "Diagnosed 1 host: local (h, wg0)\nNo findings: nothing here slows the tunnel down.\n"
	if buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}

func TestWrap(t *testing.T) {
	got := wrap("one two three four five", 9)
	if want := []string{"one two", "three", "four five"}; !cmp.Equal(got, want) {
		t.Errorf("wrap = %q, want %q", got, want)
	}
}
