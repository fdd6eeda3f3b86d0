package iperf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/clock"
	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/openwrt"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// DefaultPort is the port wgperf's iperf3 servers listen on. It is not iperf3's
// 5201, so a server the user runs there is left alone.
const DefaultPort = 5299

// Test describes one iperf3 run.
type Test struct {
	Addr     string  // server address the client connects to
	Port     int     // 0: DefaultPort
	Seconds  int     // --time
	Omit     int     // --omit
	Reverse  bool    // the server sends (download)
	Parallel int     // --parallel; 0 or 1 is a single stream
	UDPMbit  float64 // > 0: a UDP test at this rate
	MSS      int     // --set-mss; 0 leaves it to the kernel
	// Congestion picks the sender's congestion control (-C); "" keeps the default.
	Congestion string
	// BindDev makes the client's socket leave through this device
	// (--bind-dev, SO_BINDTODEVICE): one uplink of several.
	BindDev string
	// CPort binds the client's data socket to this local port (--cport): a
	// run whose datagrams carry a given port number, as WireGuard's do.
	// With Parallel each stream takes the next port (iperf3 3.x).
	CPort int
	// Terse leaves out the server's own JSON (--get-server-output), the
	// only large message on the control connection, which -M does not
	// clamp: on a path that loses the tunnel's full-size packets it would
	// stall an MSS step that itself got through. Reverse tests need it.
	Terse bool
	// Timeout bounds the client run; 0 allows Omit+Seconds+20 s. A run that
	// outlives it fails with ErrStalled.
	Timeout time.Duration
	// Clock waits for the server to start and the client to connect; the zero
	// value is real time.
	Clock clock.Clock
	// Checked says the caller has run Check on both ends (a bench does, once
	// for all its runs): Run does not ask each again, two commands a run,
	// round trips over ssh.
	Checked bool
}

// ErrStalled is wrapped by the error of a run that did not finish in time, as
// TCP does over a PMTUD black hole.
var ErrStalled = errors.New("iperf3 stalled")

// ErrUnreachable matches (errors.Is) the error of a client that could not
// reach its server (refused, timed out, no route): a firewall or a NAT that
// forwards only WireGuard's port, not a measurement. The error is an
// *UnreachableError.
var ErrUnreachable = errors.New("iperf3 server unreachable")

// UnreachableError says where the client could not connect and why.
type UnreachableError struct {
	Where string // addr:port
	Why   string // iperf3's last words, e.g. "Connection refused"
	msg   string
}

func (e *UnreachableError) Error() string { return e.msg }

// Is makes errors.Is(err, ErrUnreachable) hold.
func (e *UnreachableError) Is(target error) bool { return target == ErrUnreachable }

// Run starts a one-off iperf3 server on server, runs the client on client and
// returns the parsed result. The server is always stopped before Run returns.
func Run(ctx context.Context, client, server target.Target, t Test) (*Result, error) {
	if t.Port == 0 {
		t.Port = DefaultPort
	}
	if t.Seconds <= 0 {
		t.Seconds = 10
	}
	for try := 1; ; try++ {
		srv, err := startServer(ctx, server, t.Port, t.Omit+t.Seconds+30, t.Clock, !t.Checked && try == 1, false)
		if err != nil {
			return nil, err
		}
		res, err := runClient(ctx, client, server, srv, t)
		srv.Stop()
		if t.UDPMbit == 0 || !errors.Is(err, ErrStalled) || try == udpStartTries || ctx.Err() != nil {
			return res, err
		}
	}
}

// udpStartTries is how often Run starts a UDP test that stalls. iperf3 opens
// a UDP test with one datagram each way, sent once (esnet/iperf#351): where
// one is lost the client waits for ever, and the paths a UDP test is for are
// the lossy ones: at 2% loss each way about one start in 25 hangs (a CI
// run's lossy-WAN case lost 22 s to one). A second start, with a fresh
// server, most likely goes through.
const udpStartTries = 2

// udpStallSlack is how long a UDP test may run past its seconds before it
// counts as stalled: it sends at a fixed rate and ends on time, so only its
// start (the control connection, up to ConnectTimeout through a tunnel that
// shakes hands first) and its closing exchange can hold it up.
const udpStallSlack = ConnectTimeout + 4*time.Second

// serverStartWait is how long a client keeps dialing a server that refuses
// while its process runs (it is not listening yet).
const serverStartWait = 10 * time.Second

// Server is an iperf3 -s -1 started by wgperf.
type Server struct {
	target target.Target
	port   int
	proc   *target.Process
	// pidLine: the first line of its stderr is its process id on target;
	// listens: target shows its sockets (/proc/net/tcp), so the server was
	// seen listening.
	pidLine, listens bool
}

// stderr is what the server wrote to its standard error, its id's line
// left out.
func (s *Server) stderr() string {
	out := s.proc.Stderr()
	if s.pidLine {
		_, out, _ = strings.Cut(out, "\n")
	}
	return out
}

