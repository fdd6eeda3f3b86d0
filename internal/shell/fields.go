package shell

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Fields checks every string in v, a document read from someone else (a
// snapshot, a findings file): struct fields, map keys and values and list
// items, at any depth. Each must be valid UTF-8 without control characters
// but tab; a field named in multiline (by its JSON path without list
// indices, "openwrt.mwan3_status") may also hold newlines. The error names the
// first field that fails ("system.hostname: ..."), so a value cannot forge
// lines of a plan or drive a terminal, whatever shows it later.
func Fields(v any, multiline ...string) error {
	return fields(reflect.ValueOf(v), "", "", multiline)
}

// fields walks v; path names it for errors, shape for multiline (no indices).
func fields(v reflect.Value, path, shape string, multiline []string) error {
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		if slices.Contains(multiline, shape) {
			s = strings.ReplaceAll(s, "\n", "")
		}
		if !printable(strings.ReplaceAll(s, "\t", "")) {
			return fmt.Errorf("%s %q: control characters or invalid UTF-8", strings.TrimPrefix(path, "."), v.String())
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return fields(v.Elem(), path, shape, multiline)
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return nil // bytes, not text
		}
		for i := range v.Len() {
			if err := fields(v.Index(i), path+"["+strconv.Itoa(i)+"]", shape, multiline); err != nil {
				return err
			}
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			k := iter.Key()
			if k.Kind() == reflect.String && !printable(strings.ReplaceAll(k.String(), "\t", "")) {
				return fmt.Errorf("%s: key %q: control characters or invalid UTF-8", strings.TrimPrefix(path, "."), k.String())
			}
			if err := fields(iter.Value(), path+"["+strconv.Quote(fmt.Sprint(k.Interface()))+"]", shape, multiline); err != nil {
				return err
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if err := fields(v.Field(i), path+"."+name, strings.TrimPrefix(shape+"."+name, "."), multiline); err != nil {
				return err
			}
		}
	}
	return nil
}
