package document

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestWrite: every JSON document says what it is, which schema and wgperf
// wrote it and when, ahead of its own fields; a document that already carries
// a field (a snapshot's schema_version) keeps its own.
func TestWrite(t *testing.T) {
	var b strings.Builder
	if err := Write(&b, Bench, "v1.2", map[string]any{"runs": []int{}, "schema_version": 7}); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(b.String()), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b.String())
	}
	if got["kind"] != "bench" || got["schema_version"] != float64(7) || got["wgperf_version"] != "v1.2" || got["generated_at"] == nil || got["runs"] == nil {
		t.Errorf("document = %v", got)
	}
	if !strings.HasPrefix(b.String(), "{\n  \"kind\": \"bench\"") {
		t.Errorf("the kind does not come first:\n%s", b.String())
	}
	b.Reset()
	if err := Write(&b, "empty", "v1", struct{}{}); err != nil || !json.Valid([]byte(b.String())) {
		t.Errorf("empty object: %v\n%s", err, b.String())
	}
	if err := Write(&b, "list", "v1", []int{1}); err == nil {
		t.Error("a JSON array became a document")
	}
}

// TestRead: a document is read by its kind, an older one without a kind by
// its fields, a bare array as findings; what is not a document, or too
// large, is refused in one line naming what was read.
func TestRead(t *testing.T) {
	var written bytes.Buffer
	if err := Write(&written, Doctor, "v1", map[string]any{"findings": []int{}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in   string
		kind Kind
		err  string
	}{
		{written.String(), Doctor, ""},
		{`{"runs": [], "cells": [], "tunnel_addr": "10.77.0.2"}`, Bench, ""},
		{`{"scenarios": []}`, LabRun, ""},
		{`{"findings": []}`, Diagnose, ""},
		{`{"schema_version": 1, "host": "local", "collected_at": "2026-04-07T19:56:00Z"}`, Snapshot, ""},
		{` [{"id": "mtu.pmtud-blackhole"}]`, Findings, ""},
		{"", "", "empty input"},
		{`{"kind": 3}`, "", `"kind" is 3`},
		{`{"kind": "bench"`, "", "malformed JSON"},
		{`{"hello": "world"}`, "", "not the JSON of a wgperf document"},
		{`"text"`, "", "want map"},
	} {
		d, err := Read(strings.NewReader(tc.in), "--from x.json")
		switch {
		case tc.err == "" && (err != nil || d.Kind != tc.kind):
			t.Errorf("%.40q: %+v, %v; want kind %s", tc.in, d, err, tc.kind)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "--from x.json: ") || strings.Contains(err.Error(), "\n")):
			t.Errorf("%.40q: err %v, want one line with %q", tc.in, err, tc.err)
		}
	}
	big := strings.NewReader(`{"findings": "` + strings.Repeat("x", MaxBytes) + `"}`)
	if _, err := Read(big, "--from big.json"); err == nil || !strings.Contains(err.Error(), "larger than 64 MiB") {
		t.Errorf("a document over the limit: %v", err)
	}
}
