package scenario

import (
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/lab"
)

// laneEnv splits the root tests of this package for scripts/test.sh, which
// runs them beside other packages' lab tests: "shared" plays the scenarios
// that leave the host alone (they may run beside other labs), "host" those
// that change the initial namespace's sysctls (child namespaces mirror them,
// so nothing else may run meanwhile) and the interruption test that checks
// them; unset plays everything.
const laneEnv = "WGPERF_SCENARIO_LANE"

// skipInLane says why a scenario does not play in this lane ("" when it
// does). "topologies" plays the tunnels that are not pairs (a hub, a NAT, a
// clone), which leave the host alone too, in a stream of their own with a
// lab of their own: the shared lane leaves them to it.
func skipInLane(lane string, sc Scenario) string {
	changesHost := len(sc.HostSysctls) > 0
	switch {
	case lane == "kernel":
		return "the kernel lane plays the catalog in a guest (TestKernelCatalog)"
	case lane == "shared" && changesHost:
		return "it changes host sysctls: it plays in the host lane, alone"
	case lane == "shared" && notAPair(sc):
		return "a tunnel that is not a pair: it plays in the topologies lane"
	case lane == "topologies" && !notAPair(sc):
		return "a tunnel between two ends: it plays in the shared or host lane"
	case lane == "host" && !changesHost:
		return "it leaves the host alone: it plays in the shared lane"
	}
	return ""
}

// notAPair reports a scenario whose tunnel is not one pair of ends that hold
// each other's endpoint: through a hub, behind a NAT, or with a clone.
func notAPair(sc Scenario) bool {
	return len(sc.HostSysctls) == 0 && (sc.Lab.HubMbit > 0 || sc.Lab.NATTimeout > 0 || sc.Lab.CloneA)
}

// laneLab is the lab name a lane's scenarios use (the part of it a stream
// plays, shard): lanes and parts that play side by side must not share one.
func laneLab(lane string, part int) string {
	switch {
	case lane == "topologies":
		return "e2t"
	case part > 1:
		return "e2" + string(rune('a'+part-1))
	}
	return "e2e"
}

// shardEnv splits a lane further for scripts/test.sh: "K/N" plays every N-th
// of the lane's scenarios, from the K-th, so N streams play the lane side by
// side; unset plays all of it.
const shardEnv = "WGPERF_SCENARIO_SHARD"

// partsOf deals the lane's scenarios out to parts streams in catalog order,
// one each in turn: the part (from 1) that plays each.
func partsOf(lane string, parts int) map[string]int {
	partOf := map[string]int{}
	for _, sc := range Catalog {
		if skipInLane(lane, sc) == "" {
			partOf[sc.Name] = len(partOf)%parts + 1
		}
	}
	return partOf
}

// shard is this stream's part of its lane and how many parts there are.
func shard(t *testing.T) (part, parts int) {
	v := os.Getenv(shardEnv)
	if v == "" {
		return 1, 1
	}
	k, n, ok := strings.Cut(v, "/")
	part, err1 := strconv.Atoi(k)
	parts, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || parts < 1 || part < 1 || part > parts || parts > 9 {
		t.Fatalf("%s=%q: want K/N, 1 <= K <= N <= 9", shardEnv, v)
	}
	return part, parts
}

// The two lanes play every scenario exactly once between them, and the host
// lane holds exactly the scenarios that set host sysctls.
func TestLanesPartitionCatalog(t *testing.T) {
	host := 0
	for _, sc := range Catalog {
		inShared, inHost, inTopologies := skipInLane("shared", sc) == "", skipInLane("host", sc) == "", skipInLane("topologies", sc) == ""
		if n := btoi(inShared) + btoi(inHost) + btoi(inTopologies); n != 1 {
			t.Errorf("%s: shared lane %v, host lane %v, topologies lane %v: want exactly one", sc.Name, inShared, inHost, inTopologies)
		}
		if skipInLane("", sc) != "" {
			t.Errorf("%s skipped without a lane", sc.Name)
		}
		if inHost {
			host++
			if len(sc.HostSysctls) == 0 {
				t.Errorf("%s plays alone but leaves the host alone", sc.Name)
			}
		}
	}
	if host == 0 || host == len(Catalog) {
		t.Errorf("%d of %d scenarios in the host lane: the split saves nothing", host, len(Catalog))
	}
}

// The kernel lane plays cases that can happen on the module, the healthy one
// among them (a false alarm is a failure too), and stays a few minutes long.
func TestKernelLaneIsASmallPlayableSubset(t *testing.T) {
	names := kernelLaneScenarios()
	if len(names) == 0 || len(names) > 8 {
		t.Errorf("kernel lane plays %d scenarios (%v): want 1 to 8, about a minute each under QEMU's emulator", len(names), names)
	}
	if !slices.Contains(names, "healthy") {
		t.Error("the kernel lane must play the healthy scenario")
	}
	for _, sc := range Catalog {
		if why, ok := sc.NotOn[lab.Kernel]; ok && sc.KernelLane != "" {
			t.Errorf("%s is in the kernel lane but cannot happen on the module: %s", sc.Name, why)
		}
	}
}

// Two or three streams of the shared lane play each of its scenarios once,
// as many each as can be, and the two slowest (collapse-cycles and
// path-cycles, next to each other in the catalog) in different streams.
func TestPartsDealTheLane(t *testing.T) {
	one := partsOf("shared", 1)
	for _, parts := range []int{2, 3} {
		dealt := partsOf("shared", parts)
		if len(one) != len(dealt) {
			t.Fatalf("one part plays %d scenarios, %d parts %d", len(one), parts, len(dealt))
		}
		count := map[int]int{}
		for name, p := range dealt {
			if one[name] != 1 {
				t.Errorf("%s: in part %d of one", name, one[name])
			}
			count[p]++
		}
		if len(count) != parts || slices.Max(slices.Collect(maps.Values(count)))-slices.Min(slices.Collect(maps.Values(count))) > 1 {
			t.Errorf("%d parts play %v scenarios", parts, count)
		}
		if dealt["collapse-cycles"] == dealt["path-cycles"] {
			t.Errorf("%d parts: collapse-cycles and path-cycles both in part %d", parts, dealt["collapse-cycles"])
		}
	}
}
