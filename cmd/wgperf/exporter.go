package main

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/wgperf/wgperf/internal/exporter"
	"github.com/wgperf/wgperf/internal/target"
)

func exporterCmd() *cobra.Command {
	var (
		listen, host string
		interval     time.Duration
	)
	cmd := &cobra.Command{
		Use:   "exporter",
		Short: "Serve WireGuard, kernel counters and findings as Prometheus metrics",
		Long: `exporter collects one host every --interval in the background, runs the passive checks
on it, and serves the result at /metrics for Prometheus: per-peer handshake age,
bytes and endpoint; UDP buffer errors; softnet drops and time squeeze per CPU; TCP
retransmits; and every finding present now as wgperf_finding{id,severity,interface,peer} 1,
so a stale endpoint route or ICMP rate-limit drops raise an alert when they appear.
A scrape only copies the latest results, so it stays cheap.

Alert rules, a Grafana dashboard, a systemd unit and an OpenWrt init script are in deploy/.`,
		Example: `  wgperf exporter
  wgperf exporter --listen 127.0.0.1:9586 --host ssh:root@golem --interval 1m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if interval < time.Second {
				return &ExitError{Code: exitFailed, Err: fmt.Errorf("--interval %s: want at least 1s", interval)}
			}
			t, err := target.Parse(host)
			if err != nil {
				return couldNotRun(err)
			}
			return runExporter(cmd.Context(), t, listen, interval)
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", ":9586", "address to serve /metrics on")
	f.StringVar(&host, "host", "local", "target to watch: local, netns:NAME or ssh:[user@]host[:port]")
	f.DurationVar(&interval, "interval", exporter.DefaultInterval, "how often to collect the host and run the checks")
	return cmd
}

func runExporter(ctx context.Context, t target.Target, listen string, interval time.Duration) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	tty := term.IsTerminal(int(os.Stderr.Fd()))
	e := exporter.New(t, exporter.Options{
		Interval: interval,
		Logf:     func(format string, args ...any) { fmt.Fprintf(os.Stderr, "wgperf exporter: "+format+"\n", args...) },
	})
	// The first collection runs before serving, so a wrong --host fails at once
	// with one clear line instead of an exporter that only ever reports failure.
	if tty {
		fmt.Fprintf(os.Stderr, "collecting %s...\n", t)
	}
	if err := e.Refresh(ctx); err != nil {
		return couldNotRun(err) // collect names the target
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return &ExitError{Code: exitFailed, Err: fmt.Errorf("--listen %s: %w", listen, err)}
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", e.Handler())
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "<html><head><title>wgperf exporter</title></head><body><h1>wgperf exporter</h1>"+
			"<p>Watching %s every %s. <a href=\"/metrics\">Metrics</a></p></body></html>\n", html.EscapeString(t.String()), interval)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	go func() {
		// Run collects at once; the first round above already did, so wait one interval.
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
		e.Run(ctx)
	}()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if tty {
		fmt.Fprintf(os.Stderr, "serving http://%s/metrics (collecting %s every %s; Ctrl-C to stop)\n", ln.Addr(), t, interval)
	}
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return couldNotRun(err)
	}
	return nil
}
