package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wgperf/wgperf/internal/buildinfo"
	"github.com/wgperf/wgperf/internal/cli"
	"github.com/wgperf/wgperf/internal/exporter"
	"github.com/wgperf/wgperf/internal/fleet"
	"github.com/wgperf/wgperf/internal/target"
)

func exporterCmd() *cobra.Command {
	var (
		listenAddrs, listenAlias    []string
		host, webConfig             string
		telemetryPath               string
		systemdSocket, collectDrops bool
		logLevel, logFormat         string
		showVersion                 bool
		interval                    time.Duration
		peerNames                   []string
		probe                       exporter.ProbeOptions
		sd                          struct {
			sources []string
			limit   string
		}
		maxConns int
	)
	cmd := &cobra.Command{
		Use:   "exporter",
		Short: "Serve WireGuard, kernel counters and findings as Prometheus metrics",
		Long: `exporter collects one host every --interval in the background, runs the passive checks
on it, and serves the result at /metrics for Prometheus: per-peer handshake age,
bytes and endpoint; UDP buffer errors; softnet drops and time squeeze per CPU; TCP
retransmits; and every finding present now as wgperf_finding{id,severity,interface,peer} 1,
so a stale endpoint route or ICMP rate-limit drops raise an alert when they appear.
A scrape only writes out the latest results, so it stays cheap.

One wgperf can also watch many routers, blackbox-exporter style: Prometheus
scrapes /probe?target=ssh:root@router and the exporter collects that router over
ssh (the router needs no wgperf binary), caches the result for --probe.cache-ttl
so several scrapers share it, and answers within the scrape timeout. Only targets
matching a --probe.allow pattern are collected; see ` + kitDir + `prometheus/scrape.yml.
A pattern is matched on the parsed target, part by part: ssh:[USER@]HOST[:PORT],
where HOST is a name or address whose "*" stays within one dot-separated label
(ssh:root@10.0.0.* admits ssh:root@10.0.0.5, not ssh:root@10.0.0.5.evil.example)
or a prefix (ssh:root@10.0.0.0/24, ssh:[fd00::/64]); a user or port left out
admits any. netns:NAME and local match as written. A user containing "@" is refused.
At most --probe.concurrency collections work at once; one still running after a
quarter of its time (a router that does not answer, or answers slowly) gives its
slot up to one of 4 times as many waiting slots, so a dead router costs its own
scrape only, and one queued a quarter of its time for a working slot runs in a
waiting slot. Each collection is one ssh connection and one remote shell, closed
when it ends (--probe.ssh-persist keeps them for the next scrape instead). For a
fleet, the README's fleet section has the measured limits.

Started with --inventory (and --limit), the exporter also serves the inventory's
hosts at /sd for Prometheus' HTTP service discovery (http_sd_configs): the JSON
"wgperf inventory --prometheus" prints, one target group per host with the labels
wgperf_host, wgperf_group and wgperf_groups, listing only the targets --probe.allow
admits (an empty list is []). The inventory is read at start (an unreadable one
stops the exporter) and again at most every 15 s as Prometheus asks, so an edited
inventory reaches Prometheus at its next refresh; see the job wgperf-inventory-http
in ` + kitDir + `prometheus/scrape.yml. Without --inventory, /sd is not found.

Memory is bounded by what the exporter renders and holds, not only by what it
reads, so it stays within the packaged unit's MemoryMax=64M whatever a target
prints: a target (--host, or one /probe target) may have --metrics.max-series
series and --metrics.max-bytes of metrics text; a collection with more fails
(wgperf_collect_success 0, wgperf_collect_series one past the limit, one log
line naming the flag). The /probe cache holds --probe.cache-bytes of text for
all its targets, and drops a collection once it is older than --probe.cache-ttl.
Answers are written from the one rendered text, never copied per scrape; at most
--web.max-connections are served at once, each with a 128 KiB send buffer and
` + exporter.DefaultWriteTimeout.String() + ` to take its answer.

--peer-names reads friendly peer names from wg-quick configs ("# Name = laptop"
in a [Peer] section), OpenWrt's /etc/config/network (peer descriptions) or
"PUBLICKEY NAME" lines, for the name label of wgperf_wireguard_peer_info.

A hub's peers are bounded: an interface with more peers than --collector.peers.max
(default 200; each peer makes 7 series) gives series of their own to that many,
named peers first, then those with a live session, in the dump's order;
wgperf_wireguard_peers_without_series{interface} counts the rest, and its stale
peers are one wg.handshake-stale finding. --collector.peers.max 0 exports every peer.

The web and log flags are node_exporter's (exporter-toolkit's), so roles and
modules that template them work unchanged: --web.listen-address (repeatable;
--listen is the same flag), --web.telemetry-path, --web.systemd-socket (listen on
the sockets of a systemd .socket unit), --web.config.file, --log.level,
--log.format; --version prints the build. The default port, 9723, is free in
Prometheus' list of default port allocations (9586, used before, belongs to the
WireGuard exporters). The packages listen on 127.0.0.1 only.

` + webConfigHelp + `

The monitoring kit: alert rules (` + kitDir + `prometheus/alerts.yml; each alert's
runbook_url is its page), the scrape jobs they expect (` + kitDir + `prometheus/scrape.yml)
and a Grafana dashboard (` + kitDir + `grafana/wgperf.json), installed by the .deb
and .rpm, and in the release archives' deploy/ folder beside the systemd unit and
the OpenWrt init script.`,
		Example: `  wgperf exporter --web.listen-address 127.0.0.1:9723
  wgperf exporter --web.listen-address 127.0.0.1:9723 --host ssh:root@golem --interval 1m
  wgperf exporter --probe.allow 'ssh:root@10.0.0.0/24' --peer-names /etc/wireguard/wg0.conf
  wgperf exporter --probe.allow 'ssh:root@*' --inventory /etc/ansible/hosts --limit routers
  wgperf exporter --web.listen-address :9723 --web.config.file /etc/wgperf/web-config.yml
  wgperf exporter --web.systemd-socket --log.format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if showVersion {
				fmt.Fprintln(cmd.OutOrStdout(), buildinfo.Read(version).Print("wgperf exporter"))
				return nil
			}
			logger, err := exporter.NewLogger(os.Stderr, logLevel, logFormat)
			if err != nil {
				return couldNotRun(err)
			}
			if sd.limit != "" && len(sd.sources) == 0 {
				sd.sources = fleet.AnsibleInventory()
			}
			// --listen is --web.listen-address's older name; both may be given.
			addrs := append(append([]string{}, listenAddrs...), listenAlias...)
			if !cmd.Flags().Changed("web.listen-address") && len(listenAlias) > 0 {
				addrs = listenAlias
			}
			return exporter.RunCommand(cmd.Context(), exporter.Command{Host: host, Addrs: addrs, SystemdSocket: systemdSocket, TelemetryPath: telemetryPath,
				WebConfig: webConfig, Log: logger, Drops: collectDrops, Inventory: sd.sources, Limit: sd.limit, MaxConns: maxConns, Interval: interval,
				Probe: probe, PeerNames: peerNames, Version: version, ExposedHint: exposedHint})
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&listenAddrs, "web.listen-address", []string{":9723"}, "address to serve the metrics and /probe on (repeatable)")
	f.StringArrayVar(&listenAlias, "listen", nil, "the same as --web.listen-address")
	f.StringVar(&telemetryPath, "web.telemetry-path", "/metrics", "path of the exporter's own host metrics")
	f.BoolVar(&collectDrops, "collector.drops", false, "also export the kernel's drops of --host by reason (wgperf_kernel_drops_total{reason}; a BPF program on skb:kfree_skb, see wgperf drops)")
	f.BoolVar(&systemdSocket, "web.systemd-socket", false, "serve on the sockets systemd passes in (socket activation) instead of --web.listen-address")
	cli.EnumFlag(f, &logLevel, "log.level", "info", exporter.LogLevels, "lowest level logged: "+strings.Join(exporter.LogLevels, ", "))
	cli.EnumFlag(f, &logFormat, "log.format", "logfmt", exporter.LogFormats, "log line format: "+strings.Join(exporter.LogFormats, ", "))
	f.BoolVar(&showVersion, "version", false, "print the build (version, revision, build date, Go version, platform, tags) and exit")
	f.StringVar(&host, "host", "local", target.FlagHelp("target to watch"))
	f.DurationVar(&interval, "interval", exporter.DefaultInterval, "how often to collect the host and run the checks")
	f.StringVar(&webConfig, "web.config.file", "", webConfigFlagHelp)
	f.IntVar(&probe.MaxPeers, "collector.peers.max", exporter.DefaultMaxPeers, "most peers of one interface with series of their own (named, then live ones first; 0: every peer), for /metrics and /probe alike")
	f.StringArrayVar(&peerNames, "peer-names", nil, "file of peer names: a wg-quick config with \"# Name =\" comments, OpenWrt's /etc/config/network, or \"PUBLICKEY NAME\" lines (repeatable)")
	f.StringArrayVar(&probe.Allow, "probe.allow", nil, "target pattern /probe?target= may collect: ssh:[user@]host[:port], host a glob per label (numbers: IPv4 addresses only) or a prefix, e.g. 'ssh:root@10.0.0.*', 'ssh:root@10.0.0.0/24' (repeatable; none: /probe refuses all)")
	f.DurationVar(&probe.Timeout, "probe.timeout", exporter.DefaultProbeTimeout, "longest collection of one /probe target (Prometheus' scrape timeout lowers it, to 1s at least)")
	f.DurationVar(&probe.CacheTTL, "probe.cache-ttl", exporter.DefaultProbeCacheTTL, "how long one collection answers /probe scrapes of its target")
	inventoryFlags(f, &sd.sources, &sd.limit, "serve this inventory's hosts at /sd as Prometheus http_sd targets of /probe: "+inventoryFlagHelp,
		"serve at /sd only the --inventory hosts this Ansible pattern selects: "+limitSyntax)
	f.IntVar(&probe.Concurrent, "probe.concurrency", exporter.DefaultProbeConcurrent, "most /probe collections working at once (each an ssh connection: about 1.2 MiB beside the exporter); one waiting on a dead or slow router frees its slot after a quarter of its time, and one queued that long runs, in up to 4 times as many waiting slots")
	f.DurationVar(&probe.SSHPersist, "probe.ssh-persist", 0, "keep each ssh target's connection this long after its collection, for the next scrape (one ssh process of about 1.2 MiB per target held, at most --probe.cache-size); 0: one connection per collection, closed when it ends")
	f.IntVar(&probe.CacheSize, "probe.cache-size", exporter.DefaultProbeCacheSize, "most /probe targets cached; the least recently scraped is dropped first")
	f.IntVar(&probe.CacheBytes, "probe.cache-bytes", exporter.DefaultProbeCacheBytes, "most bytes of metrics text the /probe cache holds for all its targets; the least recently scraped targets' collections go first, and one older than --probe.cache-ttl at once")
	f.IntVar(&probe.Limits.Series, "metrics.max-series", exporter.DefaultMaxSeries, "most series one target (--host, or a /probe target) may have; a collection with more fails (wgperf_collect_success 0) rather than filling the exporter's memory")
	f.IntVar(&probe.Limits.Bytes, "metrics.max-bytes", exporter.DefaultMaxBytes, "most bytes of metrics text one target may render; a collection with more fails")
	f.IntVar(&maxConns, "web.max-connections", exporter.DefaultMaxConnections, fmt.Sprintf("most connections served at once (more wait until one closes); each client has %s to take its answer", exporter.DefaultWriteTimeout))
	return cmd
}

// Where the .deb and .rpm install the monitoring kit (alert rules, scrape
// jobs, Grafana dashboard; .goreleaser.yaml) and the example web config.
const (
	kitDir = "/usr/share/wgperf/"
	docDir = "/usr/share/doc/wgperf/"
)

// The exporter's TLS and basic auth (--web.config.file) are in the full build
// only; the router build says so where the option is described.
var webConfigHelp, webConfigFlagHelp, exposedHint = func() (string, string, string) {
	if exporter.WebConfig {
		return `--web.config.file takes the web configuration file of the official Prometheus
exporters (TLS certificate, basic auth users with bcrypt hashes); the metrics
name peers' public keys, endpoints and allowed IPs, so use it (or listen on
127.0.0.1) anywhere the port is reachable. An example: ` + docDir + `web-config.yml.`,
			"web configuration file for TLS and basic auth (Prometheus exporter-toolkit format)",
			"see --web.config.file"
	}
	return `This is the router build: it serves plain HTTP only, and --web.config.file
(TLS and basic auth) is refused. The metrics name peers' public keys, endpoints
and allowed IPs, so listen on 127.0.0.1 or a LAN address the firewall keeps in,
or let a full build elsewhere scrape this router through /probe?target=ssh:root@ROUTER
(the router then needs no wgperf binary at all).`,
		"not in the router build, which serves plain HTTP only (TLS and basic auth need a full build)",
		"the router build has no TLS: listen on 127.0.0.1 or a LAN address"
}()
