package fleet

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLimitSubscripts splits a group by position as Ansible's patterns do
// (both ends of a range included, a negative index from the end), the way
// diagnose --inventory splits a fleet across runs: fleet[0:2] and fleet[3:]
// together are the group, each host once.
func TestLimitSubscripts(t *testing.T) {
	inv := filepath.Join(t.TempDir(), "hosts.ini")
	text := "[fleet]\nf1 ansible_host=10.0.0.1\nf2 ansible_host=10.0.0.2\nf3 ansible_host=10.0.0.3\nf4 ansible_host=10.0.0.4\nf5 ansible_host=10.0.0.5\n" +
		"[dead]\nf2\nf4\n[other]\nx1 ansible_host=10.0.1.1\n"
	if err := os.WriteFile(inv, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ limit, want string }{
		{"fleet[0]", "f1"},
		{"fleet[-1]", "f5"},
		{"fleet[0:2]", "f1 f2 f3"},
		{"fleet[3:]", "f4 f5"},
		{"fleet[:1]", "f1 f2"},
		{"fleet[1:3]:!dead", "f3"},
		{"fleet[0:1],other", "f1 f2 x1"},
		{"fleet[3:]:&dead", "f4"},
		{"dead[1]", "f4"},
		{"fleet[4:9]", "f5"},
		{"f[1-2]", "f1 f2"}, // a glob's class, not a subscript
	} {
		got, err := Load(context.Background(), inv, LoadOptions{Limit: tc.limit})
		if err != nil {
			t.Errorf("--limit %q: %v", tc.limit, err)
			continue
		}
		var names []string
		for _, h := range got.Hosts {
			names = append(names, h.Name)
		}
		if s := strings.Join(names, " "); s != tc.want {
			t.Errorf("--limit %q selects %q, want %q", tc.limit, s, tc.want)
		}
	}
	for _, limit := range []string{"fleet[5]", "fleet[-6]", "fleet[3:1]", "fleet[99999999999999999999:]"} {
		if _, err := Load(context.Background(), inv, LoadOptions{Limit: limit}); err == nil {
			t.Errorf("--limit %q selects hosts, want none", limit)
		}
	}
}
