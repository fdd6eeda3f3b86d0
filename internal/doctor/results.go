package doctor

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/probe"
	"github.com/wgperf/wgperf/internal/probes"
)

// Results are the targeted probes' results a report holds, each kept by its
// probe's definition (probe.Def, one of probes.All): the report's JSON
// writes each under the definition's Report key and reads it back as its
// Result type, so a probe added to the list needs no field of Report.
type Results map[catalog.Probe]any

// ProbeResult is r's result of the probe d, the zero T when r holds none.
// T is the type d declares (d.Result); another is a reader's mistake, and
// panics.
func ProbeResult[T any](r *Report, d probe.Def) T {
	if t := reflect.TypeFor[T](); t != d.Result {
		panic(fmt.Sprintf("doctor: probe %s's result is a %v, read as a %v", d.Name, d.Result, t))
	}
	v, _ := r.Results[d.Name].(T)
	return v
}

// SetResult keeps res as r's result of the probe d; res is of the type d
// declares (d.Result), another panics. A nil res drops the result.
func (r *Report) SetResult(d probe.Def, res any) {
	if res == nil {
		delete(r.Results, d.Name)
		return
	}
	if t := reflect.TypeOf(res); t != d.Result {
		panic(fmt.Sprintf("doctor: probe %s's result is a %v, given a %v", d.Name, d.Result, t))
	}
	if r.Results == nil {
		r.Results = Results{}
	}
	r.Results[d.Name] = res
}

// placed are the keys the first probes' results had in the report's JSON
// when each was a field of Report, in that order, with "uplinks" (a field
// that stood between them): the results stand there still, so a report
// reads byte for byte as it did. A listed probe not placed here follows
// them, in probes.All's order.
var placed = []string{"mtu", "icmp_burst", "shaping", "uplinks", "long_run", "udp_outside"}

// jsonLayout is Report as its JSON has it: a struct of Report's exported
// fields, Results standing for a field per listed probe (its Def.Report key,
// its Def.Result type, omitted when empty).
type jsonLayout struct {
	typ reflect.Type
	// from is, per field of typ, the index of Report's field it copies, or
	// -1 for a probe's result (def).
	from []int
	defs []probe.Def
}

var reportLayout = sync.OnceValue(func() jsonLayout {
	rt := reflect.TypeFor[Report]()
	byKey := map[string]int{}
	for i := range rt.NumField() {
		if f := rt.Field(i); f.IsExported() && jsonKey(f) != "-" {
			byKey[jsonKey(f)] = i
		}
	}
	defs := map[string]probe.Def{}
	var order []string
	for _, d := range probes.All {
		if d.Result == nil {
			panic(fmt.Sprintf("doctor: probe %s declares no result type", d.Name))
		}
		defs[d.Report] = d
		if !slices.Contains(placed, d.Report) {
			order = append(order, d.Report)
		}
	}
	order = append(slices.Clone(placed), order...)
	moved := map[int]bool{}
	for _, k := range order {
		if _, isProbe := defs[k]; !isProbe {
			if i, ok := byKey[k]; ok {
				moved[i] = true
			}
		}
	}
	var l jsonLayout
	var fields []reflect.StructField
	add := func(tag reflect.StructTag, t reflect.Type, from int, d probe.Def) {
		fields = append(fields, reflect.StructField{Name: fmt.Sprintf("F%d", len(fields)), Type: t, Tag: tag})
		l.from, l.defs = append(l.from, from), append(l.defs, d)
	}
	for i := range rt.NumField() {
		f := rt.Field(i)
		if f.Type == reflect.TypeFor[Results]() {
			for _, k := range order {
				if d, ok := defs[k]; ok {
					add(reflect.StructTag(fmt.Sprintf("json:%q", k+",omitempty,omitzero")), d.Result, -1, d)
				} else if j, ok := byKey[k]; ok {
					add(rt.Field(j).Tag, rt.Field(j).Type, j, probe.Def{})
				}
			}
			continue
		}
		if !f.IsExported() || jsonKey(f) == "-" || moved[i] {
			continue
		}
		add(f.Tag, f.Type, i, probe.Def{})
	}
	l.typ = reflect.StructOf(fields)
	return l
})

// jsonKey is the key encoding/json writes a field under.
func jsonKey(f reflect.StructField) string {
	k, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if k == "" {
		return f.Name
	}
	return k
}

// fill is r as its JSON layout: a pointer to a value of l.typ.
func (l jsonLayout) fill(r *Report) (reflect.Value, error) {
	v := reflect.New(l.typ)
	rv := reflect.ValueOf(r).Elem()
	for i, from := range l.from {
		if from >= 0 {
			v.Elem().Field(i).Set(rv.Field(from))
			continue
		}
		d := l.defs[i]
		res, ok := r.Results[d.Name]
		if !ok {
			continue
		}
		if t := reflect.TypeOf(res); t != d.Result {
			return v, fmt.Errorf("doctor: probe %s's result is a %v, the report holds a %v", d.Name, d.Result, t)
		}
		v.Elem().Field(i).Set(reflect.ValueOf(res))
	}
	for name := range r.Results {
		if _, ok := probes.Lookup(name); !ok {
			return v, fmt.Errorf("doctor: the report holds a result of probe %s, which is not listed (probes.All)", name)
		}
	}
	return v, nil
}

// MarshalJSON writes the report with each probe's result under its
// definition's key, where the layout places it.
func (r Report) MarshalJSON() ([]byte, error) {
	v, err := reportLayout().fill(&r)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v.Interface())
}

// UnmarshalJSON reads a report, each probe's result under its definition's
// key as its definition's type; like encoding/json into a struct, what the
// document does not hold is left as r had it.
func (r *Report) UnmarshalJSON(b []byte) error {
	l := reportLayout()
	v, err := l.fill(r)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v.Interface()); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) && typ.Struct == "" {
			typ.Struct = "Report"
		}
		return err
	}
	rv := reflect.ValueOf(r).Elem()
	for i, from := range l.from {
		f := v.Elem().Field(i)
		switch {
		case from >= 0:
			rv.Field(from).Set(f)
		case f.IsZero():
			r.SetResult(l.defs[i], nil)
		default:
			r.SetResult(l.defs[i], f.Interface())
		}
	}
	return nil
}
