package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/testutil"
)

// schemaBase is the $id prefix of the files in schemas/.
const schemaBase = "https://github.com/wgperf/wgperf/schemas/"

var schemaDir = filepath.Join("..", "..", "schemas")

// schemaFiles reads schemas/*.schema.json: file name -> parsed JSON.
func schemaFiles(t *testing.T) map[string]any {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(schemaDir, "*.schema.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no schemas in %s: %v", schemaDir, err)
	}
	out := map[string]any{}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out[filepath.Base(p)] = doc
	}
	return out
}

// schemaKinds are the document kinds that have a schema (all but common).
func schemaKinds(files map[string]any) []string {
	var kinds []string
	for name := range files {
		if k := strings.TrimSuffix(name, ".schema.json"); k != "common" {
			kinds = append(kinds, k)
		}
	}
	sort.Strings(kinds)
	return kinds
}

// closed returns a copy of a schema in which every object that lists its
// properties (and says nothing else about the rest) allows no other. The
// published schemas let readers meet fields a later wgperf adds; the tests
// hold wgperf itself to them, so a field it prints is a field they describe.
func closed(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v)+1)
		for k, x := range v {
			if k == "properties" || k == "$defs" {
				m := map[string]any{}
				for name, s := range x.(map[string]any) {
					m[name] = closed(s)
				}
				out[k] = m
				continue
			}
			out[k] = closed(x)
		}
		_, props := v["properties"]
		_, ref := v["$ref"]
		_, extra := v["additionalProperties"]
		if props && !ref && !extra {
			out["additionalProperties"] = false
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = closed(x)
		}
		return out
	}
	return v
}

// compileSchemas compiles every kind's schema, closed (see closed) or as published.
func compileSchemas(t *testing.T, files map[string]any, strict bool) map[string]*jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.AssertContent()
	for name, doc := range files {
		if strict {
			doc = closed(doc)
		}
		if err := c.AddResource(schemaBase+name, doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	out := map[string]*jsonschema.Schema{}
	for _, k := range schemaKinds(files) {
		s, err := c.Compile(schemaBase + k + ".schema.json")
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		out[k] = s
	}
	return out
}

func parseJSON(t *testing.T, b []byte) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return v
}

// TestSchemasValidateDocuments checks every document wgperf printed in these
// tests against the schema of its kind, and that every kind the commands
// print has a schema and a document here.
func TestSchemasValidateDocuments(t *testing.T) {
	files := schemaFiles(t)
	for _, strict := range []bool{true, false} {
		schemas := compileSchemas(t, files, strict)
		seen := map[string]int{}
		for _, d := range documents(t) {
			s, ok := schemas[d.kind]
			if !ok {
				t.Errorf("%s: no schema for kind %q in schemas/", d.from, d.kind)
				continue
			}
			v := parseJSON(t, d.json)
			if got := v.(map[string]any)["kind"]; got != d.kind {
				t.Errorf("%s: kind %v, want %q", d.from, got, d.kind)
			}
			if err := s.Validate(v); err != nil {
				t.Errorf("%s (strict %v) does not match schemas/%s.schema.json:\n%v", d.from, strict, d.kind, err)
			}
			seen[d.kind]++
		}
		for k := range schemas {
			if seen[k] == 0 && !slices.Contains(labKinds, k) {
				t.Errorf("no document of kind %q was checked against its schema", k)
			}
		}
	}
	for _, k := range printedKinds(t) {
		if _, ok := files[k+".schema.json"]; !ok {
			t.Errorf("the commands print kind %q, which has no schemas/%s.schema.json", k, k)
		}
	}
}

// printedKinds are the kinds wgperf writes.
func printedKinds(t *testing.T) []string {
	t.Helper()
	var kinds []string
	for _, k := range document.Kinds {
		kinds = append(kinds, string(k))
	}
	return kinds
}

