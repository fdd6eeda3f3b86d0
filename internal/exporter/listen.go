package exporter

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"
)

// Listen opens the exporter's listeners: the --web.listen-address
// addresses, or with systemdSocket the sockets systemd passed in (socket
// activation, --web.systemd-socket, as node_exporter takes them). On error
// none stays open.
func Listen(addrs []string, systemdSocket bool) ([]net.Listener, error) {
	if systemdSocket {
		return systemdListeners()
	}
	var lns []net.Listener
	for _, a := range addrs {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, fmt.Errorf("--web.listen-address %s: %w", a, err)
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

// systemdListeners takes the sockets of systemd's socket activation
// protocol: LISTEN_PID names this process and LISTEN_FDS counts the
// descriptors from 3 on.
func systemdListeners() ([]net.Listener, error) {
	pid, _ := strconv.Atoi(os.Getenv("LISTEN_PID"))
	n, _ := strconv.Atoi(os.Getenv("LISTEN_FDS"))
	if pid != os.Getpid() || n < 1 {
		return nil, errors.New("--web.systemd-socket: systemd passed no socket (start the exporter from a .socket unit)")
	}
	// Children (ssh, ip) must not take them for their own.
	os.Unsetenv("LISTEN_PID")
	os.Unsetenv("LISTEN_FDS")
	os.Unsetenv("LISTEN_FDNAMES")
	var lns []net.Listener
	for fd := 3; fd < 3+n; fd++ {
		syscall.CloseOnExec(fd)
		f := os.NewFile(uintptr(fd), "systemd socket "+strconv.Itoa(fd))
		ln, err := net.FileListener(f)
		f.Close()
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, fmt.Errorf("--web.systemd-socket: descriptor %d: %v", fd, err)
		}
		lns = append(lns, ln)
	}
	return lns, nil
}
