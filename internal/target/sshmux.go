package target

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// SSHMultiplex shares one ssh connection per host among all the commands of a
// wgperf run (OpenSSH ControlMaster): an MTU bisection or a collection is then
// one key exchange instead of one per command, which matters against dropbear
// on a small router CPU. Set it to false for an ssh that cannot multiplex.
var SSHMultiplex = true

// SSHControlPersist is how long an idle shared connection stays up. It bounds
// how long a master outlives a wgperf that was killed with SIGKILL.
var SSHControlPersist = 30 * time.Second

// SSHMaxShared bounds the shared connections held at once (0: no bound).
// Starting one more ends the least recently used first: an exporter that
// holds its routers' connections across scrapes holds at most this many
// ssh processes, however many targets it is asked for.
var SSHMaxShared = 0

// sshMaxSessions bounds the short commands (Run, RunInput, Stream) open at
// once over one shared connection. One: against dropbear (OpenWrt's ssh
// server), sessions opened in parallel over one OpenSSH master now and then
// fail with "Control master terminated unexpectedly" (3 of 100 in 4-way
// bursts; 0 of 80 one at a time, also beside a long-running session). The
// commands are short, so queueing costs little. Start (iperf3 -s, tcpdump)
// takes no slot: it runs beside them.
const sshMaxSessions = 1

// muxState is the per-process set of shared connections. The control sockets
// live in a 0700 directory of their own, so no other user can reach them.
var muxState struct {
	mu    sync.Mutex
	dir   string
	hosts map[string]*muxHost
	made  int // sockets named so far: a name is never reused
}

// muxHost is the shared connection to one user@host:port.
type muxHost struct {
	spec  sshSpec
	path  string        // control socket
	start sync.Mutex    // one master start at a time
	slots chan struct{} // session semaphore
	// argv0 is SSHCommand and SSHOptions as the master was started with, so
	// "-O exit" reaches the same socket through the same program.
	argv0 []string
	// used is when a command last asked for the connection (guarded by
	// muxState.mu), to end the least recently used past SSHMaxShared.
	used time.Time
}

// muxFor returns the shared connection for s, creating the socket directory
// on first use.
func muxFor(s sshSpec) (*muxHost, error) {
	muxState.mu.Lock()
	defer muxState.mu.Unlock()
	if muxState.dir == "" {
		sweepSocketDirs()
		dir, err := os.MkdirTemp(socketBase(), fmt.Sprintf("wgperf-ssh-%d-", os.Getpid()))
		if err != nil {
			return nil, err
		}
		muxState.dir = dir
		muxState.hosts = map[string]*muxHost{}
	}
	// Another key, jump host or sudo is another connection.
	key := fmt.Sprintf("%s@%s:%d %v", s.User, s.Host, s.Port, s.Opts)
	h := muxState.hosts[key]
	if h == nil {
		// Short names: a unix socket path is limited to 108 bytes.
		h = &muxHost{spec: s, path: filepath.Join(muxState.dir, "c"+strconv.Itoa(muxState.made)),
			slots: make(chan struct{}, sshMaxSessions)}
		muxState.made++
		muxState.hosts[key] = h
	}
	h.used = time.Now()
	return h, nil
}

// makeRoom ends the least recently used shared connections of hosts other
// than h until fewer than SSHMaxShared are up, and forgets the hosts whose
// connection is gone, so the set stays bounded too.
func makeRoom(h *muxHost) {
	if SSHMaxShared <= 0 {
		return
	}
	muxState.mu.Lock()
	var up []*muxHost
	for key, o := range muxState.hosts {
		switch {
		case o == h:
		case o.argv0 != nil && o.alive():
			up = append(up, o)
		case len(o.slots) == 0 && o.argv0 != nil:
			delete(muxState.hosts, key) // its connection ended by itself (ControlPersist)
		}
	}
	slices.SortFunc(up, func(a, b *muxHost) int { return a.used.Compare(b.used) })
	var end []*muxHost
	for len(up) >= SSHMaxShared {
		end, up = append(end, up[0]), up[1:]
	}
	muxState.mu.Unlock()
	for _, o := range end {
		o.exit()
	}
}

