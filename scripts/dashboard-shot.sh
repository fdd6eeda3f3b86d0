#!/bin/sh
# dashboard-shot.sh: the README's picture of the Grafana dashboard, without
# Grafana. It builds a lab (wgperf lab up --name dash), starts the exporter
# for the lab's two sites on loopback (/probe?target=netns:wgl-dash-a and -b,
# as deploy/prometheus/scrape.yml's probe job does) and a real Prometheus
# (the server scripts/deps.sh test unpacks from Debian's package) scraping
# it, runs wgperf bench between the sites a few times while Prometheus
# scrapes, then renders deploy/grafana/wgperf.json's panels from
# Prometheus' answers to the panels' own queries with wgperf's chart renderer
# (scripts/dashboard) and screenshots the page with headless chromium. It
# takes about 5.5 minutes, most of it the scraping.
#
#   sudo scripts/dashboard-shot.sh [OUT.png]      (default docs/dashboard.png;
#        MINUTES=5 of scraping, WGPERF=bin/wgperf, PROMETHEUS=prometheus)
set -eu
out=${1:-docs/dashboard.png}
minutes=${MINUTES:-5}
wgperf=${WGPERF:-bin/wgperf}
go=${GO:-go}
name=dash
if [ "$(id -u)" -ne 0 ]; then
	echo "dashboard-shot.sh needs root for the lab's network namespaces: sudo scripts/dashboard-shot.sh" >&2
	exit 1
fi
prometheus=${PROMETHEUS:-$(command -v prometheus || echo /usr/local/bin/prometheus)}
[ -x "$prometheus" ] || { echo "no Prometheus server: scripts/deps.sh test unpacks it" >&2; exit 1; }
command -v chromium >/dev/null || { echo "no chromium: scripts/deps.sh test installs it" >&2; exit 1; }

start=$(date +%s)
dir=$(mktemp -d /tmp/wgperf-dashboard.XXXXXX)
exporter_pid= drops_pid= prometheus_pid= lab=
cleanup() {
	[ -z "$prometheus_pid" ] || { kill "$prometheus_pid" 2>/dev/null || :; wait "$prometheus_pid" 2>/dev/null || :; }
	for pid in $exporter_pid $drops_pid; do
		kill "$pid" 2>/dev/null || :
		wait "$pid" 2>/dev/null || :
	done
	[ -z "$lab" ] || "$wgperf" lab down --name "$name" >/dev/null || :
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The renderer first: a compile error should not cost a lab.
nice -n 19 "$go" build -o "$dir/dashboard" ./scripts/dashboard

# A free port of loopback each, as the root tests pick them.
port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
exporter_addr=127.0.0.1:$(port)
prometheus_addr=127.0.0.1:$(port)
drops_addr=127.0.0.1:$(port)

lab=up
"$wgperf" lab up --name "$name" --progress never >/dev/null
a=netns:wgl-$name-a
b=netns:wgl-$name-b

# A collection answers scrapes for 5 s, so every 10 s scrape sees a new one.
"$wgperf" exporter --web.listen-address "$exporter_addr" --probe.allow "netns:wgl-$name-*" \
	--interval 1h --probe.cache-ttl 5s >"$dir/exporter.log" 2>&1 &
exporter_pid=$!
# Kernel drops by reason come only from an exporter watching one host
# (--collector.drops): one for B, of which Prometheus keeps just those series.
"$wgperf" exporter --web.listen-address "$drops_addr" --host "$b" --collector.drops \
	--interval 10s >"$dir/exporter-drops.log" 2>&1 &
drops_pid=$!
cat >"$dir/prometheus.yml" <<YAML
global:
  scrape_interval: 10s
  scrape_timeout: 10s
scrape_configs:
  - job_name: wgperf-probe
    metrics_path: /probe
    static_configs:
      - targets: ["$a", "$b"]
    relabel_configs:
      - source_labels: [__address__]
        target_label: __param_target
      - source_labels: [__param_target]
        target_label: instance
      - target_label: __address__
        replacement: $exporter_addr
  - job_name: wgperf-drops
    static_configs:
      - targets: ["$drops_addr"]
        labels: {instance: "$b"}
    metric_relabel_configs:
      - source_labels: [__name__]
        regex: wgperf_kernel_drops_total
        action: keep
YAML
"$prometheus" --config.file "$dir/prometheus.yml" --storage.tsdb.path "$dir/data" \
	--web.listen-address "$prometheus_addr" >"$dir/prometheus.log" 2>&1 &
prometheus_pid=$!

# Traffic while Prometheus scrapes: a short bench both ways, then a pause,
# so the throughput panel shows bursts against quiet.
scrape_start=$(date +%s)
until=$((scrape_start + minutes * 60))
while [ "$(date +%s)" -lt "$until" ]; do
	sleep 30
	[ "$(date +%s)" -lt "$((until - 20))" ] || break
	"$wgperf" bench --client "$a" --server "$b" --quick --progress never >/dev/null || :
done
sleep $((until - $(date +%s) > 0 ? until - $(date +%s) : 0))
curl -fsS "http://$prometheus_addr/api/v1/targets" >"$dir/targets.json" || :

span=$(($(date +%s) - scrape_start))
size=$("$dir/dashboard" --prometheus "http://$prometheus_addr" --range "${span}s" \
	--rate-interval 40s --out "$dir/dashboard.html") || {
	echo "the renderer failed; Prometheus' targets: $(cat "$dir/targets.json")" >&2
	exit 1
}
chromium --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
	--user-data-dir="$dir/profile" --window-size="$size" --screenshot="$dir/dashboard.png" \
	"file://$dir/dashboard.html" >/dev/null 2>&1
# 256 colours: a third of the full-colour screenshot's size, for the README.
"$dir/dashboard" --shrink "$dir/dashboard.png"
mkdir -p "$(dirname "$out")"
cp "$dir/dashboard.png" "$out"
echo "$out: $(wc -c <"$out") bytes, ${size} px, $(($(date +%s) - start)) s"
