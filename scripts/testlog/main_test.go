package main

import (
	"bytes"
	"os"
	"testing"
)

// The recordings are real "go test -json" output of small packages: one
// with a passing test, a failing subtest beside a passing one and a skip
// (fail.json); the same with the failure mended (pass.json); a build error
// and a panic (broken.json).
func TestRelay(t *testing.T) {
	tests := []struct {
		file, out, times string
	}{
		{"fail.json",
			"    p_test.go:12: why it broke\n    p_test.go:12: want 1, got 2\n--- FAIL: TestFails/broken (0.00s)\n--- FAIL: TestFails (0.00s)\nFAIL\nFAIL\texample.com/tl/p\t1.115s\n",
			"1.1\texample.com/tl/p TestPasses\n"},
		{"pass.json", "ok  \texample.com/tl/p\t1.107s\n", "1.1\texample.com/tl/p TestPasses\n"},
		{"broken.json",
			"# example.com/tl/q [example.com/tl/q.test]\nq/q_test.go:5:32: undefined: undefinedThing\nFAIL\texample.com/tl/q [build failed]\n" +
				"    r_test.go:7: before the panic\n--- FAIL: TestPanics (0.00s)\npanic: assignment to entry in nil map [recovered, repanicked]\n",
			""},
	}
	for _, tt := range tests {
		in, err := os.ReadFile("testdata/" + tt.file)
		if err != nil {
			t.Fatal(err)
		}
		var out, times bytes.Buffer
		if err := relay(bytes.NewReader(in), &out, &times); err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		got := out.String()
		if tt.file == "broken.json" && len(got) > len(tt.out) {
			got = got[:len(tt.out)] // the panic's stack follows
		}
		if got != tt.out {
			t.Errorf("%s: printed\n%s\nwant\n%s", tt.file, got, tt.out)
		}
		if times.String() != tt.times {
			t.Errorf("%s: times %q, want %q", tt.file, times.String(), tt.times)
		}
	}
}

// A line that is not an event (go's own words) passes through.
func TestRelayPassesOtherLines(t *testing.T) {
	var out, times bytes.Buffer
	if err := relay(bytes.NewReader([]byte("go: downloading example.com/x v1.0.0\n")), &out, &times); err != nil {
		t.Fatal(err)
	}
	if out.String() != "go: downloading example.com/x v1.0.0\n" {
		t.Errorf("printed %q", out.String())
	}
}
