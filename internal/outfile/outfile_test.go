package outfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plant is a directory with a victim file (what a planted link points at)
// and a real directory of results, owned by the test's user.
func plant(t *testing.T) (base, victim, real string) {
	t.Helper()
	base = t.TempDir()
	victim = filepath.Join(base, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	real = filepath.Join(base, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	return base, victim, real
}

// Issue 55, hole 5: --iperf3-json followed a link in place of a parent
// directory (only the last component had O_NOFOLLOW), and collect -o and
// report --html wrote through a planted link as root. A link at the file's
// name, at its directory, or at a component in the middle is never
// followed; the refusals are one line naming the component.
func TestPlantedLinksAreNeverFollowed(t *testing.T) {
	base, victim, real := plant(t)
	// The last component: a link planted under the file's name is replaced
	// by a new file, its target untouched.
	name := filepath.Join(real, "snap.json")
	if err := os.Symlink(victim, name); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(name, []byte("new"), 0o600); err != nil {
		t.Fatalf("%s over a planted link: %v", name, err)
	}
	if fi, err := os.Lstat(name); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("%s: %v, %v; want a new regular file", name, fi, err)
	}

	// The directory itself, and a component in the middle.
	if err := os.Symlink(real, filepath.Join(base, "dirlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(real, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(real, "sub", "x.html")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(base)
	for _, tc := range []struct{ path, link string }{
		{filepath.Join(base, "dirlink", "x.html"), filepath.Join(base, "dirlink")},
		{filepath.Join(base, "dirlink", "sub", "x.html"), filepath.Join(base, "dirlink")},
		{"dirlink/sub/x.html", "dirlink"},
		{filepath.Join(base, "victim", "x.html"), filepath.Join(base, "victim")},
	} {
		err := WriteFile(tc.path, []byte("attack"), 0o644)
		if err == nil || !strings.Contains(err.Error(), tc.link+" is not a directory") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line naming %s", tc.path, err, tc.link)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the planted link's target was written: %q", b)
	}
	if _, err := os.Stat(filepath.Join(real, "x.html")); err == nil {
		t.Errorf("a file was written through the directory link")
	}
	// A relative path of real directories works, and replaces its own file.
	for range 2 {
		if err := WriteFile("real/sub/y.html", []byte("ok"), 0o644); err != nil {
			t.Errorf("real/sub/y.html: %v", err)
		}
	}
}

// A directory others could swap the file in is refused; a sticky one (/tmp)
// is written, a new file only.
func TestDirectoriesOthersCanWrite(t *testing.T) {
	base, _, _ := plant(t)
	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o755); err != nil || os.Chmod(open, 0o777) != nil {
		t.Fatal(err)
	}
	if err := WriteFile(filepath.Join(open, "a"), nil, 0o600); err == nil || !strings.Contains(err.Error(), "writable by other users") {
		t.Errorf("a directory others can write: %v", err)
	}
	sticky := filepath.Join(base, "sticky")
	if err := os.Mkdir(sticky, 0o755); err != nil || os.Chmod(sticky, 0o777|os.ModeSticky) != nil {
		t.Fatal(err)
	}
	if err := WriteFile(filepath.Join(sticky, "a"), []byte("1"), 0o600); err != nil {
		t.Errorf("a sticky directory: %v", err)
	}
	if err := WriteFile(filepath.Join(sticky, "a"), []byte("2"), 0o600); err == nil || !strings.Contains(err.Error(), "replaces nothing there") {
		t.Errorf("an old file in a sticky directory: %v, want it refused", err)
	}
	if os.Geteuid() == 0 {
		theirs := filepath.Join(base, "theirs")
		if err := os.Mkdir(theirs, 0o755); err != nil || os.Chown(theirs, 65534, 65534) != nil {
			t.Fatal(err)
		}
		if err := WriteFile(filepath.Join(theirs, "a"), nil, 0o600); err == nil || !strings.Contains(err.Error(), "belongs to user 65534") {
			t.Errorf("another user's directory: %v", err)
		}
	}
	for _, bad := range []string{base + "/", base + "/.", base + "/.."} {
		if _, err := Create(bad, 0o600); err == nil {
			t.Errorf("Create(%q) succeeded", bad)
		}
	}
}
