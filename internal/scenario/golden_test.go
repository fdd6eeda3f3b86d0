package scenario

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/testutil"
)

// TestTableGolden holds lab run's table, and its JSON, on a recorded run
// (a black hole that passed, a lossy CUBIC case doctor missed).
func TestTableGolden(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "report", "labrun.json"))
	if err != nil {
		t.Fatal(err)
	}
	var run struct {
		Scenarios []*Result `json:"scenarios"`
	}
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	WriteTable(&table, run.Scenarios, false)
	testutil.Golden(t, filepath.Join("testdata", "labrun-table.txt"), table.Bytes())
	js, err := json.MarshalIndent(run.Scenarios, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, filepath.Join("testdata", "labrun.json"), append(js, '\n'))
}

// TestReportGolden holds lab run's report document on a recorded run; the
// report package renders it (its tests read this file, its HTML golden holds
// the page).
func TestReportGolden(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "report", "labrun.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := ReadReport(&document.Doc{Kind: document.LabRun, Data: b})
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, filepath.Join("..", "..", "testdata", "report", "labrun.document.json"), append(js, '\n'))
	if _, err := ReadReport(&document.Doc{Kind: document.LabRun, Data: []byte(`{"scenarios": []}`)}); err == nil {
		t.Error("a lab run without scenarios has a report")
	}
}
