//go:build router

package exporter

import (
	"context"
	"errors"
	"net"
	"sync"
)

// WebConfig says whether this build reads --web.config.file: the router
// build serves plain HTTP only, with the small server in tinyhttp.go
// (net/http and the TLS stack it brings would double the binary).
const WebConfig = false

// keepHostSamples: the watched host's collections keep rendered text, which
// the small writer serves (the full build serves samples through client_golang).
const keepHostSamples = false

// libSite is what the router build keeps of a Site between requests: its
// landing page, written at the first request (it links no Prometheus
// library, whose handlers the full build keeps there).
type libSite struct {
	once    sync.Once
	landing []byte
}

// landingHTML is the landing page.
func (s *Site) landingHTML() []byte {
	s.lib.once.Do(func() { s.lib.landing = []byte(s.Landing.html(s.Prober != nil)) })
	return s.lib.landing
}

// ErrNoWebConfig answers --web.config.file in the router build.
var ErrNoWebConfig = errors.New("TLS and basic auth are not in the router build (plain HTTP only): " +
	"listen on 127.0.0.1 or a LAN address your firewall keeps in, " +
	"or scrape the router from a full build's /probe?target=ssh:root@ROUTER, which needs no wgperf on the router")

// CheckWebConfig refuses any web configuration file: this build has no TLS.
func CheckWebConfig(path string) error {
	if path == "" {
		return nil
	}
	return ErrNoWebConfig
}

// Serve serves s on every listener over plain HTTP until ctx ends; a webConfig is refused
// (see CheckWebConfig). log gets the server's errors; nil discards them.
func Serve(ctx context.Context, lns []net.Listener, s *Site, webConfig string, log *Logger) error {
	if err := CheckWebConfig(webConfig); err != nil {
		return err
	}
	return serveAll(ctx, lns, func(ctx context.Context, ln net.Listener) error {
		return serveTiny(ctx, ln, s, log)
	})
}
