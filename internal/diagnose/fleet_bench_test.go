package diagnose

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/target"
)

// BenchmarkDiagnoseFleet is "wgperf diagnose --inventory" over the lab's
// fleet of ssh routers (issue 54), 5% of them unreachable and 5% slow to
// answer wg, at the default --concurrency and at 32: wall time, hosts a
// second, peak memory. WGPERF_FLEET_BENCH is the fleet's size (unset:
// skipped; make bench-fleet sets it), WGPERF_FLEET_CONCURRENT the
// --concurrency values (default 8,32).
func BenchmarkDiagnoseFleet(b *testing.B) {
	n, err := strconv.Atoi(os.Getenv("WGPERF_FLEET_BENCH"))
	if err != nil || n < 1 {
		b.Skip("fleet benchmarks run with WGPERF_FLEET_BENCH=N (make bench-fleet)")
	}
	f := labtest.Fleet(b, lab.FleetConfig{Name: "fltbd", Count: n, DeadPct: 5, SlowPct: 5, SlowBy: 3 * time.Second})
	concurrents := []int{8, 32}
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
	for _, conc := range concurrents {
		b.Run("concurrency-"+strconv.Itoa(conc), func(b *testing.B) {
			var fl *Fleet
			var took time.Duration
			stop := sampleMemory()
			for b.Loop() {
				target.CloseAll() // each run connects anew, as a cron job's would
				start := time.Now()
				var err error
				fl, err = RunInventory(context.Background(), []string{f.Inventory}, nil, nil, Options{Concurrency: conc, HostTimeout: 30 * time.Second, Limit: "fleet",
					SSH: target.SSHConns{Own: true}}) // as the diagnose command does
				if err != nil {
					b.Fatal(err)
				}
				took = time.Since(start)
			}
			heap, rss := stop()
			hosts := len(fl.Hosts)
			b.ReportMetric(took.Seconds(), "wall-s")
			b.ReportMetric(float64(hosts)/took.Seconds(), "hosts/s")
			b.ReportMetric(float64(len(fl.Unreachable)), "unreachable")
			b.ReportMetric(heap, "peak-heap-MiB")
			b.ReportMetric(rss, "peak-RSS-MiB")
			b.Logf("diagnose --inventory, %d routers (%d unreachable, %d slow), --concurrency %d: %.1f s, %d diagnosed, %d unreachable, peak heap %.0f MiB, RSS %.0f MiB",
				f.Count, len(f.Dead), len(f.Slow), conc, took.Seconds(), hosts, len(fl.Unreachable), heap, rss)
		})
	}
}

// sampleMemory samples the Go heap and the process's RSS every 200 ms;
// stop returns their peaks in MiB.
func sampleMemory() (stop func() (heapMiB, rssMiB float64)) {
	done := make(chan struct{})
	var heap, rss float64
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			heap = max(heap, float64(ms.HeapInuse)/(1<<20))
			rss = max(rss, float64(statusKiB("VmRSS"))/1024)
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() (float64, float64) { close(done); <-finished; return heap, rss }
}

func statusKiB(key string) int {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, key+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return n
		}
	}
	return 0
}
