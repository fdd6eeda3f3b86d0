package lab

import (
	"errors"
	"fmt"
	"strconv"
)

// Clients behind A (Config.Clients): client N is node "cN" at
// 10.11.N.2/24 on a link of its own to A (10.11.N.1), routed through the
// tunnel like A's own traffic; B accepts and routes ClientsNet through it.
const (
	ClientsNet = "10.11.0.0/16"
	maxClients = 32
)

// checkClients refuses a number of clients the addressing has no room for.
func (c Config) checkClients() error {
	if c.Clients < 0 || c.Clients > maxClients {
		return fmt.Errorf("clients behind A: want 0 to %d", maxClients)
	}
	if c.Clients > 0 && c.CloneA {
		return errors.New("clients behind A do not go with the clone of A (--clone-a)")
	}
	return nil
}

// clientName is client n's node name (n from 1).
func clientName(n int) string { return "c" + strconv.Itoa(n) }

// ClientNodes are the names of the client hosts behind A, in order.
func (l *Lab) ClientNodes() []string {
	var out []string
	for n := 1; n <= l.Config.Clients; n++ {
		out = append(out, clientName(n))
	}
	return out
}

// clientLinks links each client to A and routes it through A.
func (b *builder) clientLinks(n int) {
	if n == 0 {
		return
	}
	b.on("a", "sysctl", "-qw", "net.ipv4.ip_forward=1")
	for i := 1; i <= n; i++ {
		node, subnet := clientName(i), "10.11."+strconv.Itoa(i)+"."
		b.link(node, "eth0", subnet+"2", "a", "cl"+strconv.Itoa(i), subnet+"1", 0)
		b.on(node, "ip", "route", "add", "default", "via", subnet+"1")
		b.lab.Nodes[node].LANAddr = subnet + "2"
	}
}
