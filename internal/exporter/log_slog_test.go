//go:build !router

package exporter

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"
)

// exporter-toolkit logs through the exporter's own Logger: its records are
// lines like wgperf's (same level filter, format, key=value pairs), not its
// text line re-printed inside msg.
func TestToolkitLogsThroughLogger(t *testing.T) {
	l, b := testLogger(t, "info", "logfmt")
	s := slog.New(l.Handler()).With("component", "web").WithGroup("tls")
	s.Debug("hidden")
	s.Info("Listening on", "address", "[::]:9723", slog.Group("limits", "burst", 5), "wait", time.Second)
	want := ` level=INFO msg="Listening on" component=web tls.address=[::]:9723 tls.limits.burst=5 tls.wait=1s` + "\n"
	if !strings.HasPrefix(b.String(), "time=") || !strings.HasSuffix(b.String(), want) || strings.Count(b.String(), "\n") != 1 {
		t.Errorf("slog through Logger:\n%s\nwant:\n%s", b.String(), want)
	}

	// Serve hands the Logger to exporter-toolkit: its "TLS is disabled." line
	// comes out as one JSON object with its own fields.
	l, b = testLogger(t, "info", "json")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, []net.Listener{ln}, &Site{Landing: &LandingPage{Description: "x"}}, "", l)
	}()
	var line map[string]any
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		l.mu.Lock()
		out := b.String()
		l.mu.Unlock()
		for _, s := range strings.Split(strings.TrimSpace(out), "\n") {
			if strings.Contains(s, "TLS is disabled.") {
				if err := json.Unmarshal([]byte(s), &line); err != nil {
					t.Fatalf("%v: %s", err, s)
				}
			}
		}
		if line != nil {
			break
		}
	}
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if line["msg"] != "TLS is disabled." || line["level"] != "INFO" || line["address"] != ln.Addr().String() || line["http2"] != false {
		t.Errorf("exporter-toolkit's line: %v\nlog:\n%s", line, b.String())
	}
}
