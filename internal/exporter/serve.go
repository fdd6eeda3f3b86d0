package exporter

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/exporter-toolkit/web"
)

// CheckWebConfig validates a Prometheus web configuration file (TLS and basic
// auth, the --web.config.file of the official exporters); "" means plain HTTP.
func CheckWebConfig(path string) error {
	if path == "" {
		return nil
	}
	return web.Validate(path)
}

// Exposed reports whether a listener accepts connections from other hosts
// (anything but a loopback address).
func Exposed(ln net.Listener) bool {
	a, ok := ln.Addr().(*net.TCPAddr)
	return !ok || !a.IP.IsLoopback()
}

// Serve serves h on ln until ctx ends. With webConfig it serves through
// exporter-toolkit's web package: HTTPS with the configured certificate,
// basic auth with bcrypt-hashed passwords, both re-read as the file changes.
// The metrics name peers' public keys, endpoints and allowed IPs: anything
// listening beyond loopback should use it. A nil logger logs nothing.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, webConfig string, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
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
