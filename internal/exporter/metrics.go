package exporter

const ns = "wgperf"

func desc(name, help string, labels ...string) *Desc {
	return newDesc(ns+"_"+name, help, labels...)
}

// The exporter's own health, served with the host metrics (see selfMetrics
// and probeFamilies); the host metrics themselves come from collectors.
var (
	descCollectSuccess   = desc("collect_success", "1 if the latest collection of the host succeeded, 0 if it failed or none finished yet.")
	descCollectDuration  = desc("collect_duration_seconds", "How long the latest collection and checks took.")
	descCollectTimestamp = desc("collect_timestamp_seconds", "Unix time of the latest successful collection; host metrics describe that moment.")
	descCollections      = desc("collections_total", "Collections attempted since the exporter started.")
	descCollectFailures  = desc("collect_failures_total", "Collections that failed since the exporter started.")
	descCollectSeries    = desc("collect_series", "Host series the latest collection had; one more than --metrics.max-series when it failed for having more (counting stops there).")
)

// The exporter process itself, served at /metrics in every mode.
var (
	descBuildInfo = desc("build_info", "Which wgperf build runs: version, VCS revision and branch, build (commit) date, Go version, platform and build tags (always 1).",
		"version", "revision", "branch", "builddate", "goversion", "goos", "goarch", "tags")
	descProbes          = desc("probe_requests_total", "/probe requests, by how they were answered: cached (a collection younger than --probe.cache-ttl), collected, or refused (target not allowed or not valid).", "result")
	descProbeCacheSize  = desc("probe_cache_targets", "Targets the /probe cache remembers (at most --probe.cache-size); a collection is held while younger than --probe.cache-ttl and within --probe.cache-bytes.")
	descProbeCacheBytes = desc("probe_cache_bytes", "Bytes of metrics text the /probe cache holds for all its targets (at most --probe.cache-bytes).")
)

// ownDescs are the wgperf_ metrics gathered at a scrape rather than by a collector.
var ownDescs = []*Desc{
	descCollectSuccess, descCollectDuration, descCollectTimestamp, descCollections, descCollectFailures, descCollectSeries,
	descBuildInfo, descProbes, descProbeCacheSize, descProbeCacheBytes,
	descKernelDrops, descKernelDropsLost, descKernelDropsTier,
}

// allDescs are every wgperf_ metric the exporter can serve.
func allDescs() []*Desc {
	all := append([]*Desc(nil), ownDescs...)
	for _, c := range collectors {
		all = append(all, c.descs...)
	}
	return all
}

// peerLabels names peers and bounds their series: their endpoint labels'
// churn, and how many peers of an interface have series of their own.
type peerLabels struct {
	names PeerNames
	roam  *roamLimiter // per watched host; nil shows every address
	max   int          // peers per interface with series of their own; 0: every one (see exportedPeers)
}
