package collect

import (
	"bytes"
	"strings"
	"testing"
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
