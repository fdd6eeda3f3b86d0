package target

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestSharedConnectionsBounded: past SSHMaxShared, starting one more shared
// connection ends the least recently used ones ("ssh -O exit", here a
// stand-in that removes the control socket as the master would on exit) and
// forgets hosts whose connection ended by itself, so an exporter holding its
// targets' connections holds at most SSHMaxShared however many it is asked for.
func TestSharedConnectionsBounded(t *testing.T) {
	oldMax := SSHMaxShared
	SSHMaxShared = 2
	t.Cleanup(func() { SSHMaxShared = oldMax; CloseAll() })
	// The stand-in for ssh -O exit: remove the ControlPath named in its arguments.
	exit := []string{"sh", "-c", `for a; do case $a in ControlPath=*) rm -f "${a#ControlPath=}";; esac; done`, "ssh"}
	up := func(h *muxHost) {
		t.Helper()
		l, err := net.Listen("unix", h.path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		muxState.mu.Lock()
		h.argv0 = exit
		muxState.mu.Unlock()
	}
	var hosts []*muxHost
	for i, name := range []string{"r1", "r2", "r3", "gone"} {
		h, err := muxFor(sshSpec{User: "root", Host: name})
		if err != nil {
			t.Fatal(err)
		}
		up(h)
		muxState.mu.Lock()
		h.used = time.Now().Add(time.Duration(i) * time.Second)
		muxState.mu.Unlock()
		hosts = append(hosts, h)
	}
	// "gone" ended by itself (ControlPersist): its socket is gone.
	if err := os.Remove(hosts[3].path); err != nil {
		t.Fatal(err)
	}
	next, err := muxFor(sshSpec{User: "root", Host: "r4"})
	if err != nil {
		t.Fatal(err)
	}
	makeRoom(next)
	for i, want := range []bool{false, false, true, false} {
		if got := hosts[i].alive(); got != want {
			t.Errorf("%s: connection up %v, want %v", hosts[i].spec.Host, got, want)
		}
	}
	var remembered []string
	muxState.mu.Lock()
	for _, h := range muxState.hosts {
		remembered = append(remembered, h.spec.Host)
	}
	muxState.mu.Unlock()
	slices.Sort(remembered)
	if !slices.Equal(remembered, []string{"r1", "r2", "r3", "r4"}) {
		t.Errorf("hosts remembered: %v, want r1 to r4 (gone forgotten)", remembered)
	}
	if dir := filepath.Dir(next.path); dir != muxState.dir {
		t.Errorf("socket %s outside %s", next.path, muxState.dir)
	}
}
