#!/bin/sh
# Runs every test package in lanes, in three phases.
#
# Phase 1, side by side:
#   - the lab tests in seven streams (below), the packages of a stream one
#     at a time (-p 1); each lab is sized to what this machine carries when
#     it starts, and held at most 50 Mbit/s (WGPERF_LAB_HOLD_MBIT: the
#     streams that start after a lab was sized take the CPU its wireguard-go
#     ends need; sized at 200 on a still idle machine, a healthy lab carried
#     0.88 once three more streams ran), and the lab's nodes run ahead of
#     other jobs, so they hold their verdicts beside the other lab tests
#     (they mostly wait on shaped links);
#   - at the lowest CPU priority, the work that needs only CPU: goreleaser's
#     install (scripts/goreleaser.sh, a build from source on a fresh machine),
#     the release packaging test (its cross-builds), the router build test
#     (TestRouterBuild, taken out of the packages' stream), the fuzz targets
#     (scripts/fuzz.sh), then make lint (gofmt, go vet and staticcheck, both
#     builds: not first, where it held every lane up by about a minute, nor
#     ahead of the fuzz targets, which it pushed into the kernel lane, where a
#     starved fuzz worker trips Go's hang detection; lint has no such clock).
#     The lab's WireGuard nodes run in sessions of their own
#     (setsid), and with the kernel's autogroup scheduling a task's nice only
#     counts inside its session, so this lane gets a session too, niced as a
#     whole (/proc/self/autogroup), and nice 19 where there is no autogroup.
# Phase 2, side by side:
#   - the host lane: what changes the initial namespace's sysctls (child
#     namespaces mirror them, so no other lab on the machine may run
#     meanwhile): the scenarios that need host values
#     (WGPERF_SCENARIO_LANE=host) and the diagnose package's conntrack and
#     congestion-control tests;
#   - the kernel lane's tests that judge no throughput, in a guest kernel
#     with sysctls of its own (the host lane's changes never reach it): a
#     guest booted under QEMU must die with the wgperf that started it
#     (TestKernelGuestDiesWithWgperf), and fixes called persistent must
#     outlast a replay of the boot (TestKernelFixesOutlastBoot), and fixes of
#     the machine's own values (the conntrack hash, dev_weight) roll back to
#     what their plan read (TestKernelGlobalFixesRollBack, 55 s). Played so
#     here (2 cores, guest under TCG, other builds running): host lane 235 s,
#     guest tests 163 s, both green, against about 176 + 140 s one after
#     the other.
# Phase 3, alone: doctor's verdict with kernel WireGuard on the scenarios
# whose KernelLane says why the module or the guest's kernel changes the
# case (TestKernelCatalog, about a minute each under QEMU's emulator), and
# the fix too where KernelFix says so (the bond's hash: the bonding driver
# is the guest's only); the whole catalog with its fixes is make
# test-kernel. A fresh guest: in one shared with the boot proof and the
# global fixes (their changes put back), healthy carried 0.83 alone. It judges throughput in an emulated guest, so
# nothing runs beside it, the builds neither (they are waited for first):
# played beside the host lane (and builds), healthy carried 0.69 of the
# underlay through the module and failed, where alone it carried 0.93 to
# 0.96 in every run on record; and two guests of one CPU each, half the
# catalog each, side by side: healthy 0.74, the guest's CPU 95% busy.
#
# Each lane's go test speaks JSON to scripts/testlog, which prints what go
# test would and keeps each test's time: the run ends with its slowest tests.
#
# Usage: scripts/test.sh [fuzz inputs per target]
set -u
start=$(date +%s)
export WGPERF_LAB_HOLD_MBIT=50
tools=$(mktemp -d)
go build -o "$tools/testlog" ./scripts/testlog || exit 2
times=$tools/times
testlog="$tools/testlog -times $times"

# stamp names a phase and when it starts, so a slow suite shows where its time goes.
stamp() { echo "--- $1 (at $(($(date +%s) - start)) s)"; }
log=$(mktemp)
kernel_log=$(mktemp)
# the background streams' logs, one each, shown when phase 1 ends
streams_logs=$(mktemp -d)
# every lane's output, kept so the failures can be repeated at the very end,
# where a log cut to its head and tail still shows them
all=$(mktemp)
beside=
streams=
kernel=
trap '[ -n "$beside" ] && kill -- "-$beside" 2>/dev/null; for p in $streams $kernel; do kill "$p" 2>/dev/null; done; rm -rf "$log" "$streams_logs" "$kernel_log" "$all" "$tools"' EXIT
trap 'exit 130' INT TERM
# The tests of the packages' stream that only build (the router builds, a
# mipsle one among them: about 90 s there, under load), after the release
# packaging test, whose goreleaser cross-builds include the router build for
# mipsle (with the same gcflags: TestRouterFlagsAgree), so Go's build cache
# may hold much of it.
cpuOnly='^TestRouterBuild$'
setsid -w sh -c '
	echo 19 2>/dev/null >/proc/self/autogroup
	exec nice -n 19 sh -c "./scripts/goreleaser.sh &&
		go test -count=1 -timeout 45m ./packaging &&
		go test -count=1 -timeout 20m -run \"\$2\" ./cmd/wgperf &&
		./scripts/fuzz.sh \"\$1\" &&
		make --no-print-directory lint; st=\$?; echo \"--- beside: done (at \$((\$(date +%s) - \$3)) s)\"; exit \$st" - "$1" "$2" "$3"' - "${1:-20000}" "$cpuOnly" "$start" >"$log" 2>&1 &
beside=$!

