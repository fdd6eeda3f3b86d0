package lab

import "testing"

// TestNodeOf: only a lab node's namespace names a lab and a node; the same
// words reached any other way (ssh, a foreign namespace) name none.
func TestNodeOf(t *testing.T) {
	for _, tc := range []struct {
		spec, name, node string
		ok               bool
	}{
		{"netns:" + Prefix + "demo-a", "demo", "a", true},
		{"netns:" + Prefix + "my-lab-r", "my-lab", "r", true},
		{"ssh:" + Prefix + "demo-a", "", "", false},
		{"netns:site-a", "", "", false},
		{"netns:" + Prefix + "demo-", "", "", false},
		{"local", "", "", false},
		{"netns:", "", "", false},
	} {
		name, node, ok := NodeOf(tc.spec)
		if name != tc.name || node != tc.node || ok != tc.ok {
			t.Errorf("NodeOf(%q) = %q, %q, %v; want %q, %q, %v", tc.spec, name, node, ok, tc.name, tc.node, tc.ok)
		}
	}
}