// sweepSocketDirs removes the socket directories of wgperf processes that
// died without cleaning up (SIGKILL): their masters have exited by themselves
// after ControlPersist, leaving an empty directory.
func sweepSocketDirs() {
	dirs, _ := filepath.Glob(filepath.Join(socketBase(), "wgperf-ssh-*-*"))
	for _, d := range dirs {
		pidText := strings.TrimPrefix(filepath.Base(d), "wgperf-ssh-")
		pid, err := strconv.Atoi(pidText[:strings.IndexByte(pidText, '-')])
		if err != nil || pid == os.Getpid() || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue // not ours to judge, or its process still runs
		}
		if fi, err := os.Stat(d); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == os.Getuid() {
				_ = os.RemoveAll(d)
			}
		}
	}
}

// socketBase is where the socket directory goes: $TMPDIR unless that would
// make the socket path too long.
func socketBase() string {
	if d := os.TempDir(); len(d) < 60 {
		return d
	}
	return "/tmp"
}

// options are the ssh options that make a command use the shared connection.
// They come before the user's config on the command line, so they win over a
// ControlPath or ControlMaster set there.
func (h *muxHost) options() []string {
	return []string{"-o", "ControlMaster=no", "-o", "ControlPath=" + h.path}
}

// ensure starts the shared connection unless its socket is up. It returns
// ssh's standard error when the host cannot be reached; the caller reports
// that as the command's failure, as a direct connection would have.
func (h *muxHost) ensure(ctx context.Context) (string, error) {
	h.start.Lock()
	defer h.start.Unlock()
	if h.alive() {
		return "", nil
	}
	makeRoom(h)
	// -f -N: authenticate, then go to the background with no command; ssh
	// points its standard streams at /dev/null when it forks.
	argv := append(append([]string{}, SSHCommand...), sshBaseOptions()...)
	argv = append(argv, "-o", "ControlMaster=yes", "-o", "ControlPath="+h.path,
		"-o", fmt.Sprintf("ControlPersist=%d", int(SSHControlPersist.Seconds())), "-f", "-N")
	argv = append(argv, h.spec.destination()...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	stderr := &Tail{max: 8 << 10} // a server's pre-login banner has no size limit
	cmd.Stderr = stderr
	// Should a master keep the pipe open anyway, do not wait for it.
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	if errors.Is(err, exec.ErrWaitDelay) {
		err = nil
	}
	if err != nil {
		return stderr.String(), err
	}
	muxState.mu.Lock()
	h.argv0 = append(append([]string{}, SSHCommand...), sshBaseOptions()...)
	muxState.mu.Unlock()
	return "", nil
}

// alive reports whether the master listens on the socket.
func (h *muxHost) alive() bool {
	fi, err := os.Stat(h.path)
	return err == nil && fi.Mode()&os.ModeSocket != 0
}

// acquire takes one of the connection's session slots.
func (h *muxHost) acquire(ctx context.Context) error {
	select {
	case h.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (h *muxHost) release() { <-h.slots }

// CloseAll ends every shared ssh connection this process opened ("ssh -O
// exit") and removes the socket directory. main defers it, so it runs on a
// normal exit and after SIGINT/SIGTERM cancelled the command.
func CloseAll() {
	muxState.mu.Lock()
	dir, hosts := muxState.dir, muxState.hosts
	muxState.dir, muxState.hosts = "", nil
	muxState.mu.Unlock()
	if dir == "" {
		return
	}
	var wg sync.WaitGroup
	for _, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.exit()
		}()
	}
	wg.Wait()
	_ = os.RemoveAll(dir)
}

// exit ends h's shared connection, if it is up ("ssh -O exit").
func (h *muxHost) exit() {
	muxState.mu.Lock()
	argv0 := h.argv0
	muxState.mu.Unlock()
	if argv0 == nil || !h.alive() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	argv := append(append([]string{}, argv0...), "-o", "ControlPath="+h.path, "-O", "exit")
	argv = append(argv, h.spec.destination()...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.WaitDelay = time.Second
	_ = cmd.Run()
}
