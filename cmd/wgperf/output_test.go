package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestWriteDocument: every JSON document says what it is, which schema and
// wgperf wrote it and when, ahead of its own fields; a document that
// already carries a field (a snapshot's schema_version) keeps its own.
func TestWriteDocument(t *testing.T) {
	var b strings.Builder
	if err := writeJSON(&b, "bench", map[string]any{"runs": []int{}, "schema_version": 7}); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(b.String()), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b.String())
	}
	if got["kind"] != "bench" || got["schema_version"] != float64(7) || got["wgperf_version"] != version || got["generated_at"] == nil || got["runs"] == nil {
		t.Errorf("document = %v", got)
	}
	if !strings.HasPrefix(b.String(), "{\n  \"kind\": \"bench\"") {
		t.Errorf("the kind does not come first:\n%s", b.String())
	}
	b.Reset()
	if err := writeJSON(&b, "empty", struct{}{}); err != nil || !json.Valid([]byte(b.String())) {
		t.Errorf("empty object: %v\n%s", err, b.String())
	}
	if err := writeJSON(&b, "list", []int{1}); err == nil {
		t.Error("a JSON array became a document")
	}
}
