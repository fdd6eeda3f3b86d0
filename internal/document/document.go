// Package document reads and writes wgperf's JSON documents. Every --json
// output and every snapshot opens with what it is: schema_version, kind,
// wgperf_version and generated_at, then its own fields; schemas/ holds a JSON
// Schema per kind. Reading is bounded (MaxBytes) and tells a document's kind
// by its "kind", or by its fields for one written before documents carried a
// kind; what a kind holds is its reader's business (report, fix, diagnose).
package document

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// Kind says what a document is; it names its schema (schemas/KIND.schema.json).
type Kind string

// Kinds of documents.
const (
	Bench         Kind = "bench"
	Checks        Kind = "checks"
	Diagnose      Kind = "diagnose"
	DiagnoseFleet Kind = "diagnose-fleet"
	Doctor        Kind = "doctor"
	Drops         Kind = "drops"
	Explanation   Kind = "explanation"
	FixECMP       Kind = "fix-ecmp"
	FixJournal    Kind = "fix-journal"
	FixPlan       Kind = "fix-plan"
	ICMPBurst     Kind = "icmp-burst"
	Inventory     Kind = "inventory"
	LabRun        Kind = "lab-run"
	LabStatus     Kind = "lab-status"
	MTU           Kind = "mtu"
	MTUCapture    Kind = "mtu-capture"
	ShapeSweep    Kind = "shape-sweep"
	Snapshot      Kind = "snapshot"
	Version       Kind = "version"
	// Findings is a bare JSON array of findings, as older wgperf versions and
	// people write them for "fix --from"; it has no header.
	Findings Kind = "findings"
)

// Kinds lists every kind wgperf writes (Findings it only reads).
var Kinds = []Kind{Bench, Checks, Diagnose, DiagnoseFleet, Doctor, Drops, Explanation, FixECMP, FixJournal, FixPlan,
	ICMPBurst, Inventory, LabRun, LabStatus, MTU, MTUCapture, ShapeSweep, Snapshot, Version}

// SchemaVersion versions every document; it grows when a field changes
// meaning or goes away (new fields do not bump it).
const SchemaVersion = 1

// MaxBytes bounds what Read accepts. Real documents are a few hundred KiB; a
// file from someone else must not cost a gigabyte of memory.
const MaxBytes = 64 << 20

// Write prints v, a JSON object, as a document of kind written by wgperf
// version: the header first, indented. Fields v already has (a snapshot's
// schema_version) stay as they are.
func Write(w io.Writer, kind Kind, version string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return WriteJSON(w, kind, version, raw)
}

// WriteJSON is Write for an object already encoded.
func WriteJSON(w io.Writer, kind Kind, version string, raw []byte) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '{' {
		return fmt.Errorf("internal error: %s output is not a JSON object", kind)
	}
	var have map[string]json.RawMessage
	if err := json.Unmarshal(raw, &have); err != nil {
		return err
	}
	var head bytes.Buffer
	head.WriteByte('{')
	for _, kv := range []struct {
		key string
		val any
	}{{"schema_version", SchemaVersion}, {"kind", kind}, {"wgperf_version", version}, {"generated_at", time.Now().UTC().Format(time.RFC3339)}} {
		if _, ok := have[kv.key]; ok {
			continue
		}
		b, _ := json.Marshal(kv.val)
		fmt.Fprintf(&head, "%q:%s,", kv.key, b)
	}
	body := raw[1:]
	if len(have) == 0 {
		head.Truncate(head.Len() - 1) // no fields follow the last comma
	}
	var out bytes.Buffer
	if err := json.Indent(&out, append(head.Bytes(), body...), "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err := w.Write(out.Bytes())
	return err
}

// Doc is a document as read: its kind and its bytes.
type Doc struct {
	Kind Kind
	Data []byte
}

// Read reads one document of at most MaxBytes from r; what names it in errors
// ("--from results.json"). A document names its kind in "kind"; one without
// (written before documents carried a kind, or by hand) is told by its
// fields, and a bare array is Findings. Empty or malformed input, a "kind"
// that is not a name and JSON that is no document are refused, each in one line.
func Read(r io.Reader, what string) (*Doc, error) {
	data, err := ReadLimited(r, MaxBytes, what)
	if err != nil {
		return nil, err
	}
	t := bytes.TrimSpace(data)
	if len(t) == 0 {
		return nil, fmt.Errorf("%s: empty input", what)
	}
	if t[0] == '[' {
		return &Doc{Kind: Findings, Data: data}, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, JSONError(what, err)
	}
	if k, ok := fields["kind"]; ok {
		var kind Kind
		if err := json.Unmarshal(k, &kind); err != nil || kind == "" {
			return nil, fmt.Errorf("%s: \"kind\" is %s, not the name of a wgperf document", what, k)
		}
		return &Doc{Kind: kind, Data: data}, nil
	}
	if kind := guessKind(fields); kind != "" {
		return &Doc{Kind: kind, Data: data}, nil
	}
	return nil, fmt.Errorf("%s: not the JSON of a wgperf document (no \"kind\", and not the fields of one)", what)
}

// Decode reads the document into v; what names it in errors ("bench results").
func (d *Doc) Decode(v any, what string) error {
	if err := json.Unmarshal(d.Data, v); err != nil {
		return JSONError(what, err)
	}
	return nil
}

// guessKind tells the kind of a document without one by its fields, as the
// commands wrote them before documents carried a kind; "" when none fits.
func guessKind(fields map[string]json.RawMessage) Kind {
	has := func(names ...string) bool {
		for _, n := range names {
			if _, ok := fields[n]; !ok {
				return false
			}
		}
		return true
	}
	switch {
	case has("schema_version", "host", "collected_at"):
		return Snapshot
	case has("scenarios"):
		return LabRun
	case has("runs", "cells", "tunnel_addr"):
		return Bench
	case has("one_shot", "persistent"):
		return ICMPBurst
	case has("steps", "recommended_cap_mbit"):
		return ShapeSweep
	case has("probes", "path_mtu"):
		return MTU
	case has("findings"):
		return Diagnose
	}
	return ""
}

// JSONError says where JSON went wrong in one line.
func JSONError(what string, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Errorf("%s: malformed JSON at byte %d: %v", what, syn.Offset, err)
	case errors.As(err, &typ):
		return fmt.Errorf("%s: field %q: want %s, got JSON %s", what, typ.Field, typ.Type, typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%s: malformed JSON: input ends early (truncated file?)", what)
	}
	return fmt.Errorf("%s: %v", what, err)
}
