//go:build !router

package exporter

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
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

// ServeHTTP answers one request through net/http, gzipped when the client
// accepts it (Prometheus does).
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rep := s.answer(r.Context(), request{method: r.Method, path: r.URL.Path, query: r.URL.Query(),
		scrapeTimeout: r.Header.Get("X-Prometheus-Scrape-Timeout-Seconds")})
	h := w.Header()
	h.Set("Content-Type", rep.contentType)
	if rep.status != statusOK {
		h.Set("X-Content-Type-Options", "nosniff")
	}
	body := rep.body
	if rep.status == statusOK && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		_, _ = zw.Write(body)
		if zw.Close() == nil {
			body = b.Bytes()
			h.Set("Content-Encoding", "gzip")
		}
		h.Add("Vary", "Accept-Encoding")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(rep.status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

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
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
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
