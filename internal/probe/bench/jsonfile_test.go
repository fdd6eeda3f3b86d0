package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIperfJSONNeverWritesThroughPlantedPaths is issue 41's hole 3: root
// writing --iperf3-json files into a directory a user named follows no link
// planted under a result's name, and refuses, in one line, a directory
// other users can write without the sticky bit, one that belongs to another
// user, and a link in place of the directory.
func TestIperfJSONNeverWritesThroughPlantedPaths(t *testing.T) {
	spec := Spec{Path: "tunnel", Direction: "upload", Streams: 1}
	base := t.TempDir()
	victim := filepath.Join(base, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}

	// A link planted under the first result's name, in the user's directory.
	dir := filepath.Join(base, "results")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, "01-tunnel-upload-1streams.json")); err != nil {
		t.Fatal(err)
	}
	path, err := writeIperfJSON(dir, 1, spec, []byte(`{"end":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the planted link's target was written: %q", b)
	}
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("%s: %v, %v; want a new regular file", path, fi, err)
	}
	// A second run replaces its own result.
	if _, err := writeIperfJSON(dir, 1, spec, []byte(`{"end":{"x":1}}`)); err != nil {
		t.Errorf("a second run into the same directory: %v", err)
	}

	refused := map[string]string{}
	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o755); err != nil || os.Chmod(open, 0o777) != nil {
		t.Fatal(err)
	}
	refused[open] = "writable by other users"
	link := filepath.Join(base, "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	refused[link] = "not a directory"
	// A link at a middle component (issue 55, hole 5: only the last had
	// O_NOFOLLOW).
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	refused[filepath.Join(link, "sub")] = link + " is not a directory"
	if os.Geteuid() == 0 {
		theirs := filepath.Join(base, "theirs")
		if err := os.Mkdir(theirs, 0o755); err != nil || os.Chown(theirs, 65534, 65534) != nil {
			t.Fatal(err)
		}
		refused[theirs] = "belongs to user 65534"
	}
	for d, want := range refused {
		_, err := writeIperfJSON(d, 1, spec, []byte(`{}`))
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line saying %q", d, err, want)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the victim was written: %q", b)
	}

	// A sticky directory others can write (/tmp) is used, creating anew.
	sticky := filepath.Join(base, "sticky")
	if err := os.Mkdir(sticky, 0o755); err != nil || os.Chmod(sticky, 0o777|os.ModeSticky) != nil {
		t.Fatal(err)
	}
	if _, err := writeIperfJSON(sticky, 2, spec, []byte(`{}`)); err != nil {
		t.Errorf("sticky directory: %v", err)
	}
}
