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
