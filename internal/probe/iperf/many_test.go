package iperf

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/testutil"
)

// procState is the state letter of /proc/PID/stat (T stopped, S sleeping)
// once it is want or, after a while (a signal takes effect when the process
// is next scheduled: on a busy machine, later), what it is then.
func procState(t *testing.T, pid int, want string) string {
	t.Helper()
	var st string
	for i := 0; i < 200 && st != want; i++ {
		if i > 0 {
			time.Sleep(10 * time.Millisecond)
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			t.Fatal(err)
		}
		_, rest, _ := strings.Cut(string(b), ") ")
		st = rest[:1]
	}
	return st
}

// RunMany's gate stops its servers by the id their shell printed on their
// host and lets them all go on in one command; a server whose id is unknown
// leaves all of them free.
func TestServerGate(t *testing.T) {
	ctx := context.Background()
	var servers []*Server
	for range 2 {
		proc, err := target.Local().Start(ctx, "sh", "-c", "echo $$ >&2; exec sleep 30")
		if err != nil {
			t.Fatal(err)
		}
		defer proc.Stop(time.Second)
		s := &Server{target: target.Local(), port: 5390 + len(servers), proc: proc, pidLine: true, listens: true}
		for i := 0; s.remotePid() == 0 && i < 100; i++ {
			time.Sleep(10 * time.Millisecond)
		}
		if s.remotePid() != proc.Pid() || s.stderr() != "" {
			t.Fatalf("pid %d from %q, the process is %d", s.remotePid(), proc.Stderr(), proc.Pid())
		}
		servers = append(servers, s)
	}
	g := holdServers(ctx, target.Local(), servers, 50)
	for _, s := range servers {
		if st := procState(t, s.remotePid(), "T"); st != "T" {
			t.Errorf("held server %d in state %s", s.remotePid(), st)
		}
	}
	// Both clients gave up (done) without connecting: the wait ends at
	// once, not held.
	start := time.Now()
	if held := g.wait(ctx, func(int) bool { return true }); held || time.Since(start) > 2*time.Second {
		t.Errorf("wait with every client done: held %v after %s", held, time.Since(start))
	}
	g.release()
	g.release() // once
	for _, s := range servers {
		if st := procState(t, s.remotePid(), "S"); st == "T" {
			t.Errorf("released server %d still stopped", s.remotePid())
		}
	}

	free := &Server{target: target.Local(), proc: servers[0].proc, listens: true}
	if g := holdServers(ctx, target.Local(), append(servers, free), 50); g.stopped || g.wait(ctx, func(int) bool { return false }) {
		t.Errorf("a server without its id was held")
	}
	if st := procState(t, servers[0].remotePid(), "S"); st == "T" {
		t.Error("a gate that holds nothing stopped a server")
	}
}

// A held server's host lets it go on by itself after the hold, so a wgperf
// killed mid-hold leaves no iperf3 stopped for good on its port.
func TestHeldServersGoOnWithoutWgperf(t *testing.T) {
	proc, err := target.Local().Start(context.Background(), "sh", "-c", "exec sleep 30")
	if err != nil {
		t.Fatal(err)
	}
	defer proc.Stop(time.Second)
	pid := strconv.Itoa(proc.Pid())
	if _, err := target.Local().Run(context.Background(), "sh", "-c", stopScript([]string{pid}, time.Second)); err != nil {
		t.Fatal(err)
	}
	if st := procState(t, proc.Pid(), "T"); st != "T" {
		t.Fatalf("held process in state %s", st)
	}
	time.Sleep(time.Second)
	if st := procState(t, proc.Pid(), "S"); st == "T" {
		t.Error("still stopped after its host's own release")
	}
}

// The established connections of a recorded load on B by local port:
// each client's on its server's port.
func TestOpenPerPort(t *testing.T) {
	open := openPerPort(map[string][]byte{
		"/proc/net/tcp":  testutil.ReadTestdata(t, "collect", "proc", "tcp", "tcp-load-5390-5392"),
		"/proc/net/tcp6": testutil.ReadTestdata(t, "collect", "proc", "tcp", "tcp6-listening-5299"),
	})
	if open[5390] != 1 || open[5391] != 1 || open[5392] != 1 || open[5299] != 0 || open[22] != 1 {
		t.Errorf("open by port %v", open)
	}
}
