# What the boot proof's passes share (boot-replay.sh and the passes it runs
# source it). PASS names the pass, "" for the Debian one; T0 is the proof's
# start (date +%s).

# step says what the pass does next, with the seconds since the proof began.
step() { echo "--- [$(($(date +%s) - T0)) s] ${PASS:+$PASS: }$*"; }

# value reports a figure for the test to judge: "value [PASS-]NAME VALUE".
value() { echo "value ${PASS:+$PASS-}$1 $2"; }

# end_watchdogs ends, as a reboot does, each confirm watchdog a journal in
# $1 names (its whole process group).
end_watchdogs() {
	for j in "$1"/*.json; do
		pid=$(sed -n 's/.*"watchdog_pid": *\([0-9][0-9]*\).*/\1/p' "$j")
		[ -n "$pid" ] || continue
		if kill -9 "-$pid"; then echo "killed watchdog $pid"; else echo "no watchdog $pid"; fi
	done
}
