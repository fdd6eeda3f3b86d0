package target

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestSharedConnectionsBounded: past a pool's bound, starting one more shared
// connection ends the least recently used ones ("ssh -O exit", here a
// stand-in that removes the control socket as the master would on exit) and
// forgets hosts whose connection ended by itself, so an exporter holding its
// targets' connections holds at most its bound however many it is asked for.
// The process's pool, unbounded, is left alone.
func TestSharedConnectionsBounded(t *testing.T) {
	pool := NewSSHPool(time.Minute, 2)
	t.Cleanup(pool.Close)
	// The stand-in for ssh -O exit: remove the ControlPath named in its arguments.
	exit := []string{"sh", "-c", `for a; do case $a in ControlPath=*) rm -f "${a#ControlPath=}";; esac; done`, "ssh"}
	up := func(h *muxHost) {
		t.Helper()
		l, err := net.Listen("unix", h.path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		pool.mu.Lock()
		h.argv0 = exit
		pool.mu.Unlock()
	}
	var hosts []*muxHost
	for i, name := range []string{"r1", "r2", "r3", "gone"} {
		h, err := pool.host(sshSpec{User: "root", Host: name})
		if err != nil {
			t.Fatal(err)
		}
		up(h)
		pool.mu.Lock()
		h.used = time.Now().Add(time.Duration(i) * time.Second)
		pool.mu.Unlock()
		hosts = append(hosts, h)
	}
	// "gone" ended by itself (ControlPersist): its socket is gone.
	if err := os.Remove(hosts[3].path); err != nil {
		t.Fatal(err)
	}
	next, err := pool.host(sshSpec{User: "root", Host: "r4"})
	if err != nil {
		t.Fatal(err)
	}
	pool.makeRoom(next)
	for i, want := range []bool{false, false, true, false} {
		if got := hosts[i].alive(); got != want {
			t.Errorf("%s: connection up %v, want %v", hosts[i].spec.Host, got, want)
		}
	}
	var remembered []string
	pool.mu.Lock()
	for _, h := range pool.hosts {
		remembered = append(remembered, h.spec.Host)
	}
	pool.mu.Unlock()
	slices.Sort(remembered)
	if !slices.Equal(remembered, []string{"r1", "r2", "r3", "r4"}) {
		t.Errorf("hosts remembered: %v, want r1 to r4 (gone forgotten)", remembered)
	}
	if dir := filepath.Dir(next.path); dir != pool.dir {
		t.Errorf("socket %s outside %s", next.path, pool.dir)
	}
	processPool.mu.Lock()
	defer processPool.mu.Unlock()
	if len(processPool.hosts) != 0 {
		t.Errorf("the process's pool holds %d hosts, want none", len(processPool.hosts))
	}
}