// TestSchemasRejectBrokenDocuments feeds the schemas real documents with one
// thing wrong each: a schema that accepts them checks nothing.
func TestSchemasRejectBrokenDocuments(t *testing.T) {
	files := schemaFiles(t)
	strict, published := compileSchemas(t, files, true), compileSchemas(t, files, false)
	byKind := map[string]printedDoc{}
	for _, d := range documents(t) {
		// The first document of each kind that has findings with evidence, or else the first.
		if old, ok := byKind[d.kind]; !ok || (!bytes.Contains(old.json, []byte(`"evidence": [`)) && bytes.Contains(d.json, []byte(`"evidence": [`))) {
			byKind[d.kind] = d
		}
	}
	firstFinding := func(doc map[string]any) map[string]any {
		fs, _ := doc["findings"].([]any)
		for _, f := range fs {
			if f := f.(map[string]any); len(f["evidence"].([]any)) > 0 {
				return f
			}
		}
		t.Fatalf("no finding with evidence in %v", doc["kind"])
		return nil
	}
	for _, tc := range []struct {
		name, kind string
		breakIt    func(doc map[string]any)
		onlyStrict bool // a field the published schemas let a later wgperf add
	}{
		{"findings null", "diagnose", func(d map[string]any) { d["findings"] = nil }, false},
		{"evidence null", "diagnose", func(d map[string]any) { firstFinding(d)["evidence"] = nil }, false},
		{"fix commands null", "diagnose", func(d map[string]any) {
			firstFinding(d)["fixes"].([]any)[0].(map[string]any)["commands"] = nil
		}, false},
		{"unknown severity", "diagnose", func(d map[string]any) { firstFinding(d)["severity"] = "severe" }, false},
		{"unknown finding ID", "diagnose", func(d map[string]any) { firstFinding(d)["id"] = "mtu.too-big" }, false},
		{"finding without title", "diagnose", func(d map[string]any) { delete(firstFinding(d), "title") }, false},
		{"evidence number without unit", "diagnose", func(d map[string]any) {
			e := firstFinding(d)["evidence"].([]any)[0].(map[string]any)
			delete(e, "unit")
			e["number"] = json.Number("1")
		}, false},
		{"evidence unit unknown", "bench", func(d map[string]any) {
			e := firstFinding(d)["evidence"].([]any)[0].(map[string]any)
			e["number"], e["unit"] = json.Number("1"), "furlongs"
		}, false},
		{"number as text", "bench", func(d map[string]any) { d["hops"] = "1" }, false},
		{"wrong kind", "mtu", func(d map[string]any) { d["kind"] = "bench" }, false},
		{"no schema_version", "doctor", func(d map[string]any) { delete(d, "schema_version") }, false},
		{"generated_at not a time", "checks", func(d map[string]any) { d["generated_at"] = "yesterday" }, false},
		{"snapshot lists null", "snapshot", func(d map[string]any) { d["routes"] = nil }, false},
		{"journal state unknown", "fix-journal", func(d map[string]any) { d["state"] = "half-done" }, false},
		{"plan action kind unknown", "fix-plan", func(d map[string]any) {
			d["items"].([]any)[0].(map[string]any)["action"].(map[string]any)["kind"] = "reboot"
		}, false},
		{"a field no schema describes", "icmp-burst", func(d map[string]any) { d["loss"] = json.Number("3") }, true},
		{"a nested field no schema describes", "diagnose", func(d map[string]any) { firstFinding(d)["confidence"] = "high" }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := byKind[tc.kind]
			if !ok {
				t.Fatalf("no %s document", tc.kind)
			}
			doc := parseJSON(t, d.json).(map[string]any)
			if err := strict[tc.kind].Validate(doc); err != nil {
				t.Fatalf("%s is invalid before breaking it: %v", d.from, err)
			}
			tc.breakIt(doc)
			if err := strict[tc.kind].Validate(doc); err == nil {
				t.Errorf("%s with %s: the strict schema accepts it", d.from, tc.name)
			}
			err := published[tc.kind].Validate(doc)
			if tc.onlyStrict && err != nil {
				t.Errorf("%s with %s: the published schema refuses it: %v", d.from, tc.name, err)
			}
			if !tc.onlyStrict && err == nil {
				t.Errorf("%s with %s: the published schema accepts it", d.from, tc.name)
			}
		})
	}
}

// TestSchemaEnumsMatchCode: the IDs, fix kinds and evidence units the
// schemas list are those this wgperf has: the finding catalog's, remedy's and
// finding's. With -update (make docs) it writes them into the schema.
func TestSchemaEnumsMatchCode(t *testing.T) {
	if testutil.Update() {
		writeSchemaEnums(t, map[string][]string{"finding_id": catalogIDs(), "action_kind": remedy.Kinds()})
	}
	defs := schemaFiles(t)["common.schema.json"].(map[string]any)["$defs"].(map[string]any)
	enum := func(name string) []string {
		var out []string
		for _, v := range defs[name].(map[string]any)["enum"].([]any) {
			out = append(out, v.(string))
		}
		return out
	}
	var units []string
	for _, u := range finding.Units {
		units = append(units, string(u))
	}
	for _, tc := range []struct {
		def  string
		code []string
	}{
		{"finding_id", catalogIDs()},
		{"action_kind", remedy.Kinds()},
		{"unit", units},
	} {
		got, want := slices.Sorted(slices.Values(enum(tc.def))), slices.Sorted(slices.Values(tc.code))
		if !slices.Equal(got, want) {
			t.Errorf("common.schema.json $defs/%s enum %v\nthe code has %v (make docs writes them)", tc.def, got, want)
		}
	}
}

