package probes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/probe"
	"github.com/wgperf/wgperf/internal/testutil"
)

// The doctor report's schema names each listed probe twice: its result's
// key among the report's properties (its Def.Schema, its help line) and
// its name in $defs/probe_run's enum. make docs writes both from All
// (TestSchemaListsEveryProbe -update); a probe is never written there by
// hand.

var schemaDir = filepath.Join("..", "..", "schemas")

// generated is the $comment of each property make docs writes: it tells
// readers so, and tells make docs which to write again.
const generated = "make docs writes this from the probe's definition (internal/probes: All)"

// resultProperty is the schema of probe d's result in doctor's report.
type resultProperty struct {
	Comment     string `json:"$comment"`
	Description string `json:"description"`
	Ref         string `json:"$ref,omitempty"`
	Type        string `json:"type,omitempty"`
	Items       *struct {
		Ref string `json:"$ref"`
	} `json:"items,omitempty"`
}

func propertyOf(d probe.Def) resultProperty {
	p := resultProperty{Comment: generated}
	if d.Result != nil && d.Result.Kind() == reflect.Slice {
		p.Description = fmt.Sprintf("The results of doctor's targeted probe %s, one per run (doctor --help): %s.", d.Name, d.Doc)
		p.Type, p.Items = "array", &struct {
			Ref string `json:"$ref"`
		}{d.Schema}
		return p
	}
	p.Description = fmt.Sprintf("The result of doctor's targeted probe %s (doctor --help): %s.", d.Name, d.Doc)
	p.Ref = d.Schema
	return p
}

// member is one key of a JSON object and its value, in the object's order.
type member struct {
	key string
	val json.RawMessage
}

// members are the keys of a JSON object, in order.
func members(raw json.RawMessage) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object: %.40s", raw)
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var m member
		m.key = tok.(string)
		if err := dec.Decode(&m.val); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// object is ms as one compact JSON object.
func object(ms []member) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		if err := json.Compact(&b, m.val); err != nil {
			panic(err) // m.val came from a decoder or from marshal
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// edit replaces the value at path (object keys) in raw with what f makes
// of it.
func edit(raw json.RawMessage, path []string, f func([]member) ([]member, error)) (json.RawMessage, error) {
	ms, err := members(raw)
	if err != nil {
		return nil, err
	}
	if len(path) == 0 {
		ms, err = f(ms)
		return object(ms), err
	}
	i := slices.IndexFunc(ms, func(m member) bool { return m.key == path[0] })
	if i < 0 {
		return nil, fmt.Errorf("no %q", path[0])
	}
	ms[i].val, err = edit(ms[i].val, path[1:], f)
	return object(ms), err
}

// marshal is v as JSON, its text as written (no HTML escapes).
func marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return bytes.TrimSpace(b.Bytes()), err
}

