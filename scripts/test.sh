#!/bin/sh
# Runs every test package in three lanes and three phases.
#
# Phase 1, side by side:
#   - the test packages one at a time (-p 1: root lab tests of one package
#     must not share the machine with another's), except the two below;
#   - the lab scenarios that leave the host alone (WGPERF_SCENARIO_LANE=shared):
#     each scenario is sized to what this machine carries while it runs, and
#     the lab's nodes run ahead of other jobs, so they hold their verdicts
#     beside the other lab tests (they mostly wait on shaped links);
#   - at the lowest CPU priority, the work that needs only CPU: goreleaser's
#     install (scripts/goreleaser.sh, a build from source on a fresh machine),
#     the release packaging test (its cross-builds), the fuzz targets
#     (scripts/fuzz.sh), then make lint (gofmt, go vet and staticcheck, both
#     builds: not first, where it held every lane up by about a minute, nor
#     ahead of the fuzz targets, which it pushed into the kernel lane, where a
#     starved fuzz worker trips Go's hang detection; lint has no such clock).
#     The lab's WireGuard nodes run in sessions of their own
#     (setsid), and with the kernel's autogroup scheduling a task's nice only
#     counts inside its session, so this lane gets a session too, niced as a
#     whole (/proc/self/autogroup), and nice 19 where there is no autogroup.
# Phase 2, alone: what changes the initial namespace's sysctls (child
# namespaces mirror them, so every lab on the machine would see the change):
# the scenarios that need host values (WGPERF_SCENARIO_LANE=host) and the
# diagnose package's conntrack and congestion-control tests.
# Phase 3, the kernel lane: a guest kernel booted under QEMU must die with
# the wgperf that started it (TestKernelGuestDiesWithWgperf), fixes called
# persistent must outlast a replay of the boot (TestKernelFixesOutlastBoot),
# then doctor's verdict with kernel WireGuard in it on the scenarios whose
# KernelLane says why the module changes the case (TestKernelCatalog: about a
# minute each under QEMU's emulator); the whole catalog with its fixes is
# make test-kernel.
#
# Usage: scripts/test.sh [fuzz inputs per target]
set -u
start=$(date +%s)
# stamp names a phase and when it starts, so a slow suite shows where its time goes.
stamp() { echo "--- $1 (at $(($(date +%s) - start)) s)"; }
log=$(mktemp)
shared_log=$(mktemp)
# every lane's output, kept so the failures can be repeated at the very end,
# where a log cut to its head and tail still shows them
all=$(mktemp)
beside=
shared=
trap '[ -n "$beside" ] && kill -- "-$beside" 2>/dev/null; [ -n "$shared" ] && kill "$shared" 2>/dev/null; rm -f "$log" "$shared_log" "$all"' EXIT
trap 'exit 130' INT TERM
setsid -w sh -c '
	echo 19 2>/dev/null >/proc/self/autogroup
	exec nice -n 19 sh -c "./scripts/goreleaser.sh &&
		go test -count=1 -timeout 20m ./packaging &&
		./scripts/fuzz.sh \"\$1\" &&
		make --no-print-directory lint" - "$1"' - "${1:-20000}" >"$log" 2>&1 &
beside=$!

alone='/internal/scenario$|/internal/diagnose$'
WGPERF_SCENARIO_LANE=shared go test -count=1 -timeout 15m ./internal/scenario >"$shared_log" 2>&1 &
shared=$!
# keep runs a lane with its output shown and kept in $all; its status is in $status.
keep() {
	st=$(mktemp)
	{ "$@"; echo $? >"$st"; } 2>&1 | tee -a "$all"
	status=$(cat "$st")
	rm -f "$st"
}
keep go test -count=1 -p 1 -timeout 15m $(go list ./... | grep -v -E "/packaging\$|$alone")
tests=$status
wait "$shared"
sharedStatus=$?
shared=
tee -a "$all" <"$shared_log"

stamp "alone: the tests that change host sysctls"
keep env WGPERF_SCENARIO_LANE=host go test -count=1 -p 1 -timeout 15m ./internal/scenario ./internal/diagnose
aloneStatus=$status

stamp "kernel: doctor's verdict on the kernel lane's scenarios with kernel WireGuard, in a guest kernel (lab vm)"
# The tests' own deadlines (the catalog's 30 min, the boot proof's 5) come
# first, with the guest's last output; Go's timeout is only a backstop.
keep env WGPERF_SCENARIO_LANE=kernel go test -count=1 -timeout 40m -run '^(TestKernelGuestDiesWithWgperf|TestKernelFixesOutlastBoot|TestKernelCatalog)$' ./internal/scenario
kernelStatus=$status

stamp "waiting for the packaging test, the fuzz targets and lint beside"
wait "$beside"
besideStatus=$?
beside=
tee -a "$all" <"$log"
stamp "done"
# The kernel catalog's verdicts, then every failure, once more.
grep -E -- 'kernel_test.go:[0-9]+: .*WireGuard, underlay|--- FAIL|^FAIL|failed: |panic: ' "$all" | cut -c1-600
[ "$besideStatus" -eq 0 ] || echo "packaging, fuzz or lint: failed (above)" >&2
[ "$tests" -eq 0 ] && [ "$sharedStatus" -eq 0 ] && [ "$aloneStatus" -eq 0 ] && [ "$kernelStatus" -eq 0 ] && [ "$besideStatus" -eq 0 ]
