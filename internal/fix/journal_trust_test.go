package fix

import (
	"github.com/wgperf/wgperf/internal/remedy"

	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/target"
)

const plantedID = "20260101T000000.000000000Z"

// plant writes, under root, a journal whose undo line touches root/PWNED, as
// an attacker who got to create the journal directory first would.
func plant(t *testing.T, root, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	pwned := filepath.Join(root, "PWNED")
	j := `{"id": "` + plantedID + `", "host": "local", "state": "applied", "entries": [
	  {"findings": ["udp.rcvbuf-errors"], "description": "planted", "status": "applied",
	   "step": {"kind": "sysctl", "summary": "", "undo": ["touch ` + pwned + `"]}}]}`
	if err := os.WriteFile(filepath.Join(dir, plantedID+".json"), []byte(j), 0o600); err != nil {
		t.Fatal(err)
	}
	return pwned
}

const nobody = 65534

// TestRollbackRefusesPlantedJournal is hole 1: a journal directory or file
// that someone else could have written is refused with ErrUntrustedJournal,
// and its undo lines never run. The control case shows the same journal in a
// directory of root's own does run, so the refusals are what stops it.
func TestRollbackRefusesPlantedJournal(t *testing.T) {
	chown := func(t *testing.T, p string) {
		if os.Getuid() != 0 {
			t.Skip("chown to nobody needs root")
		}
		if err := os.Lchown(p, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		arrange func(t *testing.T, root, jdir string)
		refused bool
	}{
		{"control: root's own 0700 directory", func(*testing.T, string, string) {}, false},
		{"directory owned by nobody", func(t *testing.T, _, jdir string) { chown(t, jdir) }, true},
		{"parent owned by nobody", func(t *testing.T, _, jdir string) { chown(t, filepath.Dir(jdir)) }, true},
		{"world-writable directory", func(t *testing.T, _, jdir string) { must(t, os.Chmod(jdir, 0o777)) }, true},
		{"group-writable parent", func(t *testing.T, _, jdir string) { must(t, os.Chmod(filepath.Dir(jdir), 0o770)) }, true},
		// Issue 30 item 2: every directory above the journal counts, as the
		// watchdog checks them: one anybody may write lets them swap the
		// journal directory for their own; a sticky one (/tmp) does not.
		{"system directory above it world-writable", func(t *testing.T, _, jdir string) {
			must(t, os.Chmod(filepath.Dir(filepath.Dir(jdir)), 0o777))
		}, true},
		{"config root world-writable", func(t *testing.T, root, _ string) { must(t, os.Chmod(root, 0o777)) }, true},
		{"system directory above it owned by nobody", func(t *testing.T, _, jdir string) { chown(t, filepath.Dir(filepath.Dir(jdir))) }, true},
		{"control: a sticky world-writable directory above it", func(t *testing.T, _, jdir string) {
			must(t, os.Chmod(filepath.Dir(filepath.Dir(jdir)), os.ModeSticky|0o777))
		}, false},
		{"journal file owned by nobody", func(t *testing.T, _, jdir string) { chown(t, filepath.Join(jdir, plantedID+".json")) }, true},
		{"world-writable journal file", func(t *testing.T, _, jdir string) {
			must(t, os.Chmod(filepath.Join(jdir, plantedID+".json"), 0o666))
		}, true},
		{"directory is a symlink", func(t *testing.T, root, jdir string) {
			elsewhere := filepath.Join(root, "tmp", "planted")
			must(t, os.MkdirAll(filepath.Dir(elsewhere), 0o755))
			must(t, os.Rename(jdir, elsewhere))
			must(t, os.Symlink(elsewhere, jdir))
		}, true},
		{"journal file is a symlink", func(t *testing.T, root, jdir string) {
			f := filepath.Join(jdir, plantedID+".json")
			must(t, os.Rename(f, filepath.Join(root, "elsewhere.json")))
			must(t, os.Symlink(filepath.Join(root, "elsewhere.json"), f))
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			env := &Env{Env: remedy.Env{T: target.Local(), Root: root, Platform: remedy.Linux}}
			jdir := env.journalDir()
			pwned := plant(t, root, jdir)
			tc.arrange(t, root, jdir)
			_, err := Rollback(context.Background(), env)
			_, ran := os.Stat(pwned)
			if !tc.refused {
				if err != nil || ran != nil {
					t.Fatalf("control: rollback err %v, undo ran: %v", err, ran == nil)
				}
				return
			}
			if ran == nil {
				t.Fatal("root ran the planted undo line")
			}
			if !errors.Is(err, ErrUntrustedJournal) {
				t.Fatalf("err = %v, want ErrUntrustedJournal", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestJournalCreatedPrivateAndPersistent: apply makes the journal directory
// and its parent 0700 and its files 0600, in /var/lib/wgperf on Linux and on
// OpenWrt's overlay (/etc/wgperf), never under /var (a link to /tmp there).
func TestJournalCreatedPrivateAndPersistent(t *testing.T) {
	for _, tc := range []struct {
		platform remedy.Platform
		dir      string
	}{{remedy.Linux, "/var/lib/wgperf/journal"}, {remedy.OpenWrt, "/etc/wgperf/journal"}} {
		root := t.TempDir()
		env := &Env{Env: remedy.Env{T: target.Local(), Root: root, Platform: tc.platform}}
		j, err := Apply(context.Background(), env, &Plan{}, ApplyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for p, want := range map[string]os.FileMode{
			filepath.Join(root, tc.dir):               os.ModeDir | 0o700,
			filepath.Join(root, filepath.Dir(tc.dir)): os.ModeDir | 0o700,
			filepath.Join(root, tc.dir, j.ID+".json"): 0o600,
		} {
			fi, err := os.Lstat(p)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode() != want {
				t.Errorf("%s: %s mode %v, want %v", tc.platform, p, fi.Mode(), want)
			}
		}
		if _, err := LoadJournal(context.Background(), env, j.ID); err != nil {
			t.Errorf("%s: load: %v", tc.platform, err)
		}
		if _, err := LoadJournal(context.Background(), env, "../../etc/x"); err == nil {
			t.Errorf("%s: a journal ID with a path in it was accepted", tc.platform)
		}
	}
}

func TestLoadJournalChecksContent(t *testing.T) {
	for _, tc := range []struct{ name, json, want string }{
		{"other ID", `{"id": "20250101T000000.000000000Z", "state": "applied"}`, "calls itself"},
		{"unknown state", `{"id": "` + plantedID + `", "state": "pwned"}`, "unknown state"},
		{"unknown status", `{"id": "` + plantedID + `", "state": "applied", "entries": [{"status": "x"}]}`, "unknown status"},
	} {
		root := t.TempDir()
		env := &Env{Env: remedy.Env{T: target.Local(), Root: root, Platform: remedy.Linux}}
		must(t, os.MkdirAll(env.journalDir(), 0o700))
		must(t, os.WriteFile(env.journalPath(plantedID, ".json"), []byte(tc.json), 0o600))
		if _, err := LoadJournal(context.Background(), env, plantedID); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}
