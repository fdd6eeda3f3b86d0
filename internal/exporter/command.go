package exporter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/wgperf/wgperf/internal/buildinfo"
	"github.com/wgperf/wgperf/internal/fleet"
	"github.com/wgperf/wgperf/internal/probe/drops"
	"github.com/wgperf/wgperf/internal/target"
)

// Command is "wgperf exporter": the host it watches, how often, and how and
// where it serves.
type Command struct {
	Host          string // target spec to watch (--host)
	Interval      time.Duration
	Addrs         []string
	SystemdSocket bool
	Drops         bool // --collector.drops
	MaxConns      int  // --web.max-connections
	TelemetryPath string
	WebConfig     string
	Log           *Logger
	// Inventory and Limit are served at /sd (no Inventory: /sd is not).
	Inventory []string
	Limit     string
	Probe     ProbeOptions
	// PeerNames are the files of peer names (--peer-names).
	PeerNames []string
	Version   string
	// ExposedHint ends the warning about serving without TLS or auth.
	ExposedHint string
}

// check refuses nonsense options with one line naming the flag.
func (c *Command) check() error {
	if _, err := target.ParseSpec(c.Host); err != nil {
		return err // --host first, where the command always checked it
	}
	p := c.Probe
	switch {
	case p.MaxPeers < 0:
		return fmt.Errorf("--collector.peers.max %d: want 0 (every peer) or more", p.MaxPeers)
	case p.SSHPersist != 0 && p.SSHPersist < time.Second:
		return fmt.Errorf("--probe.ssh-persist %s: want 0 (a connection per collection) or 1s or more", p.SSHPersist)
	case c.Interval < time.Second:
		return fmt.Errorf("--interval %s: want at least 1s", c.Interval)
	case !strings.HasPrefix(c.TelemetryPath, "/") || c.TelemetryPath == "/probe" || c.TelemetryPath == SDPath || c.TelemetryPath == "/":
		return fmt.Errorf("--web.telemetry-path %q: want a path starting with / other than /, /probe and %s", c.TelemetryPath, SDPath)
	case c.Limit != "" && len(c.Inventory) == 0:
		return fmt.Errorf("--limit selects hosts of an --inventory: name one (-i, or ANSIBLE_INVENTORY)")
	}
	if err := CheckWebConfig(c.WebConfig); err != nil {
		return fmt.Errorf("--web.config.file %s: %v", c.WebConfig, err)
	}
	if err := CheckAllow(p.Allow); err != nil {
		return err
	}
	if err := CheckLimits(p.Limits, p.CacheBytes); err != nil {
		return err
	}
	if c.MaxConns < 1 {
		return fmt.Errorf("--web.max-connections %d: want at least 1", c.MaxConns)
	}
	names, err := ReadPeerNames(c.PeerNames...)
	if err != nil {
		return fmt.Errorf("--peer-names: %v", err)
	}
	c.Probe.Names = names
	return nil
}

// discovery returns /sd's Discovery for the inventory, read now so an
// unreadable inventory fails at start and its warnings come at once (nil,
// nil without --inventory). Each reading gives fleet.PrometheusTargets of
// the hosts, as "wgperf inventory --prometheus" prints them.
func (c *Command) discovery(ctx context.Context, prober *Prober) (*Discovery, error) {
	if len(c.Inventory) == 0 {
		return nil, nil
	}
	log, sources := c.Log, c.Inventory
	opts := fleet.LoadOptions{Limit: c.Limit}
	// The inventory's own warnings, once: Refresh below reads it for /sd.
	inv, err := fleet.LoadAll(ctx, sources, opts)
	switch {
	case errors.Is(err, fleet.ErrNoHost):
		log.Warn("/sd serves no targets", "why", err)
	case err != nil:
		return nil, fmt.Errorf("--inventory: %v", err)
	default:
		if w := inv.Warning(); w != "" {
			log.Warn("inventory", "warning", w)
		}
		if _, unreached := fleet.PrometheusTargets(inv.Hosts); len(unreached) > 0 {
			log.Warn("/probe reaches these hosts with the exporter user's ssh settings, not the inventory's (key, ssh arguments, become): put them in its ~/.ssh/config",
				"hosts", strings.Join(unreached, ","))
		}
	}
	d := &Discovery{
		Load: func(ctx context.Context) ([]fleet.TargetGroup, error) {
			inv, err := fleet.LoadAll(ctx, sources, opts)
			if err != nil {
				return nil, err
			}
			groups, _ := fleet.PrometheusTargets(inv.Hosts)
			return groups, nil
		},
		LeftOut: func(targets []string) {
			log.Warn("/sd leaves out the inventory's targets --probe.allow does not admit", "targets", strings.Join(targets, ","))
		},
	}
	served, err := d.Refresh(ctx, prober)
	if err != nil && !errors.Is(err, fleet.ErrNoHost) {
		return nil, fmt.Errorf("--inventory: %v", err)
	}
	log.Info("serving the inventory for Prometheus' http_sd", "path", SDPath, "targets", served, "sources", strings.Join(sources, ","))
	return d, nil
}

