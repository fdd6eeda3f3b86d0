package target

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestTreeEndsWhatItsProgramLeft: a program that returns while a child of
// its keeps running (and holds its output, as QEMU holds vng's) leaves
// nothing behind, and a cancelled context ends the whole tree at once.
func TestTreeEndsWhatItsProgramLeft(t *testing.T) {
	var out bytes.Buffer
	start := time.Now()
	if err := (Tree{}).Run(context.Background(), &out, nil, "sh", "-c", "sleep 3600 & echo $!"); err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out.String()))
	if err != nil {
		t.Fatalf("child pid %q", out.String())
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Run took %s: the child's hold on the output kept it", took)
	}
	for deadline := time.Now().Add(5 * time.Second); runs(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("the program's child %d still runs", pid)
			break
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var pgid int
	err = Tree{Started: func(id int) { pgid = id }}.Run(ctx, nil, nil, "sh", "-c", "sleep 3600 & exec sleep 3600")
	if err == nil {
		t.Error("a tree stopped by its context returned no error")
	}
	if pgid == 0 {
		t.Fatal("Started was not called")
	}
	for deadline := time.Now().Add(5 * time.Second); GroupAlive(pgid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("group %d still alive 5 s after its context ended", pgid)
			break
		}
	}
}

// runs reports whether pid runs and is not a zombie.
func runs(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// A process's state follows its command name, which may itself hold blanks
// and parentheses: the last ')' ends it.
func TestStatFields(t *testing.T) {
	for _, tc := range []struct {
		stat  string
		first string
		live  bool
	}{
		{"6366 (wgperf) S 1 6366 6366 0 -1 4194560", "S", true},
		{"6366 (a) b) Z 1 6366 6366 0 -1 4194560", "Z", false},
		{"6366 (wg (node) x) R 1 6366 6366 0 -1 4194", "R", true},
		{"6366 (a) S b) X 1 6366 6366", "X", false},
		{"6366 (wgperf", "", false},
		{"6366 (wgperf)", "", false},
	} {
		fields, live := statFields(tc.stat)
		first := ""
		if len(fields) > 0 {
			first = fields[0]
		}
		if first != tc.first || live != tc.live {
			t.Errorf("statFields(%q) = %q…, %v; want %q…, %v", tc.stat, first, live, tc.first, tc.live)
		}
	}
}

func TestProcessLive(t *testing.T) {
	if !ProcessLive(os.Getpid()) {
		t.Error("this test's own process is not live")
	}
	if ProcessLive(1 << 30) { // above pid_max's largest value (4194304)
		t.Error("a pid no process can have is live")
	}
}
