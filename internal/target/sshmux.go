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

// SSHConns is how an ssh target's commands connect to its host. The zero
// value shares one connection per host among them (OpenSSH ControlMaster)
// in the process's pool: an MTU bisection or a collection is then one key
// exchange instead of one per command, which matters against dropbear on a
// small router CPU. A command sets it when it opens its targets
// (HostSSH.Conns); nothing process-wide changes.
type SSHConns struct {
	// Own gives every command a connection of its own, closed when the
	// command ends: one ssh process where a shared connection is two, and
	// none outlives the run. For an ssh that cannot multiplex, and for a
	// host collected once, in one remote shell.
	Own bool
	// Pool holds the shared connections; nil is the process's pool (idle
	// connections stay up DefaultSSHPersist, no bound), which CloseAll ends.
	Pool *SSHPool
}

// DefaultSSHPersist is how long an idle connection of the process's pool
// stays up. It bounds how long a master outlives a wgperf that was killed
// with SIGKILL.
const DefaultSSHPersist = 30 * time.Second

// sshMaxSessions bounds the short commands (Run, RunInput, Stream) open at
// once over one shared connection. One: against dropbear (OpenWrt's ssh
// server), sessions opened in parallel over one OpenSSH master now and then
// fail with "Control master terminated unexpectedly" (3 of 100 in 4-way
// bursts; 0 of 80 one at a time, also beside a long-running session). The
// commands are short, so queueing costs little. Start (iperf3 -s, tcpdump)
// takes no slot: it runs beside them.
const sshMaxSessions = 1

// SSHPool is a set of shared ssh connections, one per user@host:port and
// settings. The control sockets live in a 0700 directory of their own, made
// on first use, so no other user can reach them. The owner ends them with
// Close.
type SSHPool struct {
	persist time.Duration // ControlPersist: how long an idle connection stays up
	max     int           // connections held at once (0: no bound)

	mu    sync.Mutex
	dir   string
	hosts map[string]*muxHost
	made  int // sockets named so far: a name is never reused
}

// NewSSHPool returns a pool whose idle connections stay up for persist
// (whole seconds, at least one: ssh's ControlPersist 0 would mean forever)
// and that holds at most held at once (0: no bound). Starting one more ends
// the least recently used first: an exporter that holds its routers'
// connections across scrapes holds at most held ssh processes, however many
// targets it is asked for.
func NewSSHPool(persist time.Duration, held int) *SSHPool {
	return &SSHPool{persist: max(persist, time.Second), max: held}
}

// processPool is the pool of ssh targets opened without one of their own.
var processPool = NewSSHPool(DefaultSSHPersist, 0)

// muxHost is the shared connection to one user@host:port.
type muxHost struct {
	pool  *SSHPool
	spec  sshSpec
	path  string        // control socket
	start sync.Mutex    // one master start at a time
	slots chan struct{} // session semaphore
	// argv0 is SSHCommand and SSHOptions as the master was started with, so
	// "-O exit" reaches the same socket through the same program.
	argv0 []string
	// used is when a command last asked for the connection (guarded by
	// pool.mu), to end the least recently used past the pool's bound.
	used time.Time
}

// host returns the shared connection for s, creating the socket directory
// on first use.
func (p *SSHPool) host(s sshSpec) (*muxHost, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dir == "" {
		sweepSocketDirs()
		dir, err := os.MkdirTemp(socketBase(), fmt.Sprintf("wgperf-ssh-%d-", os.Getpid()))
		if err != nil {
			return nil, err
		}
		p.dir = dir
		p.hosts = map[string]*muxHost{}
	}
	// Another key, jump host or sudo is another connection.
	o := s.Opts
	key := fmt.Sprintf("%s@%s:%d %q %q %v %q", s.User, s.Host, s.Port, o.IdentityFile, o.Options, o.Become, o.BecomeUser)
	h := p.hosts[key]
	if h == nil {
		// Short names: a unix socket path is limited to 108 bytes.
		h = &muxHost{pool: p, spec: s, path: filepath.Join(p.dir, "c"+strconv.Itoa(p.made)),
			slots: make(chan struct{}, sshMaxSessions)}
		p.made++
		p.hosts[key] = h
	}
	h.used = time.Now()
	return h, nil
}

// makeRoom ends the least recently used shared connections of hosts other
// than h until fewer than the pool's bound are up, and forgets the hosts
// whose connection is gone, so the set stays bounded too.
func (p *SSHPool) makeRoom(h *muxHost) {
	if p.max <= 0 {
		return
	}
	p.mu.Lock()
	var up []*muxHost
	for key, o := range p.hosts {
		switch {
		case o == h:
		case o.argv0 != nil && o.alive():
			up = append(up, o)
		case len(o.slots) == 0 && o.argv0 != nil:
			delete(p.hosts, key) // its connection ended by itself (ControlPersist)
		}
	}
	slices.SortFunc(up, func(a, b *muxHost) int { return a.used.Compare(b.used) })
	var end []*muxHost
	for len(up) >= p.max {
		end, up = append(end, up[0]), up[1:]
	}
	p.mu.Unlock()
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
	h.pool.makeRoom(h)
	// -f -N: authenticate, then go to the background with no command; ssh
	// points its standard streams at /dev/null when it forks.
	argv := append(append([]string{}, SSHCommand...), sshBaseOptions()...)
	argv = append(argv, "-o", "ControlMaster=yes", "-o", "ControlPath="+h.path,
		"-o", fmt.Sprintf("ControlPersist=%d", int(h.pool.persist.Seconds())), "-f", "-N")
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
	h.pool.mu.Lock()
	h.argv0 = append(append([]string{}, SSHCommand...), sshBaseOptions()...)
	h.pool.mu.Unlock()
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

// CloseAll ends every shared ssh connection of the process's pool (the
// targets opened without a pool of their own) and removes its socket
// directory. main defers it, so it runs on a normal exit and after
// SIGINT/SIGTERM cancelled the command.
func CloseAll() { processPool.Close() }

// Close ends every connection of the pool ("ssh -O exit") and removes its
// socket directory; a later command starts them anew.
func (p *SSHPool) Close() {
	p.mu.Lock()
	dir, hosts := p.dir, p.hosts
	p.dir, p.hosts = "", nil
	p.mu.Unlock()
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
	h.pool.mu.Lock()
	argv0 := h.argv0
	h.pool.mu.Unlock()
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