// withProbes is doctor's schema with the listed probes' results and names
// as All has them: each probe's property where the first of the previous
// ones stood (after "bench_error" when there was none), in All's order;
// every other property is kept as it was, in its place.
func withProbes(schema []byte) ([]byte, error) {
	keys := map[string]bool{}
	var names []catalog.Probe
	for _, d := range All {
		keys[d.Report] = true
		names = append(names, d.Name)
	}
	raw, err := edit(schema, []string{"properties"}, func(ms []member) ([]member, error) {
		var kept []member
		at := -1
		for _, m := range ms {
			var p struct {
				Comment string `json:"$comment"`
			}
			if json.Unmarshal(m.val, &p) == nil && p.Comment == generated || keys[m.key] {
				if at < 0 {
					at = len(kept) // where the first generated key stood
				}
				continue
			}
			kept = append(kept, m)
		}
		if at < 0 {
			at = len(kept)
			if i := slices.IndexFunc(kept, func(m member) bool { return m.key == "bench_error" }); i >= 0 {
				at = i + 1
			}
		}
		var add []member
		for _, d := range All {
			v, err := marshal(propertyOf(d))
			if err != nil {
				return nil, err
			}
			add = append(add, member{d.Report, v})
		}
		return slices.Insert(kept, at, add...), nil
	})
	if err != nil {
		return nil, fmt.Errorf("properties: %w", err)
	}
	raw, err = edit(raw, []string{"$defs", "probe_run", "properties", "probe"}, func(ms []member) ([]member, error) {
		i := slices.IndexFunc(ms, func(m member) bool { return m.key == "enum" })
		if i < 0 {
			return nil, fmt.Errorf("no enum")
		}
		ms[i].val, err = marshal(names)
		return ms, err
	})
	if err != nil {
		return nil, fmt.Errorf("$defs/probe_run/properties/probe: %w", err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// TestSchemaListsEveryProbe holds the doctor report's schema to the list:
// each listed probe's result is a property of the report, its Def.Schema,
// and its name is in the probe_run enum, as make docs writes them (with
// -update it writes them); no other probe is named. Each Def.Schema is a
// schema that exists.
func TestSchemaListsEveryProbe(t *testing.T) {
	path := filepath.Join(schemaDir, "doctor.schema.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := withProbes(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if testutil.Update() {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		b = want
	}
	if !bytes.Equal(b, want) {
		have, should := strings.Split(string(b), "\n"), strings.Split(string(want), "\n")
		i := 0
		for i < min(len(have), len(should)) && have[i] == should[i] {
			i++
		}
		t.Errorf("%s is not what make docs writes from probes.All (run make docs); from line %d it has\n%s\nand should have\n%s",
			path, i+1, strings.Join(have[i:min(i+8, len(have))], "\n"), strings.Join(should[i:min(i+8, len(should))], "\n"))
	}

	var schema struct {
		Properties map[string]resultProperty `json:"properties"`
		Defs       struct {
			ProbeRun struct {
				Properties struct {
					Probe struct {
						Enum []catalog.Probe `json:"enum"`
					} `json:"probe"`
				} `json:"properties"`
			} `json:"probe_run"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	var names []catalog.Probe
	for _, d := range All {
		names = append(names, d.Name)
		if d.Report == "" || d.Result == nil || d.Schema == "" {
			t.Errorf("%s: no Report key, Result type or Schema", d.Name)
			continue
		}
		if got, ok := schema.Properties[d.Report]; !ok || !reflect.DeepEqual(got, propertyOf(d)) {
			have, _ := marshal(got)
			want, _ := marshal(propertyOf(d))
			t.Errorf("%s: doctor.schema.json has under %q, the key of its result,\n%s\nwant\n%s", d.Name, d.Report, have, want)
		}
		if err := resolves(d.Schema); err != nil {
			t.Errorf("%s: its result's schema %q: %v", d.Name, d.Schema, err)
		}
	}
	for key, p := range schema.Properties {
		if _, listed := lookupReport(key); p.Comment == generated && !listed {
			t.Errorf("doctor.schema.json has %q as a probe's result, and no listed probe has that key", key)
		}
	}
	if got := schema.Defs.ProbeRun.Properties.Probe.Enum; !slices.Equal(got, names) {
		t.Errorf("doctor.schema.json $defs/probe_run probe enum %q, the list has %q", got, names)
	}
}

func lookupReport(key string) (probe.Def, bool) {
	i := slices.IndexFunc(All, func(d probe.Def) bool { return d.Report == key })
	if i < 0 {
		return probe.Def{}, false
	}
	return All[i], true
}

// resolves reports whether ref, a $ref from doctor's schema, names an
// object in schemas/: a file (doctor's when none) and a JSON pointer in it.
func resolves(ref string) error {
	file, pointer, _ := strings.Cut(ref, "#")
	if file == "" {
		file = "doctor.schema.json"
	}
	b, err := os.ReadFile(filepath.Join(schemaDir, file))
	if err != nil {
		return err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	for tok := range strings.SplitSeq(strings.TrimPrefix(pointer, "/"), "/") {
		if pointer == "" {
			break // the whole file
		}
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: nothing at %q", file, tok)
		}
		if v, ok = m[tok]; !ok {
			return fmt.Errorf("%s: no %q", file, tok)
		}
	}
	if _, ok := v.(map[string]any); !ok {
		return fmt.Errorf("%s#%s is not a schema", file, pointer)
	}
	return nil
}
