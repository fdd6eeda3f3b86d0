package parse

import (
	"bytes"
	"strings"
	"testing"
)

// A recorded /proc/stat, and the ways its ctxt line
// can be missing or wrong.
func TestParseContextSwitches(t *testing.T) {
	got, err := ParseContextSwitches(openTestdata(t, "proc", "stat"))
	if err != nil || got != 623348 {
		t.Errorf("recorded: %d, %v; want 623348", got, err)
	}
	for in, wantErr := range map[string]string{
		"cpu 1 2 3 4\nintr 5\n": "no ctxt line",
		"ctxt x\n":              "bad number",
		"ctxt -1\n":             "bad number",
	} {
		if _, err := ParseContextSwitches(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("ParseContextSwitches(%q) err = %v, want %q", in, err, wantErr)
		}
	}
}

func FuzzParseContextSwitches(f *testing.F) {
	addCorpus(f, "proc/stat*")
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := ParseContextSwitches(bytes.NewReader(b))
		if err != nil && n != 0 {
			t.Errorf("error %v with a count %d", err, n)
		}
	})
}
