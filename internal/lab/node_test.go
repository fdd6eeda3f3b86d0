package lab

import (
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
)

// The UAPI socket's path appears only once it accepts: wg(8) that finds a
// path which refuses it unlinks the path and falls back to netlink. A stale
// path left by a killed node is replaced, a live one is not taken.
func TestOpenUAPI(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the UAPI socket folder is /var/run/wireguard")
	}
	iface := fmt.Sprintf("wgpt%d", os.Getpid()%100000)
	path := socketPath(iface)
	t.Cleanup(func() { os.Remove(path) })

	// A killed node's path: a socket file nobody listens on.
	stale, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	stale.SetUnlinkOnClose(false)
	stale.Close()

	f, placed, err := openUAPI(iface)
	if err != nil {
		t.Fatalf("open over a stale path: %v", err)
	}
	defer f.Close()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("the path does not accept at once: %v", err)
	}
	c.Close()
	if now, err := os.Stat(path); err != nil || !os.SameFile(now, placed) {
		t.Errorf("the path is not the socket returned: %v", err)
	}
	left, _ := os.ReadDir("/var/run/wireguard")
	for _, e := range left {
		if strings.HasPrefix(e.Name(), iface+".sock.") {
			t.Errorf("temporary socket left: %s", e.Name())
		}
	}
	if _, _, err := openUAPI(iface); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("a second node on a live path: %v, want in use", err)
	}
}