// writeSchemaEnums replaces the enum of each named $defs entry of
// schemas/common.schema.json with values, in order, keeping the file's layout.
func writeSchemaEnums(t *testing.T, enums map[string][]string) {
	t.Helper()
	path := filepath.Join(schemaDir, "common.schema.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, values := range enums {
		re := regexp.MustCompile(`(?s)(\n(\s*)"` + regexp.QuoteMeta(name) + `": \{\n\s*"enum": \[\n).*?(\n\s*\],)`)
		m := re.FindSubmatchIndex(b)
		if m == nil {
			t.Fatalf("%s: no $defs/%s enum", path, name)
		}
		indent := string(b[m[4]:m[5]]) + "    "
		quoted := make([]string, len(values))
		for i, v := range slices.Sorted(slices.Values(values)) {
			quoted[i] = indent + strconv.Quote(v)
		}
		b = slices.Concat(b[:m[3]], []byte(strings.Join(quoted, ",\n")), b[m[6]:])
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestNoNullLists walks every document: a JSON null may stand only where a
// schema says an object may be absent that way (a snapshot's conntrack and
// openwrt, a shape-sweep step that failed); a list is [] when empty.
func TestNoNullLists(t *testing.T) {
	nullable := map[string]bool{}
	var find func(v any)
	find = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if props, ok := v["properties"].(map[string]any); ok {
				for name, s := range props {
					if allowsNull(s) {
						nullable[name] = true
					}
				}
			}
			for _, x := range v {
				find(x)
			}
		case []any:
			for _, x := range v {
				find(x)
			}
		}
	}
	for _, s := range schemaFiles(t) {
		find(s)
	}
	for _, d := range documents(t) {
		walkJSON(parseJSON(t, d.json), "", func(path string, v any) {
			if v != nil {
				return
			}
			key := path[strings.LastIndex(path, ".")+1:]
			if strings.HasSuffix(key, "]") || !nullable[key] {
				t.Errorf("%s: %s is null", d.from, path)
			}
		})
	}
}

func allowsNull(s any) bool {
	m, ok := s.(map[string]any)
	if !ok {
		return false
	}
	if m["type"] == "null" {
		return true
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		alts, _ := m[k].([]any)
		for _, a := range alts {
			if allowsNull(a) {
				return true
			}
		}
	}
	return false
}

// walkJSON calls f on every value under v with its path ("findings[0].evidence").
func walkJSON(v any, path string, f func(path string, v any)) {
	f(path, v)
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			p := k
			if path != "" {
				p = path + "." + k
			}
			walkJSON(x, p, f)
		}
	case []any:
		for i, x := range v {
			walkJSON(x, fmt.Sprintf("%s[%d]", path, i), f)
		}
	}
}

// leadingNumber is a display value that starts with a quantity: "1480",
// "9,312", "+32 packets", "19.7%", "3m12s ago", "5 of 30"; not an address
// ("203.0.113.2 via 192.0.2.1", "2001:db8::1").
var leadingNumber = regexp.MustCompile(`^[+-]?[0-9][0-9,]*(\.[0-9]+)?([^.:0-9]|$)`)

// wgKey is a WireGuard public key, which may start with a digit.
var wgKey = regexp.MustCompile(`^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$`)

// TestEvidenceIsTyped: in every finding the checks and probes produced from
// the fixtures, evidence whose value starts with a number carries that
// quantity as number and unit.
func TestEvidenceIsTyped(t *testing.T) {
	typed := 0
	for _, d := range documents(t) {
		if d.recorded {
			continue // written before evidence had numbers
		}
		walkJSON(parseJSON(t, d.json), "", func(path string, v any) {
			ev, ok := v.([]any)
			if !ok || !strings.HasSuffix(path, "evidence") {
				return
			}
			for i, e := range ev {
				e := e.(map[string]any)
				value, _ := e["value"].(string)
				first, _, _ := strings.Cut(value, " ")
				_, hasNumber := e["number"]
				_, hasUnit := e["unit"]
				switch {
				case hasNumber != hasUnit:
					t.Errorf("%s: %s[%d] %q: number without unit or unit without number", d.from, path, i, value)
				case leadingNumber.MatchString(value) && !wgKey.MatchString(first) && !hasNumber:
					t.Errorf("%s: %s[%d] %s = %q has no number and unit", d.from, path, i, e["key"], value)
				case hasNumber:
					typed++
				}
			}
		})
	}
	if typed < 20 {
		t.Errorf("only %d typed evidence values in all documents: are the fixtures still producing findings?", typed)
	}
}
