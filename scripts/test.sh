#!/bin/sh
# Runs every test package in lanes, in three phases.
#
# Phase 1, side by side:
#   - the test packages one at a time (-p 1: root lab tests of one package
#     must not share the machine with another's), except the two below;
#   - the lab scenarios that leave the host alone (WGPERF_SCENARIO_LANE=shared),
#     then the packages in $late:
#     each scenario is sized to what this machine carries while it runs, and
#     the lab's nodes run ahead of other jobs, so they hold their verdicts
#     beside the other lab tests (they mostly wait on shaped links);
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
tools=$(mktemp -d)
go build -o "$tools/testlog" ./scripts/testlog || exit 2
times=$tools/times
testlog="$tools/testlog -times $times"

# stamp names a phase and when it starts, so a slow suite shows where its time goes.
stamp() { echo "--- $1 (at $(($(date +%s) - start)) s)"; }
log=$(mktemp)
shared_log=$(mktemp)
kernel_log=$(mktemp)
# every lane's output, kept so the failures can be repeated at the very end,
# where a log cut to its head and tail still shows them
all=$(mktemp)
beside=
shared=
kernel=
trap '[ -n "$beside" ] && kill -- "-$beside" 2>/dev/null; [ -n "$shared" ] && kill "$shared" 2>/dev/null; [ -n "$kernel" ] && kill "$kernel" 2>/dev/null; rm -rf "$log" "$shared_log" "$kernel_log" "$all" "$tools"' EXIT
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
# After the shared scenarios, in their stream, a few packages' short lab
# tests, to even the two streams out: the other took 1,118 s with udppath
# and iperf (67 s) and the scenarios 973 s (ci run on 02cb12c), the first
# four about 70 s. The scenarios of tunnels that are not pairs (a hub, a
# NAT, a clone: about 3 minutes, lab "e2t") play in the other stream, after
# its packages.
late='/internal/lab$|/internal/lab/guest$|/internal/probe/mtu$|/internal/probe/icmpburst$|/internal/probe/udppath$|/internal/probe/iperf$'
sh -c 'WGPERF_SCENARIO_LANE=shared $3 go test -json -count=1 -timeout 25m ./internal/scenario; a=$?
	$3 go test -json -count=1 -p 1 -timeout 15m $(go list ./... | grep -E "$1"); b=$?
	echo "--- the scenario stream done (at $(($(date +%s) - $2)) s)"
	[ "$a" -eq 0 ] && [ "$b" -eq 0 ]' - "$late" "$start" "$testlog" >"$shared_log" 2>&1 &
shared=$!
# keep runs a lane with its output shown and kept in $all; its status is in $status.
keep() {
	st=$(mktemp)
	{ "$@"; echo $? >"$st"; } 2>&1 | tee -a "$all"
	status=$(cat "$st")
	rm -f "$st"
}
keep $testlog go test -json -count=1 -p 1 -timeout 15m -skip "$cpuOnly" $(go list ./... | grep -v -E "/packaging\$|$alone|$late")
tests=$status
keep env WGPERF_SCENARIO_LANE=topologies $testlog go test -json -count=1 -timeout 20m -run '^TestScenarios$' ./internal/scenario
[ "$status" -eq 0 ] || tests=$status
stamp "the packages and the topologies done; waiting for the scenario stream"
wait "$shared"
sharedStatus=$?
shared=
tee -a "$all" <"$shared_log"

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
