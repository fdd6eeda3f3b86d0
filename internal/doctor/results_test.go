package doctor

import (
	"bytes"
	"encoding"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/icmpburst"
	"github.com/wgperf/wgperf/internal/probe/mtu"
	"github.com/wgperf/wgperf/internal/probe/shaping"
	"github.com/wgperf/wgperf/internal/probe/udppath"
	"github.com/wgperf/wgperf/internal/probe/uplinks"
	"github.com/wgperf/wgperf/internal/probes"
)

// TestEveryProbeResultRoundTrips: each listed probe's result, every field
// of it set, is written in doctor's JSON report under its definition's key
// and reads back as its definition's type, the same JSON: a key another
// field or probe already has, or a result encoding/json cannot read back,
// fails here.
func TestEveryProbeResultRoundTrips(t *testing.T) {
	keys := map[string]string{}
	for f := range reflect.TypeFor[Report]().Fields() {
		if f.IsExported() && jsonKey(f) != "-" {
			keys[jsonKey(f)] = "doctor's Report field " + f.Name
		}
	}
	for _, d := range probes.All {
		if other, ok := keys[d.Report]; ok {
			t.Errorf("probe %s: its key %q is also %s's", d.Name, d.Report, other)
		}
		keys[d.Report] = "probe " + string(d.Name)
		res := filled(d.Result, 0)
		want, err := json.Marshal(res.Interface())
		if err != nil {
			t.Fatalf("probe %s: %v", d.Name, err)
		}
		r := &Report{Kind: Kind, SchemaVersion: SchemaVersion, Seconds: 1}
		r.SetResult(d, res.Interface())
		js, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("probe %s: %v", d.Name, err)
		}
		var written map[string]json.RawMessage
		if err := json.Unmarshal(js, &written); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(written[d.Report], want) {
			t.Errorf("probe %s: the report has under %q\n%s\nthe result is\n%s", d.Name, d.Report, written[d.Report], want)
		}
		var back Report
		if err := json.Unmarshal(js, &back); err != nil {
			t.Fatalf("probe %s: %v", d.Name, err)
		}
		got, ok := back.Results[d.Name]
		if !ok || reflect.TypeOf(got) != d.Result {
			t.Errorf("probe %s: read back %T, want a %v", d.Name, got, d.Result)
			continue
		}
		if again, _ := json.Marshal(got); !bytes.Equal(again, want) {
			t.Errorf("probe %s: read back as\n%s\nwritten as\n%s", d.Name, again, want)
		}
		if again, _ := json.Marshal(&back); !bytes.Equal(again, js) {
			t.Errorf("probe %s: the report read back writes\n%s\nnot\n%s", d.Name, again, js)
		}
	}
}

// filled is a value of t with every exported field, element and pointer
// set, so its JSON has every key (depth bounds a type that holds itself).
// A value that writes itself as text or as a JSON scalar (a target, a
// severity) stays zero: any other value of it may be no valid one, and its
// own tests hold it.
func filled(t reflect.Type, depth int) reflect.Value {
	v := reflect.New(t).Elem()
	ownJSON := t.Kind() != reflect.Struct && t.Kind() != reflect.Pointer && t.Implements(reflect.TypeFor[json.Marshaler]())
	if depth > 6 || ownJSON || t.Implements(reflect.TypeFor[encoding.TextMarshaler]()) {
		return v
	}
	switch t.Kind() {
	case reflect.Pointer:
		v.Set(filled(t.Elem(), depth+1).Addr())
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && f.Tag.Get("json") != "-" {
				v.Field(i).Set(filled(f.Type, depth+1))
			}
		}
	case reflect.Slice:
		v.Set(reflect.Append(reflect.MakeSlice(t, 0, 1), filled(t.Elem(), depth+1)))
	case reflect.Array:
		for i := range t.Len() {
			v.Index(i).Set(filled(t.Elem(), depth+1))
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(t))
		v.SetMapIndex(filled(t.Key(), depth+1), filled(t.Elem(), depth+1))
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(3)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(3)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	}
	return v
}

