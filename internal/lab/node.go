package lab

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
	"golang.zx2c4.com/wireguard/conn"
	"golang.zx2c4.com/wireguard/device"
	"golang.zx2c4.com/wireguard/ipc"
	"golang.zx2c4.com/wireguard/tun"
)

// NodeOptions configure one embedded WireGuard process.
type NodeOptions struct {
	Interface string
	MTU       int
	// UDPBuffer, when > 0, re-sets SO_RCVBUF/SO_SNDBUF on the node's UDP sockets
	// to this effective size after every bind. wireguard-go run as root forces
	// 7 MiB buffers (SO_RCVBUFFORCE); implementations that keep the system
	// default (the remote-users case's NAS: 208 KB) drop datagrams under load, and this
	// emulates them per socket without touching the host's sysctls.
	// UDPBufferCapped asks for 7 MiB without force instead, so the kernel caps
	// the buffers at net.core.rmem_max/wmem_max when the socket is bound.
	UDPBuffer int
	// UDPBufferPercent (1-99) shrinks UDPBufferCapped buffers to that share
	// of what rmem_max/wmem_max allow (Config.UDPBufferPercent).
	UDPBufferPercent int
}

// UDPBufferCapped is the UDPBuffer value for "ask for 7 MiB, get what rmem_max allows".
const UDPBufferCapped = -1

// RunNode serves one userspace WireGuard interface until SIGTERM or SIGINT. It
// must run in its own process inside the target namespace: wireguard-go tracks
// the TUN's MTU through netlink of the namespace it started in.
func RunNode(opts NodeOptions) error {
	tdev, err := tun.CreateTUN(opts.Interface, opts.MTU)
	if err != nil {
		return fmt.Errorf("create TUN %s: %w", opts.Interface, err)
	}
	logger := device.NewLogger(device.LogLevelError, fmt.Sprintf("(%s) ", opts.Interface))
	var bind conn.Bind = conn.NewDefaultBind()
	if opts.UDPBuffer != 0 {
		bind = &bufferCappedBind{Bind: bind, size: opts.UDPBuffer, percent: opts.UDPBufferPercent}
	}
	dev := device.NewDevice(tdev, bind, logger)
	defer dev.Close()

	uapiFile, placed, err := openUAPI(opts.Interface)
	if err != nil {
		return fmt.Errorf("open UAPI socket: %w", err)
	}
	uapi, err := ipc.UAPIListen(opts.Interface, uapiFile)
	if err != nil {
		return fmt.Errorf("listen on UAPI socket: %w", err)
	}
	defer func() {
		uapi.Close()
		// The socket's own name is the temporary one it was bound to: remove
		// the path it was renamed to, unless another node has taken it since.
		if now, err := os.Stat(socketPath(opts.Interface)); err == nil && os.SameFile(now, placed) {
			_ = os.Remove(socketPath(opts.Interface))
		}
	}()
	go func() {
		for {
			c, err := uapi.Accept()
			if err != nil {
				return
			}
			go dev.IpcHandle(c)
		}
	}()

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-sig:
	case <-dev.Wait():
	}
	return nil
}

// openUAPI listens on iface's UAPI socket, the path wg(8) looks for, and
// returns the listening socket and the path's file info. wireguard-go's
// ipc.UAPIOpen binds that path and listens a moment later: a waiter that saw
// the path in between had wg(8) connect to a socket that refused it, and wg
// then unlinks the path and falls back to the kernel's netlink ("Unable to
// modify interface: Protocol not supported", once in make test on a
// saturated machine). Here the socket listens under a temporary name and is
// renamed into place, so the path appears only once it accepts.
func openUAPI(iface string) (*os.File, os.FileInfo, error) {
	path := socketPath(iface)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, nil, err
	}
	if c, err := net.Dial("unix", path); err == nil {
		c.Close()
		return nil, nil, fmt.Errorf("%s is in use by another WireGuard process", path)
	}
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	_ = os.Remove(tmp)
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, nil, err
	}
	l.SetUnlinkOnClose(false)
	defer l.Close() // File holds a copy of the socket
	err = os.Chmod(tmp, 0o600)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return nil, nil, err
	}
	placed, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	f, err := l.File()
	return f, placed, err
}

// bufferCappedBind shrinks the socket buffers of every UDP socket it opens.
type bufferCappedBind struct {
	conn.Bind
	size, percent int
}

func (b *bufferCappedBind) Open(port uint16) ([]conn.ReceiveFunc, uint16, error) {
	fns, actual, err := b.Bind.Open(port)
	if err == nil {
		err = capUDPBuffers(int(actual), b.size, b.percent)
	}
	return fns, actual, err
}

// capUDPBuffers finds this process's UDP sockets bound to port (the bind does
// not expose them) and sets their buffers. The kernel doubles what SO_RCVBUF
// asks for and caps it at rmem_max, so ask for half the wanted size.
func capUDPBuffers(port, size, percent int) error {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	found := 0
	for _, e := range fds {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if link, _ := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); len(link) < 7 || link[:7] != "socket:" {
			continue
		}
		if typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE); err != nil || typ != unix.SOCK_DGRAM {
			continue
		}
		sa, err := unix.Getsockname(fd)
		if err != nil || sockaddrPort(sa) != port {
			continue
		}
		for opt, limit := range map[int]string{unix.SO_RCVBUF: "rmem_max", unix.SO_SNDBUF: "wmem_max"} {
			ask := size / 2
			if size == UDPBufferCapped {
				ask = cappedAsk(limit, percent)
			}
			if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, opt, ask); err != nil {
				return fmt.Errorf("set socket buffer: %w", err)
			}
		}
		found++
	}
	if found == 0 {
		return fmt.Errorf("no UDP socket on port %d to cap", port)
	}
	return nil
}

// cappedAsk is what a UDPBufferCapped socket asks for: 7 MiB, which the
// kernel caps at the sysctl net.core.LIMIT, or percent of what it allows.
func cappedAsk(limit string, percent int) int {
	const ask = 7 << 20
	if percent <= 0 || percent >= 100 {
		return ask
	}
	b, err := os.ReadFile("/proc/sys/net/core/" + limit)
	allowed, perr := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || perr != nil {
		return ask
	}
	return min(ask, allowed) * percent / 100
}

func sockaddrPort(sa unix.Sockaddr) int {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return a.Port
	case *unix.SockaddrInet6:
		return a.Port
	}
	return -1
}

// socketPath is where wireguard-go listens for configuration (wg(8) looks here).
func socketPath(iface string) string {
	return filepath.Join("/var/run/wireguard", iface+".sock")
}
