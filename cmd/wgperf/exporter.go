package main

import (
	"context"
	"fmt"
	"html"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/wgperf/wgperf/internal/exporter"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

func exporterCmd() *cobra.Command {
	var (
		listen, host, webConfig string
		interval                time.Duration
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

--web.config.file takes the web configuration file of the official Prometheus
exporters (TLS certificate, basic auth users with bcrypt hashes); the metrics
name peers' public keys, endpoints and allowed IPs, so use it (or listen on
127.0.0.1) anywhere the port is reachable. See deploy/web-config.yml.

Alert rules, a Grafana dashboard, a systemd unit and an OpenWrt init script are in deploy/.`,
		Example: `  wgperf exporter
  wgperf exporter --listen 127.0.0.1:9586 --host ssh:root@golem --interval 1m
  wgperf exporter --web.config.file /etc/wgperf/web-config.yml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if interval < time.Second {
				return &ExitError{Code: exitFailed, Err: fmt.Errorf("--interval %s: want at least 1s", interval)}
			}
			t, err := target.Parse(host)
			if err != nil {
				return couldNotRun(err)
			}
			if err := exporter.CheckWebConfig(webConfig); err != nil {
				return couldNotRun(fmt.Errorf("--web.config.file %s: %v", webConfig, err))
			}
			return runExporter(cmd.Context(), t, listen, interval, webConfig)
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", ":9586", "address to serve /metrics on")
	f.StringVar(&host, "host", "local", "target to watch: local, netns:NAME or ssh:[user@]host[:port]")
	f.DurationVar(&interval, "interval", exporter.DefaultInterval, "how often to collect the host and run the checks")
	f.StringVar(&webConfig, "web.config.file", "", "web configuration file for TLS and basic auth (Prometheus exporter-toolkit format)")
	return cmd
}

func runExporter(ctx context.Context, t target.Target, listen string, interval time.Duration, webConfig string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	tty := term.IsTerminal(int(os.Stderr.Fd()))
	e := exporter.New(t, exporter.Options{
		Interval: interval,
		Logf: func(format string, args ...any) {
			fmt.Fprintln(os.Stderr, "wgperf exporter:", shell.Terminal(fmt.Sprintf(format, args...)))
		},
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
	if webConfig == "" && exporter.Exposed(ln) {
		fmt.Fprintf(os.Stderr, "wgperf exporter: warning: %s serves peers' public keys, endpoints and allowed IPs to any host, without TLS or auth (see --web.config.file)\n", ln.Addr())
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", e.Handler())
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "<html><head><title>wgperf exporter</title></head><body><h1>wgperf exporter</h1>"+
			"<p>Watching %s every %s. <a href=\"/metrics\">Metrics</a></p></body></html>\n", html.EscapeString(t.String()), interval)
	})
	go func() {
		// Run collects at once; the first round above already did, so wait one interval.
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
		e.Run(ctx)
	}()
	if tty {
		how := ""
		if webConfig != "" {
			how = ", TLS and auth as " + webConfig + " says"
		}
		fmt.Fprintf(os.Stderr, "serving %s/metrics (collecting %s every %s%s; Ctrl-C to stop)\n", ln.Addr(), t, interval, how)
	}
	// exporter-toolkit logs each start at info level; keep warnings and errors.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := exporter.Serve(ctx, ln, mux, webConfig, logger); err != nil {
		return couldNotRun(err)
	}
	return nil
}