// remotePid is the server's process id on its target, 0 unknown.
func (s *Server) remotePid() int {
	if !s.pidLine {
		return 0
	}
	line, _, ok := strings.Cut(s.proc.Stderr(), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if !ok || err != nil || pid <= 1 {
		return 0
	}
	return pid
}

// StartServer launches "iperf3 -s -1 -J" on t. It exits by itself after one
// test, or after idleSecs without a client (so a server left on a remote host
// by a lost ssh connection does not linger).
func StartServer(ctx context.Context, t target.Target, port, idleSecs int) (*Server, error) {
	return startServer(ctx, t, port, idleSecs, clock.Clock{}, true, false)
}

// startServer starts a server on t; withPid has its shell print the
// process's id on t first (a line of its stderr), to hold it (RunMany).
func startServer(ctx context.Context, t target.Target, port, idleSecs int, clk clock.Clock, check, withPid bool) (*Server, error) {
	if check {
		if err := Check(ctx, t); err != nil {
			return nil, err
		}
	}
	// A port someone else listens on would send our client to their server.
	taken, known := listening(ctx, t, port)
	if taken {
		return nil, inUse(t, port)
	}
	// -J sends even startup errors to stdout; fold it into stderr, which Start keeps.
	cmd := shell.Join("iperf3", "-s", "-1", "-J", "-p", strconv.Itoa(port), "--idle-timeout", strconv.Itoa(idleSecs))
	script := "exec " + cmd + " 1>&2"
	if withPid {
		script = "echo $$ >&2; " + script
	}
	proc, err := t.Start(ctx, "sh", "-c", script)
	if err != nil {
		return nil, err
	}
	s := &Server{target: t, port: port, proc: proc, pidLine: withPid}
	ready := proc.Exited
	if known {
		// The host shows its sockets: wait until ours listens (a few
		// milliseconds) rather than a fixed pause in every run.
		ready = func() bool {
			up, _ := listening(ctx, t, port)
			return up || proc.Exited()
		}
	}
	// A server that cannot listen exits at once; give it a moment to do so.
	if clk.WaitUntil(serverExitWait, 10*time.Millisecond, ready) && proc.Exited() {
		return nil, s.startError()
	}
	s.listens = known
	return s, nil
}

// serverExitWait is how long a server that cannot listen is given to exit,
// where the host does not show its listening sockets.
const serverExitWait = 400 * time.Millisecond

// listening reports whether a TCP socket on t listens on port, from
// /proc/net/tcp6 and /proc/net/tcp; known is false when t shows neither.
func listening(ctx context.Context, t target.Target, port int) (up, known bool) {
	// Both tables in one read: the wait polls this.
	for _, b := range collect.ReadFiles(ctx, t, "/proc/net/tcp6", "/proc/net/tcp") {
		known = true // a table missing is no IPv6 on this host, or no /proc
		if ListensOn(string(b), port) {
			return true, true
		}
	}
	return false, known
}

// ListensOn reports whether a /proc/net/tcp or tcp6 table has a socket in
// the LISTEN state on port; text that is no such table has none.
func ListensOn(table string, port int) bool {
	socks, _ := parse.ParseProcNetTCP(strings.NewReader(table), parse.TCPListen)
	return slices.ContainsFunc(socks, func(s parse.TCPSocket) bool { return s.LocalPort == port })
}

func inUse(t target.Target, port int) error {
	return fmt.Errorf("%s: iperf3 cannot listen on port %d: it is in use (pick another with --port)", t, port)
}

func (s *Server) startError() error {
	out := s.stderr()
	msg := strings.TrimSpace(out)
	if i := strings.Index(out, "{"); i >= 0 {
		if _, err := Parse(strings.NewReader(out[i:])); err != nil {
			var ie *Error
			if errors.As(err, &ie) {
				msg = ie.Message
			}
		}
	}
	if strings.Contains(msg, "Address already in use") {
		return inUse(s.target, s.port)
	}
	if msg == "" {
		msg = "exited at once"
		// Say how: an ssh session that could not open ends with status 255.
		var te *target.Error
		if err := s.proc.Wait(); errors.As(err, &te) && te.ExitCode != 0 {
			msg += fmt.Sprintf(" (exit status %d)", te.ExitCode)
		}
	}
	return fmt.Errorf("%s: iperf3 server on port %d: %s", s.target, s.port, lastLine(msg))
}

// Stop ends the server if it is still running.
func (s *Server) Stop() { _ = s.proc.Stop(2 * time.Second) }

// Check reports a clear error when iperf3 is not installed on t.
func Check(ctx context.Context, t target.Target) error {
	_, err := t.Run(ctx, "iperf3", "--version")
	if err == nil {
		return nil
	}
	if target.IsNotFound(err) {
		return fmt.Errorf("iperf3 is not installed on %s: install it there (apt-get install iperf3, dnf install iperf3 or on OpenWrt %s)", t, openwrt.Install("iperf3"))
	}
	return err
}

// ConnectTimeout bounds the client's connection to its server. Above
// WireGuard's REKEY_TIMEOUT (5 s) with a SYN retry to spare: a tunnel whose
// handshake packet was lost holds its packets until the next attempt, and a
// shorter bound calls that healthy tunnel unreachable (seen on a lab path
// whose shaper changed rate under the handshake: 3 s was too short).
const ConnectTimeout = 8 * time.Second

// ClientArgs is the iperf3 client command line for t.
func ClientArgs(t Test) []string {
	port := t.Port
	if port == 0 {
		port = DefaultPort
	}
	args := []string{"-c", t.Addr, "-p", strconv.Itoa(port), "-J"}
	if !t.Terse || t.Reverse {
		args = append(args, "--get-server-output")
	}
	args = append(args, "-t", strconv.Itoa(t.Seconds), "--connect-timeout", strconv.Itoa(int(ConnectTimeout.Milliseconds())))
	if t.Omit > 0 {
		args = append(args, "-O", strconv.Itoa(t.Omit))
	}
	if t.Reverse {
		args = append(args, "-R")
	}
	if t.Parallel > 1 {
		args = append(args, "-P", strconv.Itoa(t.Parallel))
	}
	if t.UDPMbit > 0 {
		args = append(args, "-u", "-b", strconv.FormatFloat(t.UDPMbit, 'f', -1, 64)+"M")
	}
	if t.MSS > 0 {
		args = append(args, "-M", strconv.Itoa(t.MSS))
	}
	if t.Congestion != "" {
		args = append(args, "-C", t.Congestion)
	}
	if t.BindDev != "" {
		args = append(args, "--bind-dev", t.BindDev)
	}
	if t.CPort > 0 {
		args = append(args, "--cport", strconv.Itoa(t.CPort))
	}
	return args
}

func runClient(ctx context.Context, client, server target.Target, srv *Server, t Test) (*Result, error) {
	if !t.Checked {
		if err := Check(ctx, client); err != nil {
			return nil, err
		}
	}
	// A black hole can stall a TCP test past its end; bound it.
	timeout := t.Timeout
	switch {
	case timeout == 0 && t.UDPMbit > 0:
		timeout = time.Duration(t.Omit+t.Seconds)*time.Second + udpStallSlack
	case timeout == 0:
		timeout = time.Duration(t.Omit+t.Seconds+20) * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// Over ssh the server may still be starting when the client first dials:
	// a refused connection while the server runs is retried for a while.
	var (
		out      []byte
		runErr   error
		res      *Result
		err      error
		ie       *Error
		deadline = t.Clock.Now().Add(serverStartWait)
	)
	for {
		out, runErr = client.Run(ctx, "iperf3", ClientArgs(t)...)
		if res, err = Parse(bytes.NewReader(out)); err == nil {
			res.Raw = out
			return res, nil
		}
		refused := errors.As(err, &ie) && strings.Contains(ie.Message, "Connection refused")
		if !refused || srv.proc.Exited() || t.Clock.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		t.Clock.Sleep(200 * time.Millisecond)
	}
	switch {
	case errors.As(err, &ie):
		return nil, explain(client, server, srv, t, ie.Message)
	case ctx.Err() != nil && t.UDPMbit > 0:
		return nil, fmt.Errorf("%s: %w: the UDP test to %s did not finish within %s (iperf3 opens a UDP test with one datagram each way and never resends them: a path that loses or drops UDP to port %d loses them)",
			client, ErrStalled, t.Addr, timeout, srvPort(srv, t))
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%s: %w: the test to %s did not finish within %s (a PMTUD black hole? try wgperf mtu)",
			client, ErrStalled, t.Addr, timeout)
	case runErr != nil:
		return nil, runErr
	}
	return nil, fmt.Errorf("%s: %w", client, err)
}

// explain turns iperf3's error into a line that says what to do.
func explain(client, server target.Target, srv *Server, t Test, msg string) error {
	where := net.JoinHostPort(t.Addr, strconv.Itoa(srvPort(srv, t)))
	switch {
	case strings.Contains(msg, "Connection timed out"), strings.Contains(msg, "No route to host"),
		strings.Contains(msg, "Network is unreachable"), strings.Contains(msg, "Connection refused"):
		return &UnreachableError{Where: where, Why: lastLine(msg), msg: fmt.Sprintf("%s cannot reach the iperf3 server on %s at %s (%s): check the tunnel and firewall with wgperf diagnose",
			client, server, where, lastLine(msg))}
	}
	return fmt.Errorf("%s: iperf3 to %s: %s", client, where, lastLine(msg))
}

func srvPort(srv *Server, t Test) int {
	if srv != nil {
		return srv.port
	}
	return t.Port
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[i+1:])
	}
	return s
}
