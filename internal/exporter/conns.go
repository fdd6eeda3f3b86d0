package exporter

import (
	"net"
	"sync"
	"time"
)

// Limits of serving, in both servers (net/http's and tinyhttp.go's).
const (
	// DefaultMaxConnections is how many connections are served at once;
	// more wait in the kernel's listen backlog until one closes.
	DefaultMaxConnections = 32
	// DefaultWriteTimeout is how long a client has to take its answer once
	// it is ready (a /probe collection before it has its own timeout): a
	// client that never reads lets go of its connection then.
	DefaultWriteTimeout = 30 * time.Second
	// sendBuffer is each connection's kernel send buffer (SO_SNDBUF, which
	// the kernel doubles). Left to autotuning it grows to tcp_wmem's 4 MiB,
	// charged to the unit's memory: 32 clients that never read would hold
	// 128 MiB of answers there, and the write timeout would never fire.
	sendBuffer = 128 << 10
)

func (s *Site) maxConnections() int {
	if s.MaxConnections <= 0 {
		return DefaultMaxConnections
	}
	return s.MaxConnections
}

func (s *Site) writeTimeout() time.Duration {
	if s.WriteTimeout <= 0 {
		return DefaultWriteTimeout
	}
	return s.WriteTimeout
}

// limitListener accepts at most n connections open at once: Accept waits
// while n are, and a connection's Close makes room. Each gets a bounded
// send buffer (sendBuffer).
func limitListener(ln net.Listener, n int) net.Listener {
	return &limitedListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

type limitedListener struct {
	net.Listener
	slots chan struct{}
	done  chan struct{}
	once  sync.Once
}

func (l *limitedListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(sendBuffer)
	}
	return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *limitedListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitedConn gives its slot back on its first Close.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
