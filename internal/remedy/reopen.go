package remedy

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// A socket takes its buffer sizes when it is created (rmem_default) or when
// its program asks for them (SO_RCVBUF, capped at rmem_max then): raising
// net.core.{r,w}mem_* changes nothing for a tunnel whose socket is already
// open. Kernel WireGuard needs nothing (it receives through the UDP stack's
// encapsulation hook, with no socket queue to overflow), but a userspace
// implementation (wireguard-go, boringtun, the NAS daemons built on them)
// keeps its small buffers until it re-opens its socket. Every one of them
// that speaks WireGuard's UAPI re-binds when its listen port is set, even to
// the port it has: the peers, keys and sessions stay, and only the packets in
// flight while the socket is swapped are lost. That is the same for a daemon
// wg-quick, systemd or OpenWrt's netifd started, and much less than a
// restart of the interface (which drops its routes and addresses).

// socketSysctls are the limits a socket reads only when it is created.
var socketSysctls = map[string]bool{
	"net.core.rmem_max": true, "net.core.rmem_default": true,
	"net.core.wmem_max": true, "net.core.wmem_default": true,
}

// wgSocket is a userspace WireGuard interface, the UDP port it listens on
// and the smallest receive and send buffers its sockets hold now (bytes as
// the kernel accounts them, twice what a program asks for; 0: unknown).
type wgSocket struct {
	iface    string
	port     int
	rcv, snd int64
}

// reopenCommand re-binds the interface's socket on the port it already has.
func (s wgSocket) reopenCommand() string {
	return shell.Join("wg", "set", s.iface, "listen-port", strconv.Itoa(s.port))
}

// listWGSockets is run on the host: every UAPI socket of a userspace
// WireGuard implementation whose interface is in this network namespace (the
// socket folder is shared by every namespace of a machine), its port, and
// the smallest receive and send buffer of its sockets as ss shows them ("-"
// without ss).
const listWGSockets = `command -v wg >/dev/null 2>&1 || exit 0
for s in /var/run/wireguard/*.sock; do
	[ -S "$s" ] || continue
	n=${s##*/}; n=${n%.sock}
	[ -d "/sys/class/net/$n" ] || continue
	p=$(wg show "$n" listen-port 2>/dev/null) || continue
	b=$(ss -uamnH "sport = :$p" 2>/dev/null | sed -n 's/.*skmem:(r[0-9]*,rb\([0-9]*\),t[0-9]*,tb\([0-9]*\).*/\1 \2/p' | sort -n | head -n 1)
	echo "$n $p ${b:--}"
done`

// userspaceWGSockets lists the host's userspace WireGuard interfaces and
// their ports. What the host prints is validated: a name that is not an
// interface name or a port that is not a port is left out.
func userspaceWGSockets(ctx context.Context, env *Env) ([]wgSocket, error) {
	out, err := env.Sh(ctx, listWGSockets)
	if err != nil {
		return nil, err
	}
	return parseWGSockets(string(out)), nil
}

// parseWGSockets reads "NAME PORT RCVBUF SNDBUF" lines (the buffers "-"
// when unknown); it is pure.
func parseWGSockets(text string) []wgSocket {
	var out []wgSocket
	for _, line := range splitLines(text) {
		f := strings.Fields(line)
		if len(f) < 2 || shell.Iface(f[0]) != nil {
			continue
		}
		port, err := strconv.Atoi(f[1])
		if err != nil || port < 1 || port > 65535 {
			continue // 0: not bound, nothing to re-open
		}
		s := wgSocket{iface: f[0], port: port}
		if len(f) == 4 {
			s.rcv, _ = strconv.ParseInt(f[2], 10, 64)
			s.snd, _ = strconv.ParseInt(f[3], 10, 64)
		}
		out = append(out, s)
	}
	return out
}

// staleBuffer: a socket holding less than this while its limit allows more
// was opened under a smaller limit (the system default is 208 KiB, and
// wireguard-go asks for 7 MiB), so the running tunnel has not got the limit
// yet.
const staleBuffer = 1 << 20

// held is what s holds now of the buffer key limits, 0 when unknown.
func (s wgSocket) held(key string) int64 {
	if strings.HasPrefix(key, "net.core.rmem") {
		return s.rcv
	}
	return s.snd
}

// reachRunningSockets makes the socket limit key, which st sets to value,
// reach the running tunnels: each userspace WireGuard socket is re-opened
// after the change and again after its undo, so a rollback restores the
// buffers it found too. When the limit is already in place, only a socket
// still holding a small buffer (opened before the limit was raised, as
// when someone ran sysctl -w by hand) is re-opened; there is nothing to undo.
func reachRunningSockets(ctx context.Context, env *Env, key string, value int64, st *Step) error {
	if !socketSysctls[key] {
		return nil
	}
	socks, err := userspaceWGSockets(ctx, env)
	if target.IsNotFound(err) {
		st.Notes = append(st.Notes, "sockets opened before this change keep their old buffers until their programs re-open them (no shell to list WireGuard's)")
		return nil
	}
	if err != nil {
		return fmt.Errorf("list userspace WireGuard sockets: %w", err)
	}
	changes := len(st.Commands) > 0
	var names []string
	for _, s := range socks {
		if !changes {
			if h := s.held(key); h <= 0 || h >= 2*min(value, staleBuffer) {
				continue
			}
		}
		st.Commands = append(st.Commands, s.reopenCommand())
		if changes {
			st.Undo = append(st.Undo, s.reopenCommand())
		}
		what := fmt.Sprintf("%s (port %d)", s.iface, s.port)
		if h := s.held(key); h > 0 {
			what = fmt.Sprintf("%s (port %d, %s now)", s.iface, s.port, byteSize(h))
		}
		names = append(names, what)
	}
	switch {
	case len(names) > 0 && changes:
		st.Notes = append(st.Notes, "re-opens the UDP socket of userspace WireGuard "+strings.Join(names, ", ")+
			" so the running tunnel gets the new limit (a limit reaches only sockets opened after it); peers, sessions and the port stay")
	case len(names) > 0:
		st.Summary += "; re-open " + strings.Join(names, ", ")
		st.Notes = append(st.Notes, "the limit is in place but userspace WireGuard "+strings.Join(names, ", ")+
			" opened its socket before it: re-opening it gives the running tunnel the limit (peers, sessions and the port stay)")
	case changes:
		st.Notes = append(st.Notes, "no userspace WireGuard socket to re-open (kernel WireGuard receives without a socket queue); "+
			"other programs' sockets get the new limit when they re-open them")
	}
	return nil
}

// byteSize writes a buffer size the way people read them.
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
