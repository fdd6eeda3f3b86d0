//go:build !router

package exporter

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/exporter-toolkit/web"
)

// WebConfig says whether this build reads --web.config.file (the router
// build, without net/http and its TLS stack, does not).
const WebConfig = true

// CheckWebConfig validates a Prometheus web configuration file (TLS and basic
// auth, the --web.config.file of the official exporters); "" means plain HTTP.
func CheckWebConfig(path string) error {
	if path == "" {
		return nil
	}
	return web.Validate(path)
}

// ServeHTTP answers one request through net/http: /metrics and / through
// Prometheus' libraries (metrics_lib.go), the other pages gzipped when the
// client accepts it (Prometheus does) and one of gzipSlots is free, written
// straight from the rendered text. The client has writeTimeout to take its
// answer.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		switch {
		case r.URL.Path == s.metricsPath() && s.Exporter != nil:
			_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.writeTimeout()))
			s.serveMetrics(w, r)
			return
		case r.URL.Path == "/" && s.Landing != nil:
			if l := s.handlers(); l.err == nil {
				l.landing.ServeHTTP(w, r)
				return
			}
			// A template the library could not fill: the small page.
		}
	}
	rep := s.answer(r.Context(), request{method: r.Method, path: r.URL.Path, query: r.URL.Query(),
		scrapeTimeout: r.Header.Get("X-Prometheus-Scrape-Timeout-Seconds")})
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.writeTimeout()))
	h := w.Header()
	h.Set("Content-Type", rep.contentType)
	if rep.status != statusOK {
		h.Set("X-Content-Type-Options", "nosniff")
	}
	if rep.status == statusOK && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		h.Add("Vary", "Accept-Encoding")
		select {
		case gzipSlots <- struct{}{}:
			defer func() { <-gzipSlots }()
			h.Set("Content-Encoding", "gzip")
			w.WriteHeader(rep.status)
			if r.Method == http.MethodHead {
				return
			}
			zw := gzipWriters.Get().(*gzip.Writer)
			zw.Reset(w)
			if rep.writeTo(zw) == nil {
				_ = zw.Close()
			}
			zw.Reset(io.Discard) // let go of the connection
			gzipWriters.Put(zw)
			return
		default: // as many answers are being compressed as may be: this one goes plain
		}
	}
	h.Set("Content-Length", strconv.Itoa(rep.size()))
	w.WriteHeader(rep.status)
	if r.Method != http.MethodHead {
		_ = rep.writeTo(w)
	}
}

// idleTimeout ends a kept-alive connection no request follows on (the
// small server of the router build answers one request per connection).
const idleTimeout = 90 * time.Second

// gzipSlots bounds the answers compressed at once: each gzip writer holds
// about 800 KiB, and 32 of them would be most of the unit's memory.
var gzipSlots = make(chan struct{}, 4)

// gzipWriters are the writers of gzipSlots, kept between answers.
var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(io.Discard, gzip.DefaultCompression)
	return zw
}}

// acceptsGzip reads an Accept-Encoding header: gzip listed without q=0.
func acceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(part, ";")
		if strings.TrimSpace(coding) != "gzip" {
			continue
		}
		q := strings.ReplaceAll(params, " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}

// Serve serves s on every listener until ctx ends or one fails. With webConfig it serves through
// exporter-toolkit's web package: HTTPS with the configured certificate,
// basic auth with bcrypt-hashed passwords, both re-read as the file changes.
// The metrics name peers' public keys, endpoints and allowed IPs: anything
// listening beyond loopback should use it. exporter-toolkit logs through
// log, as wgperf's own lines (nil: nowhere).
func Serve(ctx context.Context, lns []net.Listener, s *Site, webConfig string, log *Logger) error {
	return serveAll(ctx, lns, func(ctx context.Context, ln net.Listener) error {
		return serveHTTP(ctx, ln, s, webConfig, log)
	})
}

// serveHTTP serves one listener with a server of its own (exporter-toolkit
// sets its server up per listener).
func serveHTTP(ctx context.Context, ln net.Listener, s *Site, webConfig string, log *Logger) error {
	logger := slog.New(log.Handler())
	// net/http's own complaints (a TLS handshake that failed) in the same lines.
	// Read and idle timeouts end clients that say nothing; the write
	// deadline (ServeHTTP) one that does not read its answer; the cap
	// (limitListener) bounds the connections open at once.
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: idleTimeout,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	ln = limitListener(ln, s.maxConnections())
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
		case <-done:
			return
		}
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	err := web.Serve(ln, srv, &web.FlagConfig{WebConfigFile: &webConfig}, logger)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