alone='/internal/scenario$|/internal/diagnose$'
# Phase 1's lab tests play in seven streams. In two (ci run on cec6e70)
# they took 1,006 and 1,034 s, the machine 41-91% idle once the builds beside
# were done: the lab tests mostly wait on shaped links. In four, held at 50
# Mbit/s (bd1e099): 524, 537, 556 and 594 s, each about half of what it took
# in two. In seven (d471de1): 289 to 396 s, the machine 0-10% idle, the
# builds beside done at 566 s. The streams: cmd/wgperf and targets (shown as they run); doctor,
# then a few packages' short lab tests; the other packages; the tunnels that
# are not pairs (a hub, a NAT, a clone: about 210 s, lab "e2t"), then a few
# more short ones; and the shared scenarios in three parts (labs "e2e",
# "e2b", "e2c", WGPERF_SCENARIO_SHARD). Lab names differ between packages,
# so any two may run side by side.
first='/cmd/wgperf$|/internal/target$'
late1='/internal/doctor$|/internal/probe/udppath$|/internal/probe/iperf$|/internal/probe/mtu$'
late2='/internal/lab$|/internal/lab/guest$|/internal/probe/icmpburst$'
packages() { go list ./... | grep "$@"; }
# stream runs a background stream of go test runs, one after another (each
# run one string, evaluated in the stream), its output in a log of its own;
# it says when it is done, and fails when any run failed.
stream() {
	name=$1
	shift
	(
		st=0
		for run in "$@"; do
			eval "$run" || st=1
		done
		echo "--- $name: done (at $(($(date +%s) - start)) s)"
		exit $st
	) >"$streams_logs/$(($(echo $streams | wc -w) + 1))" 2>&1 &
	streams="$streams $!"
}
gotest='$testlog go test -json -count=1'
scenarios='-timeout 25m -run "^TestScenarios\$" ./internal/scenario'
stream "doctor and short lab tests" "$gotest -p 1 -timeout 15m \$(packages -E '$late1')"
stream "the other packages" "$gotest -p 1 -timeout 15m \$(packages -v -E '/packaging\$|$alone|$first|$late1|$late2')"
stream "the tunnels that are not pairs, and short lab tests" \
	"WGPERF_SCENARIO_LANE=topologies $gotest $scenarios" \
	"$gotest -p 1 -timeout 15m \$(packages -E '$late2')"
# The first part runs the package's other tests too.
stream "the shared scenarios, part 1" "WGPERF_SCENARIO_LANE=shared WGPERF_SCENARIO_SHARD=1/3 $gotest -timeout 25m ./internal/scenario"
stream "the shared scenarios, part 2" "WGPERF_SCENARIO_LANE=shared WGPERF_SCENARIO_SHARD=2/3 $gotest $scenarios"
stream "the shared scenarios, part 3" "WGPERF_SCENARIO_LANE=shared WGPERF_SCENARIO_SHARD=3/3 $gotest $scenarios"
# keep runs a lane with its output shown and kept in $all; its status is in $status.
keep() {
	st=$(mktemp)
	{ "$@"; echo $? >"$st"; } 2>&1 | tee -a "$all"
	status=$(cat "$st")
	rm -f "$st"
}
keep $testlog go test -json -count=1 -p 1 -timeout 15m -skip "$cpuOnly" $(packages -E "$first")
tests=$status
stamp "cmd/wgperf and targets done; waiting for the other streams"
for p in $streams; do
	wait "$p" || tests=1
done
streams=
for f in "$streams_logs"/*; do tee -a "$all" <"$f"; done

stamp "side by side: the tests that change host sysctls, and the guest's kill test and boot proof (lab vm)"
# The kernel lane's own deadlines (the boot proof's 8 min, the catalog's 30)
# come first, with the guest's last output; Go's timeout is only a backstop.
WGPERF_SCENARIO_LANE=kernel $testlog go test -json -count=1 -timeout 15m -run '^(TestKernelGuestDiesWithWgperf|TestKernelFixesOutlastBoot|TestKernelGlobalFixesRollBack)$' ./internal/scenario >"$kernel_log" 2>&1 &
kernel=$!
keep env WGPERF_SCENARIO_LANE=host $testlog go test -json -count=1 -p 1 -timeout 15m ./internal/scenario ./internal/diagnose
aloneStatus=$status
wait "$kernel"
guestStatus=$?
kernel=
tee -a "$all" <"$kernel_log"

# Nothing runs beside the kernel catalog, the builds neither.
wait "$beside"
besideStatus=$?
beside=
stamp "kernel: doctor's verdict on the kernel lane's scenarios with kernel WireGuard, in a guest kernel (lab vm), alone"
# -v: a green run's log shows each verdict too, and whether a guest hung.
keep env WGPERF_SCENARIO_LANE=kernel go test -count=1 -v -timeout 40m -run '^TestKernelCatalog$' ./internal/scenario
kernelStatus=$status

tee -a "$all" <"$log"
stamp "done"
# The kernel catalog's verdicts, then every failure, once more.
grep -E -- 'kernel_test.go:[0-9]+: .*(WireGuard, underlay|the guest hung|guest: Linux)|--- FAIL|^FAIL|failed: |panic: ' "$all" | cut -c1-600
[ "$besideStatus" -eq 0 ] || echo "packaging, fuzz or lint: failed (above)" >&2
echo "--- the slowest tests and scenarios (seconds; the kernel catalog's are in its verdicts above)"
sort -rn "$times" | head -n 30
echo "suite: $(($(date +%s) - start)) s"
[ "$tests" -eq 0 ] && [ "$aloneStatus" -eq 0 ] && [ "$guestStatus" -eq 0 ] && [ "$kernelStatus" -eq 0 ] && [ "$besideStatus" -eq 0 ]
