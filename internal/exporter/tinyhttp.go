package exporter

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A small HTTP/1.1 server for the router build, which leaves out net/http:
// importing it links the TLS stack and HTTP/2, most of what the exporter
// would add to the binary. It serves what a Prometheus scrape needs and no
// more: GET and HEAD, one request per connection (Connection: close),
// no request bodies, no TLS, no compression. Every build compiles it, so
// its tests run everywhere; only the router build serves with it.

// Limits of the small server, beside the connections it serves at once
// (Site.MaxConnections; more wait in the kernel's backlog) and the time a
// client has to take its answer (Site.WriteTimeout).
const (
	tinyMaxHeader    = 16 << 10         // request line and headers, in bytes
	tinyReadTimeout  = 10 * time.Second // to read the request
	tinyDrainTimeout = 5 * time.Second  // for requests in flight when ctx ends
)

// serveTiny serves s on ln until ctx ends (then it returns nil, after the
// requests in flight finished or tinyDrainTimeout passed) or ln fails.
func serveTiny(ctx context.Context, ln net.Listener, s *Site, log *Logger) error {
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	var wg sync.WaitGroup
	slots := make(chan struct{}, s.maxConnections())
	drain := func() {
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(tinyDrainTimeout):
		}
	}
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			drain()
			return nil
		}
		c, err := ln.Accept()
		if err != nil {
			<-slots
			if ctx.Err() != nil {
				drain()
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return err
		}
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetWriteBuffer(sendBuffer)
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			if err := serveTinyConn(ctx, c, s); err != nil {
				log.Warn("answering a request failed", "remote", c.RemoteAddr(), "err", err)
			}
		}()
	}
}

// serveTinyConn reads one request from c, answers it and closes c. Errors a
// client causes are answered with 400 and not reported.
func serveTinyConn(ctx context.Context, c net.Conn, s *Site) error {
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(tinyReadTimeout))
	req, err := readTinyRequest(bufio.NewReader(io.LimitReader(c, tinyMaxHeader)))
	var rep reply
	switch {
	case errors.Is(err, errTinyVersion):
		rep = textReply(505, err.Error())
	case err != nil:
		var ne net.Error
		if errors.As(err, &ne) || errors.Is(err, io.EOF) {
			return nil // the client went away or said nothing
		}
		rep = textReply(statusBadRequest, err.Error())
		req.method = "GET"
	default:
		rep = s.answer(ctx, req)
	}
	_ = c.SetWriteDeadline(time.Now().Add(s.writeTimeout()))
	w := bufio.NewWriter(c)
	text := statusText[rep.status]
	if text == "" {
		text = "Status " + strconv.Itoa(rep.status)
	}
	fmt.Fprintf(w, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n",
		rep.status, text, rep.contentType, rep.size())
	if rep.status != statusOK {
		w.WriteString("X-Content-Type-Options: nosniff\r\n")
	}
	w.WriteString("\r\n")
	if req.method != "HEAD" {
		if err := rep.writeTo(w); err != nil {
			return err
		}
	}
	return w.Flush()
}

var errTinyVersion = errors.New("HTTP version not supported: HTTP/1.0 and HTTP/1.1 are")

// readTinyRequest reads a request line and its headers; the exporter reads
// one header, Prometheus' scrape timeout.
func readTinyRequest(r *bufio.Reader) (request, error) {
	line, err := readTinyLine(r)
	if err != nil {
		return request{}, err
	}
	f := strings.Split(line, " ")
	if len(f) != 3 || f[0] == "" || f[1] == "" {
		return request{}, fmt.Errorf("malformed request line %.80q", line)
	}
	if f[2] != "HTTP/1.1" && f[2] != "HTTP/1.0" {
		return request{}, errTinyVersion
	}
	u, err := url.ParseRequestURI(f[1])
	if err != nil || u.Host != "" && u.Scheme != "http" {
		return request{}, fmt.Errorf("malformed request target %.80q", f[1])
	}
	query, _ := url.ParseQuery(u.RawQuery) // as net/http's URL.Query: the pairs that parse
	req := request{method: f[0], path: u.Path, query: query}
	for {
		line, err := readTinyLine(r)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("request headers too long or cut short")
			}
			return request{}, err
		}
		if line == "" {
			return req, nil
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return request{}, fmt.Errorf("malformed header line %.80q", line)
		}
		if strings.EqualFold(name, "X-Prometheus-Scrape-Timeout-Seconds") {
			req.scrapeTimeout = strings.TrimSpace(value)
		}
	}
}

// readTinyLine reads one line ending in CRLF (or a bare LF) without it.
func readTinyLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		if line != "" && errors.Is(err, io.EOF) {
			return "", errors.New("request cut short")
		}
		return "", err
	}
	return strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r"), nil
}
