package exporter

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/target"
)

// The fleet benchmarks (issue 54) scrape a lab fleet of ssh routers through
// /probe as a Prometheus would: each router once per interval, the scrapes
// spread evenly over it, with Prometheus' default 10 s scrape timeout.
// WGPERF_FLEET_BENCH is the fleet's size (unset: skipped; make bench-fleet
// sets it), WGPERF_FLEET_INTERVAL the interval (default 60s),
// WGPERF_FLEET_CONCURRENT the --probe.concurrency values (default 8,32). 5% of the
// routers are unreachable and 5% answer 3 s late.
//
// The exporter's CPU is this process's and its ssh processes' (the
// multiplexed clients and the masters, which leave the process tree when
// they background): all run in a cpuacct cgroup of their own, started after
// the fleet, so the routers' dropbears are not counted.

func fleetBenchSize(b *testing.B) int {
	n, err := strconv.Atoi(os.Getenv("WGPERF_FLEET_BENCH"))
	if err != nil || n < 1 {
		b.Skip("fleet benchmarks run with WGPERF_FLEET_BENCH=N (make bench-fleet)")
	}
	return n
}

func fleetBenchInterval(b *testing.B) time.Duration {
	if s := os.Getenv("WGPERF_FLEET_INTERVAL"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			b.Fatalf("WGPERF_FLEET_INTERVAL=%q: want a duration", s)
		}
		return d
	}
	return time.Minute
}

// cpuGroup moves this process into a cpuacct cgroup of its own and returns
// a reader of the CPU time (all its processes, also those gone) and of the
// pids in it; the process goes back and the cgroup is removed in Cleanup.
func cpuGroup(b *testing.B) (usage func() time.Duration, pids func() []int) {
	const root = "/sys/fs/cgroup/cpuacct"
	dir := filepath.Join(root, "wgperf-flt-bench")
	if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
		b.Skipf("no cpuacct cgroup to count the exporter's CPU in: %v", err)
	}
	self := []byte(strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), self, 0o644); err != nil {
		b.Skipf("cpuacct cgroup: %v", err)
	}
	b.Cleanup(func() {
		_ = os.WriteFile(filepath.Join(root, "cgroup.procs"), self, 0o644)
		target.CloseAll()
		for range 50 {
			if os.Remove(dir) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	usage = func() time.Duration {
		v, _ := os.ReadFile(filepath.Join(dir, "cpuacct.usage"))
		ns, _ := strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64)
		return time.Duration(ns)
	}
	pids = func() []int {
		v, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		var out []int
		for _, f := range strings.Fields(string(v)) {
			if p, err := strconv.Atoi(f); err == nil {
				out = append(out, p)
			}
		}
		return out
	}
	return usage, pids
}

// procKiB reads a /proc/PID file's "key: N kB" line.
func procKiB(pid int, file, key string) int {
	v, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), file))
	for _, line := range strings.Split(string(v), "\n") {
		if rest, ok := strings.CutPrefix(line, key+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return n
		}
	}
	return 0
}

func procComm(pid int) string {
	v, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
	return strings.TrimSpace(string(v))
}

