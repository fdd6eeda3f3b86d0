package lab

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// A fleet node's WireGuard state without a WireGuard process: this machine's
// kernel has no module, and a wireguard-go process per node costs megabytes
// each. One process ("lab _fleetwg") answers the standard UAPI "get" on every
// node's socket with that node's interface and peers, so the real wg(8) in
// each router's userland reads them as it reads wireguard-go's; the node's
// "wg0" is a persistent TUN device (wireguard-go's kind of link, no process on it), so ip and /sys/class/net show it. Nothing is
// forwarded: a fleet is for collecting, not for traffic.

// FleetWGOptions are "lab _fleetwg"'s: the fleet's folder, its node count
// and which nodes answer slowly.
type FleetWGOptions struct {
	Dir   string        // the fleet's state folder (FleetDir)
	Count int           // nodes f1..fCount
	Slow  []int         // nodes whose answers wait SlowBy
	Peers int           // peers per node
	Delay time.Duration // SlowBy
}

// fleetWGSocket is node i's UAPI socket, which its mount namespace sees at
// /run/wireguard/wg0.sock.
func fleetWGSocket(dir string, i int) string {
	return filepath.Join(dir, "nodes", fleetNode(i), "wireguard", "wg0.sock")
}

// RunFleetWG serves every node's UAPI socket until killed.
func RunFleetWG(opts FleetWGOptions) error {
	slow := map[int]bool{}
	for _, i := range opts.Slow {
		slow[i] = true
	}
	start := time.Now()
	var wg sync.WaitGroup
	for i := 1; i <= opts.Count; i++ {
		path := fleetWGSocket(opts.Dir, i)
		_ = os.Remove(path)
		ln, err := net.Listen("unix", path)
		if err != nil {
			return err
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					if slow[i] {
						time.Sleep(opts.Delay)
					}
					serveFleetUAPI(c, i, opts.Peers, start)
				}()
			}
		}(i)
	}
	wg.Wait()
	return nil
}

// serveFleetUAPI answers "get=1" with node i's state; anything else (a set)
// gets an error, as the fleet's state is fixed.
func serveFleetUAPI(c net.Conn, i, peers int, start time.Time) {
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return
	}
	if strings.TrimSpace(line) != "get=1" {
		fmt.Fprint(c, "errno=1\n\n")
		return
	}
	_, _ = c.Write([]byte(fleetUAPIState(i, peers, time.Now(), start)))
}

// fleetKey is a fixed 32-byte key of node i's (peer 0 is the node itself),
// in the UAPI's hex. Throw-away state of a lab: derived, not random, so a
// restarted server answers the same.
func fleetKey(i, peer int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "wgperf lab fleet %d %d", i, peer))
	return hex.EncodeToString(sum[:])
}

// fleetUAPIState is node i's interface as a UAPI "get" answer at now: peers
// that shook hands within the last two minutes, with counters that grow.
func fleetUAPIState(i, peers int, now, start time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "private_key=%s\nlisten_port=%d\n", fleetKey(i, 0), WGPort)
	up := uint64(now.Sub(start).Seconds()) + 1
	for p := 1; p <= peers; p++ {
		fmt.Fprintf(&b, "public_key=%s\nendpoint=198.18.%d.%d:%d\n", fleetKey(i, p), p, i%250+1, WGPort)
		fmt.Fprintf(&b, "last_handshake_time_sec=%d\nlast_handshake_time_nsec=0\n", now.Add(-time.Duration(10*p+i%60)*time.Second).Unix())
		fmt.Fprintf(&b, "rx_bytes=%d\ntx_bytes=%d\npersistent_keepalive_interval=25\n", up*uint64(1000*p), up*uint64(1500*p))
		fmt.Fprintf(&b, "allowed_ip=10.202.%d.%d/32\nprotocol_version=1\n", p, i%250+1)
	}
	b.WriteString("errno=0\n\n")
	return b.String()
}
