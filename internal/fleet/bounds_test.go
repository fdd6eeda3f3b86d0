package fleet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// linkTree is a directory of levels directories, each holding two
// symbolic links (absolute, as the were) to the next: 2^levels
// paths to one inventory file at the bottom.
func linkTree(t *testing.T, levels int) string {
	t.Helper()
	dir := t.TempDir()
	level := func(i int) string { return filepath.Join(dir, fmt.Sprintf("L%d", i)) }
	for i := 0; i <= levels; i++ {
		if err := os.Mkdir(level(i), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := range levels {
		for _, name := range []string{"a", "b"} {
			if err := os.Symlink(level(i+1), filepath.Join(level(i), name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	writeTree(t, level(levels), map[string]string{"hosts": "gw\n"})
	return level(0)
}

// Issue 55, hole 7: a directory of 66 entries, symbolic links two a level
// 21 levels deep, was walked along each of its paths (26 to 120 s), and a
// 283-byte inventory whose range named 100,000 hosts cost 342 MB and 4 s.
// A directory is read once, a walk goes at most maxDirDepth deep and lists
// at most maxDirEntries, a range names at most MaxHosts, and each refusal
// is one line.
func TestInventoryAmplificationIsRefused(t *testing.T) {
	deep := linkTree(t, 21)
	inv := newInventory(context.Background())
	_, err := inv.source(deep)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d directories deep", maxDirDepth)) || strings.Contains(err.Error(), "\n") {
		t.Errorf("21 levels of two links: %v, want the depth bound in one line", err)
	}
	if inv.entries > 2*(maxDirDepth+1) {
		t.Errorf("21 levels of two links: %d entries listed, want at most %d (one path down)", inv.entries, 2*(maxDirDepth+1))
	}

	// Within the depth bound, the second link to a level is refused.
	shallow := linkTree(t, 4)
	if _, err := Load(context.Background(), shallow, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "a directory reached a second time") {
		t.Errorf("4 levels of two links: %v, want the second visit refused", err)
	}

	// A directory with more entries than the walk may list.
	many := t.TempDir()
	writeTree(t, many, map[string]string{"a": "a\n", "b": "b\n", "c": "c\n"})
	inv = newInventory(context.Background())
	inv.entries = maxDirEntries - 2
	if err := inv.readDir(many, 0); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d directory entries", maxDirEntries)) {
		t.Errorf("past the entries bound: %v", err)
	}

	// The small YAML files: a range of 100,000 hosts, and 10,000 hosts each
	// given 101 group variables.
	// (INI too, which the router build reads.)
	var vars, ini strings.Builder
	ini.WriteString("[all:vars]\n")
	for i := range 101 {
		fmt.Fprintf(&vars, "    v%d: x\n", i)
		fmt.Fprintf(&ini, "v%d=x\n", i)
	}
	cases := []struct{ name, text, want string }{
		{"hosts.ini", "h[00000:99999] ansible_user=root\n", "more than 10000 hosts"},
		{"hosts.ini", ini.String() + "[g]\nh[0000:9999]\n", "steps to resolve"},
	}
	if yamlInventories {
		cases = append(cases,
			struct{ name, text, want string }{"hosts.yml", "all:\n  hosts:\n    \"h[00000:99999]\":\n  vars:\n    ansible_user: root\n", "more than 10000 hosts"},
			struct{ name, text, want string }{"hosts.yml", "all:\n  hosts:\n    \"h[0000:9999]\":\n  vars:\n" + vars.String(), "steps to resolve"})
	}
	for _, tc := range cases {
		path := filepath.Join(t.TempDir(), tc.name)
		writeTree(t, filepath.Dir(path), map[string]string{tc.name: tc.text})
		inv := newInventory(context.Background())
		_, err := inv.source(path)
		if err == nil {
			_, err = inv.resolve()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%d-byte inventory: %v, want one line saying %q", len(tc.text), err, tc.want)
		}
		if inv.named > MaxHosts+1 || inv.work > maxWork+MaxHosts {
			t.Errorf("%d-byte inventory: %d names, %d steps of work", len(tc.text), inv.named, inv.work)
		}
	}
}

// An inventory file, and all of an inventory's files together, are bounded
// in bytes.
func TestInventoryBytesAreBounded(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("# a comment line\n", maxFileBytes/17+1) + "gw\n"
	writeTree(t, dir, map[string]string{"big": big})
	if _, err := Load(context.Background(), filepath.Join(dir, "big"), LoadOptions{}); err == nil || !strings.Contains(err.Error(), "larger than 8 MiB") {
		t.Errorf("a file over %d bytes: %v", maxFileBytes, err)
	}
	inv := newInventory(context.Background())
	inv.bytes = maxReadBytes - 2
	writeTree(t, dir, map[string]string{"small": "gw\nm42\n"})
	if _, err := inv.source(filepath.Join(dir, "small")); err == nil || !strings.Contains(err.Error(), "larger than 32 MiB together") {
		t.Errorf("past the bytes of all files: %v", err)
	}
}