// fleetRoundStats are one round's figures.
type fleetRoundStats struct {
	wall, cpu          time.Duration
	healthy            []time.Duration
	healthyOK          int
	deadMax, slowMax   time.Duration
	sshHeld, sshPssKiB int // peak: ssh processes in the cgroup, their proportional memory
	selfRSSKiB         int // peak
	heapMiB            float64
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// fleetRound scrapes every router once, spread over interval.
func fleetRound(b *testing.B, base string, f *lab.Fleet, interval time.Duration, usage func() time.Duration, pids func() []int) fleetRoundStats {
	dead, slow := map[int]bool{}, map[int]bool{}
	for _, i := range f.Dead {
		dead[i] = true
	}
	for _, i := range f.Slow {
		slow[i] = true
	}
	var st fleetRoundStats
	var mu sync.Mutex
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() { // peak ssh processes and memory, every second
		defer close(sampled)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			held, pss := 0, 0
			for _, p := range pids() {
				if procComm(p) == "ssh" {
					held++
					pss += procKiB(p, "smaps_rollup", "Pss")
				}
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			mu.Lock()
			st.sshHeld, st.sshPssKiB = max(st.sshHeld, held), max(st.sshPssKiB, pss)
			st.selfRSSKiB = max(st.selfRSSKiB, procKiB(os.Getpid(), "status", "VmRSS"))
			st.heapMiB = max(st.heapMiB, float64(ms.HeapInuse)/(1<<20))
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	cpu0, t0 := usage(), time.Now()
	gap := interval / time.Duration(len(f.Specs))
	var wg sync.WaitGroup
	for i, spec := range f.Specs {
		time.Sleep(time.Until(t0.Add(time.Duration(i) * gap)))
		wg.Add(1)
		go func(n int) {
			defer wg.Done()
			req, err := http.NewRequest(http.MethodGet, probeURL(base, spec), nil)
			if err != nil {
				b.Error(err)
				return
			}
			req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "10")
			start := time.Now()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Errorf("scrape %s: %v", spec, err)
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			took := time.Since(start)
			ok := resp.StatusCode == http.StatusOK && strings.Contains(string(body), "\nwgperf_collect_success 1\n")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case dead[n]:
				st.deadMax = max(st.deadMax, took)
			case slow[n]:
				st.slowMax = max(st.slowMax, took)
			default:
				st.healthy = append(st.healthy, took)
				if ok {
					st.healthyOK++
				}
			}
		}(i + 1)
	}
	wg.Wait()
	st.wall, st.cpu = time.Since(t0), usage()-cpu0
	close(stop)
	<-sampled
	return st
}

// BenchmarkProbeFleet is the central exporter on the lab's fleet: one op is
// one round over every router, each collection one remote shell
// (target.Shell). ssh-per-scrape is the exporter's default
// (--probe.ssh-persist 0): each collection its own ssh connection, closed
// when it ends; ssh-held shares each router's connection and keeps it up
// across scrapes (--probe.ssh-persist longer than the interval).
func BenchmarkProbeFleet(b *testing.B) {
	n := fleetBenchSize(b)
	interval := fleetBenchInterval(b)
	f := labtest.Fleet(b, lab.FleetConfig{Name: "fltbe", Count: n, DeadPct: 5, SlowPct: 5, SlowBy: 3 * time.Second})
	b.Logf("fleet: %d routers up in %.1f s (%d KiB each), %d unreachable, %d slow; interval %s", f.Count, f.Seconds, f.KiBa, len(f.Dead), len(f.Slow), interval)
	usage, pids := cpuGroup(b)
	concurrents := []int{DefaultProbeConcurrent, 32}
	if s := os.Getenv("WGPERF_FLEET_CONCURRENT"); s != "" {
		concurrents = nil
		for _, f := range strings.Split(s, ",") {
			c, err := strconv.Atoi(f)
			if err != nil || c < 1 {
				b.Fatalf("WGPERF_FLEET_CONCURRENT=%q: want numbers, e.g. 8,32", s)
			}
			concurrents = append(concurrents, c)
		}
	}
	type mode struct {
		name       string
		persist    time.Duration // 0: a connection per collection
		concurrent int
	}
	var modes []mode
	for _, c := range concurrents {
		modes = append(modes, mode{fmt.Sprintf("ssh-per-scrape/concurrency-%d", c), 0, c},
			mode{fmt.Sprintf("ssh-held/concurrency-%d", c), interval + 30*time.Second, c})
	}
	for _, mode := range modes {
		b.Run(mode.name, func(b *testing.B) {
			p := NewProber(ProbeOptions{Allow: []string{"ssh:root@10.200.0.0/16"}, CacheTTL: time.Millisecond, Concurrent: mode.concurrent,
				SSHPersist: mode.persist, CacheSize: len(f.Specs)})
			defer p.Close()
			base := testServer(b, &Site{Prober: p})
			var st fleetRoundStats
			for b.Loop() {
				st = fleetRound(b, base, f, interval, usage, pids)
			}
			scrapes := float64(len(f.Specs))
			b.ReportMetric(st.cpu.Seconds()*1000/scrapes, "cpu-ms/scrape")
			b.ReportMetric(st.cpu.Seconds()/st.wall.Seconds(), "cores")
			b.ReportMetric(float64(percentile(st.healthy, 0.5).Milliseconds()), "p50-ms")
			b.ReportMetric(float64(percentile(st.healthy, 0.99).Milliseconds()), "p99-ms")
			b.ReportMetric(100*float64(st.healthyOK)/float64(max(1, len(st.healthy))), "healthy-ok-%")
			b.ReportMetric(float64(st.deadMax.Milliseconds()), "dead-max-ms")
			b.ReportMetric(float64(st.slowMax.Milliseconds()), "slow-max-ms")
			b.ReportMetric(float64(st.sshHeld), "ssh-procs")
			b.ReportMetric(float64(st.sshPssKiB)/1024, "ssh-MiB")
			b.ReportMetric(float64(st.selfRSSKiB)/1024, "exporter-RSS-MiB")
			b.ReportMetric(st.heapMiB, "heap-MiB")
			b.Logf("%s, %d routers every %s: %.2f ms CPU a scrape (%.3f cores), healthy p50 %s p99 %s (%d/%d ok), dead %s, slow %s; peak %d ssh processes (%.0f MiB), exporter %.0f MiB RSS",
				mode.name, len(f.Specs), interval, st.cpu.Seconds()*1000/scrapes, st.cpu.Seconds()/st.wall.Seconds(),
				percentile(st.healthy, 0.5).Round(time.Millisecond), percentile(st.healthy, 0.99).Round(time.Millisecond),
				st.healthyOK, len(st.healthy), st.deadMax.Round(time.Millisecond), st.slowMax.Round(time.Millisecond),
				st.sshHeld, float64(st.sshPssKiB)/1024, float64(st.selfRSSKiB)/1024)
		})
	}
}