// TestReportJSONKeepsItsLayout: the probes' results stand where the
// Report fields they were stood, "uplinks" between them, and a probe
// listed since follows them: a report reads byte for byte as before.
func TestReportJSONKeepsItsLayout(t *testing.T) {
	r := &Report{BenchError: "x", NotJudged: []string{"x"}, Bench: &bench.Report{}, Uplinks: []uplinks.Uplink{{}}, Hub: &HubPath{}, Unreachable: &Unreachable{}, Fix: &FixOutcome{}}
	for _, d := range probes.All {
		r.SetResult(d, filled(d.Result, 0).Interface())
	}
	js, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"kind", "schema_version", "client", "status", "threshold", "measured", "causes", "findings", "skipped", "hosts",
		"not_judged", "probes", "bench", "bench_error", "mtu", "icmp_burst", "shaping", "uplinks", "long_run", "udp_outside"}
	for _, d := range probes.All {
		if !slices.Contains(want, d.Report) {
			want = append(want, d.Report)
		}
	}
	want = append(want, "hub", "unreachable", "fix", "seconds")
	if got := topKeys(t, js); !slices.Equal(got, want) {
		t.Errorf("the report's keys\n%q\nwant\n%q", got, want)
	}
	// Empty results are left out, as each field's omitempty did.
	empty := &Report{}
	empty.SetResult(udppath.Def, []*udppath.Result{})
	empty.SetResult(mtu.Def, (*mtu.Result)(nil))
	js, err = json.Marshal(empty)
	if err != nil {
		t.Fatal(err)
	}
	if got := topKeys(t, js); slices.Contains(got, udppath.Def.Report) || slices.Contains(got, mtu.Def.Report) {
		t.Errorf("empty results written: %s", js)
	}
}

func topKeys(t *testing.T, js []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(js))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// TestSavedReportsReadBack: doctor's reports saved before the results were
// kept by definition (the goldens, and reports recorded by earlier wgperf
// versions) read back with each probe's result, as its type, and write
// their keys in the order they were saved in.
func TestSavedReportsReadBack(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(`"kind": "doctor"`)) {
			continue
		}
		var r Report
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var saved map[string]json.RawMessage
		if err := json.Unmarshal(b, &saved); err != nil {
			t.Fatal(err)
		}
		for _, d := range probes.All {
			if _, ok := saved[d.Report]; !ok {
				continue
			}
			seen[d.Report] = true
			if res, ok := r.Results[d.Name]; !ok || reflect.TypeOf(res) != d.Result || reflect.ValueOf(res).IsZero() {
				t.Errorf("%s: %q read as %T, want a %v", name, d.Report, res, d.Result)
			}
		}
		js, err := json.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, k := range topKeys(t, b) {
			if k != "wgperf_version" && k != "generated_at" { // document.Write's own
				want = append(want, k)
			}
		}
		if got := topKeys(t, js); !slices.Equal(got, want) {
			t.Errorf("%s: written back with keys\n%q\nsaved with\n%q", name, got, want)
		}
	}
	for _, k := range []string{"mtu", "shaping", "long_run", "udp_outside"} {
		if !seen[k] {
			t.Errorf("no saved report holds %q", k)
		}
	}
}

// TestResultTypeIsHeld: reading or keeping a result as another type than
// its definition's is a mistake the first test that takes that path shows.
func TestResultTypeIsHeld(t *testing.T) {
	mustPanic := func(what string, f func()) {
		t.Helper()
		defer func() {
			if e := recover(); e == nil || !strings.Contains(e.(string), "mtu") {
				t.Errorf("%s: recovered %v, want a panic naming the probe", what, e)
			}
		}()
		f()
	}
	r := &Report{}
	mustPanic("read as another type", func() { ProbeResult[*shaping.Result](r, mtu.Def) })
	mustPanic("kept as another type", func() { r.SetResult(mtu.Def, mtu.Result{}) })
	// A result held as the wrong type (a Report built field by field) fails
	// the JSON, not quietly drops it.
	r.Results = Results{mtu.Def.Name: &icmpburst.Result{}}
	if _, err := json.Marshal(r); err == nil || !strings.Contains(err.Error(), "mtu") {
		t.Errorf("a mistyped result marshalled: %v", err)
	}
	r.Results = Results{mtu.Def.Name: &mtu.Result{PathMTU: 1400}}
	if got := ProbeResult[*mtu.Result](r, mtu.Def); got == nil || got.PathMTU != 1400 {
		t.Errorf("read %+v", got)
	}
	if got := ProbeResult[*bench.LongRun](r, bench.LongRunDef); got != nil {
		t.Errorf("a result not held read as %+v", got)
	}
}