// RunCommand checks c, collects its host once (a wrong --host fails at once
// with one clear line instead of an exporter that only ever reports
// failure), then serves until ctx ends or a signal comes.
func RunCommand(ctx context.Context, c Command) error {
	if err := c.check(); err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	log, interval, probe := c.Log, c.Interval, c.Probe
	probe.Logf = log.Errors("/probe collecting failed")
	prober := NewProber(probe)
	defer prober.Close()
	// --host's connections live as the /probe targets' do.
	t, err := target.ParseWith(c.Host, target.HostSSH{Conns: prober.ssh})
	if err != nil {
		return err
	}
	opts := Options{Interval: interval, Logf: log.Errors("collecting failed"), Names: probe.Names, MaxPeers: probe.MaxPeers, Version: c.Version, Limits: probe.Limits}
	if c.Drops {
		opts.Drops = drops.ForTarget(ctx, t)
		defer opts.Drops.Close()
		if st := opts.Drops.Status(); st.Tier == drops.TierNone {
			log.Warn("no kernel drop reasons (--collector.drops)", "host", st.Host, "tier", st.Tier, "why", st.Why)
		}
	}
	e := New(t, opts)
	discovery, err := c.discovery(ctx, prober)
	if err != nil {
		return err
	}
	bi := buildinfo.Read(c.Version)
	log.Info("Starting wgperf exporter", "version", bi.Version, "branch", bi.Branch, "revision", bi.Revision)
	log.Info("Build context", "go", bi.GoVersion, "platform", bi.GOOS+"/"+bi.GOARCH, "tags", bi.Tags, "date", bi.BuildDate)
	log.Debug("collecting", "target", t)
	if err := e.Refresh(ctx); err != nil {
		return err // collect names the target
	}
	lns, err := Listen(c.Addrs, c.SystemdSocket)
	if err != nil {
		return err
	}
	for _, ln := range lns {
		if c.WebConfig == "" && Exposed(ln) {
			log.Warn("serving peers' public keys, endpoints and allowed IPs to any host, without TLS or auth", "address", ln.Addr(), "hint", c.ExposedHint)
		}
	}
	allowed := strings.Join(probe.Allow, " ")
	if allowed == "" {
		allowed = "none, see --probe.allow"
	}
	landing := &LandingPage{
		Description: fmt.Sprintf("Watching %s every %s. Other hosts: /probe?target=ssh:[user@]host[:port] (allowed: %s).", t, interval, allowed),
		Version:     bi.Version,
		Links: []LandingLink{
			{Address: c.TelemetryPath, Text: "Metrics", Description: "the watched host, the exporter's health and its process"},
		},
	}
	if discovery != nil {
		landing.Links = append(landing.Links, LandingLink{Address: SDPath, Text: "Service discovery", Description: "the inventory's targets for Prometheus' http_sd"})
	}
	site := &Site{Exporter: e, Prober: prober, Discovery: discovery, MetricsPath: c.TelemetryPath, MaxConnections: c.MaxConns, Landing: landing}
	go func() {
		// Run collects at once; the first round above already did, so wait one interval.
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
		e.Run(ctx)
	}()
	tlsAuth := "none"
	if c.WebConfig != "" {
		tlsAuth = c.WebConfig
	}
	for _, ln := range lns {
		log.Info("serving metrics", "address", ln.Addr(), "path", c.TelemetryPath, "target", t, "interval", interval, "tls_auth", tlsAuth)
	}
	return Serve(ctx, lns, site, c.WebConfig, log)
}
