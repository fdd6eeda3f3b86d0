package exporter

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzTinyServer feeds arbitrary bytes to the router build's HTTP server, the
// one piece of wgperf that parses what any host on the network sends: it
// must answer with one well-formed HTTP/1.1 response (status line, headers
// without stray line breaks, a body as long as it says) or close quietly,
// and never panic.
func FuzzTinyServer(f *testing.F) {
	for _, seed := range []string{
		"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\n",
		"HEAD / HTTP/1.0\r\n\r\n",
		"GET /probe?target=ssh:root@gw1 HTTP/1.1\r\n\r\n",
		"GET http://x/%zz HTTP/1.1\r\n\r\n",
		"GET / HTTP/1.1\r\nno colon\r\n\r\n",
		"GET /\n\n",
		"",
	} {
		f.Add([]byte(seed))
	}
	site := &Site{Landing: &LandingPage{Description: "ok"}}
	f.Fuzz(func(t *testing.T, raw []byte) {
		c := &recordedConn{in: bytes.NewReader(raw)}
		if err := serveTinyConn(context.Background(), c, site); err != nil {
			t.Fatalf("serve: %v", err)
		}
		if c.out.Len() == 0 {
			return // closed without an answer: the client said nothing usable
		}
		r := bufio.NewReader(&c.out)
		status, err := r.ReadString('\n')
		if err != nil || !strings.HasPrefix(status, "HTTP/1.1 ") || !strings.HasSuffix(status, "\r\n") {
			t.Fatalf("status line %q (%v)", status, err)
		}
		length := -1
		for {
			line, err := r.ReadString('\n')
			if err != nil || !strings.HasSuffix(line, "\r\n") || strings.ContainsAny(strings.TrimSuffix(line, "\r\n"), "\r\n") {
				t.Fatalf("header line %q (%v)", line, err)
			}
			if line == "\r\n" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				length, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
		body, _ := io.ReadAll(r)
		if length < 0 {
			t.Fatalf("no Content-Length in the answer to %q", raw)
		}
		if !strings.HasPrefix(string(raw), "HEAD ") && len(body) != length {
			t.Fatalf("body of %d bytes, Content-Length %d", len(body), length)
		}
	})
}

// recordedConn is a connection whose client sent in and then closed its side;
// what the server writes is kept in out.
type recordedConn struct {
	in  *bytes.Reader
	out bytes.Buffer
}

func (c *recordedConn) Read(p []byte) (int, error)  { return c.in.Read(p) }
func (c *recordedConn) Write(p []byte) (int, error) { return c.out.Write(p) }
func (c *recordedConn) Close() error                { return nil }
func (c *recordedConn) LocalAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9723}
}
func (c *recordedConn) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
}
func (c *recordedConn) SetDeadline(time.Time) error      { return nil }
func (c *recordedConn) SetReadDeadline(time.Time) error  { return nil }
func (c *recordedConn) SetWriteDeadline(time.Time) error { return nil }
