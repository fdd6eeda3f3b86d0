package collect

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/facts"
)

func FuzzParseGrepFiles(f *testing.F) {
	f.Add([]byte("/proc/sys/net/core/rmem_max:212992\ngrep: /proc/sys/net/x: No such file or directory\n/sys/class/net/wg0/mtu:1420\n"))
	f.Add([]byte("/a:1\n/a:2\n/b:\ngrep: /a: Permission denied\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for p, r := range parseGrepFiles(bytes.NewReader(b)) {
			if !strings.HasPrefix(p, "/") {
				t.Fatalf("path %q is not absolute", p)
			}
			if r.Content != "" && !strings.HasSuffix(r.Content, "\n") {
				t.Fatalf("%s: content %q does not end in a newline", p, r.Content)
			}
		}
	})
}

func FuzzSplitDevSections(f *testing.F) {
	f.Add("@@dev eth0\nrx-checksumming: on\n@@dev wg0\ntx: off [fixed]\n")
	f.Fuzz(func(t *testing.T, s string) {
		for dev := range splitDevSections(s) {
			if dev == "" {
				t.Fatal("empty device name")
			}
		}
	})
}

// FuzzReadSnapshot reads any JSON as a snapshot and runs every check on what
// it accepts: a snapshot from someone else must not crash diagnose.
func FuzzReadSnapshot(f *testing.F) {
	addCorpus(f, "../snapshots/*.json")
	f.Add([]byte(`{"schema_version": 1, "host": "local", "links": [{"name": "wg0", "mtu": -1}]}`))
	f.Add([]byte(`{"schema_version": 1, "host": "ssh:-oProxyCommand=x"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := document.ReadSnapshot(bytes.NewReader(b))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		if s.Host == "" {
			t.Fatal("snapshot without host accepted")
		}
		res := check.Run([]*facts.Snapshot{s}, check.Options{})
		for _, x := range res.Findings {
			if !utf8.ValidString(string(x.ID)) {
				t.Fatalf("finding ID %q", x.ID)
			}
		}
	})
}
