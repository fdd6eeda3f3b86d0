package targettest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/target"
)

// RecordSSH puts a stand-in for ssh in place for the test (target.SSHCommand)
// that writes down each command line it is given, and returns a function
// that hands over the lines written since it was last called.
func RecordSSH(t testing.TB) func() []string {
	t.Helper()
	log := filepath.Join(t.TempDir(), "argv")
	old := target.SSHCommand
	target.SSHCommand = []string{"sh", "-c", `printf '%s\n' "$*" >> "$0"`, log}
	t.Cleanup(func() { target.SSHCommand = old })
	return func() []string {
		t.Helper()
		b, err := os.ReadFile(log)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if err := os.Remove(log); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimSpace(string(b)), "\n")
	}
}
