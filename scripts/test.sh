#!/bin/sh
# Runs every test package in lanes, in three phases.
#
# Phase 1, side by side:
#   - the lab tests in four streams (below: $first, the other packages and
#     the topologies, and the scenarios that leave the host alone,
#     WGPERF_SCENARIO_LANE=shared, in two halves): the packages of a stream
#     one at a time (-p 1); each lab is sized to what this machine carries
#     when it starts, and held at most 50 Mbit/s (WGPERF_LAB_HOLD_MBIT: the
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
# nothing runs beside it: played beside the host lane (and builds), healthy
# carried 0.69 of the underlay through the module and failed, where alone it
# carried 0.93 to 0.96 in every run on record.
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
shared_log=$(mktemp)
shared2_log=$(mktemp)
packages_log=$(mktemp)
kernel_log=$(mktemp)
# every lane's output, kept so the failures can be repeated at the very end,
# where a log cut to its head and tail still shows them
all=$(mktemp)
beside=
shared=
shared2=
packages=
kernel=
trap '[ -n "$beside" ] && kill -- "-$beside" 2>/dev/null; for p in $shared $shared2 $packages $kernel; do kill "$p" 2>/dev/null; done; rm -rf "$log" "$shared_log" "$shared2_log" "$packages_log" "$kernel_log" "$all" "$tools"' EXIT
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
		make --no-print-directory lint" - "$1" "$2"' - "${1:-20000}" "$cpuOnly" >"$log" 2>&1 &
beside=$!

alone='/internal/scenario$|/internal/diagnose$'
# Phase 1's lab tests play in four streams (ci run on cec6e70, two streams:
# 1,006 and 1,034 s, the machine 41-91% idle once the builds beside were
# done: the lab tests mostly wait on shaped links; on e1c35f1, four: 515,
# 538, 558 and 611 s, the machine busy throughout, no scenario played
# twice): cmd/wgperf, doctor, the exporter, targets and collect (shown as
# they run); the other packages, then the tunnels that are not pairs (a hub,
# a NAT, a clone: about 190 s, lab "e2t"); and the shared scenarios in two
# halves (labs "e2e" and "e2b"), each followed by a few packages' short lab
# tests. Lab names differ between packages, so any two may run side by side.
first='/cmd/wgperf$|/internal/doctor$|/internal/exporter$|/internal/target$|/internal/collect$'
late1='/internal/probe/udppath$|/internal/probe/iperf$|/internal/probe/mtu$'
late2='/internal/lab$|/internal/lab/guest$|/internal/probe/icmpburst$'
# Each background stream is two go test runs; $1 names what it is, $2 the
# packages it plays after its scenarios or before its topologies.
sh -c 'WGPERF_SCENARIO_LANE=shared WGPERF_SCENARIO_SHARD=1/2 $3 go test -json -count=1 -timeout 25m ./internal/scenario; a=$?
	$3 go test -json -count=1 -p 1 -timeout 15m $(go list ./... | grep -E "$2"); b=$?
	echo "--- $1 done (at $(($(date +%s) - $4)) s)"
	[ "$a" -eq 0 ] && [ "$b" -eq 0 ]' - "the scenarios' first half" "$late1" "$testlog" "$start" >"$shared_log" 2>&1 &
shared=$!
sh -c 'WGPERF_SCENARIO_LANE=shared WGPERF_SCENARIO_SHARD=2/2 $3 go test -json -count=1 -timeout 25m -run "^TestScenarios\$" ./internal/scenario; a=$?
	$3 go test -json -count=1 -p 1 -timeout 15m $(go list ./... | grep -E "$2"); b=$?
	echo "--- $1 done (at $(($(date +%s) - $4)) s)"
	[ "$a" -eq 0 ] && [ "$b" -eq 0 ]' - "the scenarios' second half" "$late2" "$testlog" "$start" >"$shared2_log" 2>&1 &
shared2=$!
sh -c '$3 go test -json -count=1 -p 1 -timeout 15m $(go list ./... | grep -v -E "$2"); a=$?
	WGPERF_SCENARIO_LANE=topologies $3 go test -json -count=1 -timeout 20m -run "^TestScenarios\$" ./internal/scenario; b=$?
	echo "--- $1 done (at $(($(date +%s) - $4)) s)"
	[ "$a" -eq 0 ] && [ "$b" -eq 0 ]' - "the other packages and the topologies" "/packaging\$|$alone|$first|$late1|$late2" "$testlog" "$start" >"$packages_log" 2>&1 &
packages=$!
# keep runs a lane with its output shown and kept in $all; its status is in $status.
keep() {
	st=$(mktemp)
	{ "$@"; echo $? >"$st"; } 2>&1 | tee -a "$all"
	status=$(cat "$st")
	rm -f "$st"
}
keep $testlog go test -json -count=1 -p 1 -timeout 15m -skip "$cpuOnly" $(go list ./... | grep -E "$first")
tests=$status
stamp "cmd/wgperf, doctor, the exporter, targets and collect done; waiting for the other streams"
wait "$packages" || tests=1
packages=
wait "$shared"
sharedStatus=$?
shared=
wait "$shared2" || sharedStatus=1
shared2=
for f in "$packages_log" "$shared_log" "$shared2_log"; do tee -a "$all" <"$f"; done

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

stamp "kernel: doctor's verdict on the kernel lane's scenarios with kernel WireGuard, in a guest kernel (lab vm), alone"
# -v: a green run's log shows each verdict too, and whether a guest hung.
keep env WGPERF_SCENARIO_LANE=kernel go test -count=1 -v -timeout 40m -run '^TestKernelCatalog$' ./internal/scenario
kernelStatus=$status

stamp "waiting for the packaging test, the fuzz targets and lint beside"
wait "$beside"
besideStatus=$?
beside=
tee -a "$all" <"$log"
stamp "done"
# The kernel catalog's verdicts, then every failure, once more.
grep -E -- 'kernel_test.go:[0-9]+: .*(WireGuard, underlay|the guest hung|guest: Linux)|--- FAIL|^FAIL|failed: |panic: ' "$all" | cut -c1-600
[ "$besideStatus" -eq 0 ] || echo "packaging, fuzz or lint: failed (above)" >&2
echo "--- the slowest tests and scenarios (seconds; the kernel catalog's are in its verdicts above)"
sort -rn "$times" | head -n 30
echo "suite: $(($(date +%s) - start)) s"
[ "$tests" -eq 0 ] && [ "$sharedStatus" -eq 0 ] && [ "$aloneStatus" -eq 0 ] && [ "$guestStatus" -eq 0 ] && [ "$kernelStatus" -eq 0 ] && [ "$besideStatus" -eq 0 ]
