package collect

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseBatchAndGrepFiles(t *testing.T) {
	out := batchMark + " out a\nhello\n\n" + batchMark + " err a 0\n\n" +
		batchMark + " out b\n\n" + batchMark + " err b 127\nsh: 1: wg: not found\n" +
		batchMark + " out c\nno newline\n" + batchMark + " err c 2\nboom\n"
	got := parseBatch(out)
	want := map[string]cmdResult{
		"a": {Out: "hello\n"},
		"b": {Code: 127, Stderr: "sh: 1: wg: not found"},
		"c": {Out: "no newline", Code: 2, Stderr: "boom"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	files := parseGrepFiles(strings.NewReader("/proc/sys/net/core/rmem_max:212992\n/proc/net/snmp:Ip: a\n/proc/net/snmp:Ip: 1\ngrep: /proc/sys/net/x: No such file or directory\ngrep: /etc/shadow: Permission denied\n"))
	wantFiles := map[string]*fileRead{
		"/proc/sys/net/core/rmem_max": {Content: "212992\n"},
		"/proc/net/snmp":              {Content: "Ip: a\nIp: 1\n"},
		"/proc/sys/net/x":             {Err: "No such file or directory"},
		"/etc/shadow":                 {Err: "Permission denied"},
	}
	if d := cmp.Diff(wantFiles, files); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}
