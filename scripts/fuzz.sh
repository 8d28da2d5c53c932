#!/usr/bin/env bash
# Runs every fuzz target of the packages given as arguments for $FUZZTIME
# each (make fuzz). Any failure stops the run, except one that Go's own
# fuzzing coordinator makes up: before Go 1.27 a run bounded by a duration
# can end in a bare "context deadline exceeded" with no failing input
# written, a race at -fuzztime's end (golang/go#75804). Such a target is run
# once more; a second failure of any kind fails the run.
set -u
go=${GO:-go}
fuzztime=${FUZZTIME:-30s}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# coordinatorRace reports whether the failed run in $log is the
# coordinator's race: its deadline error, and no failing input, panic or
# message from a test.
coordinatorRace() {
	grep -q '^    context deadline exceeded$' "$log" &&
		! grep -qE 'Failing input written|^panic:|_test\.go:[0-9]+:' "$log"
}

for p in "$@"; do
	# A package that does not build must fail the run, not list no targets.
	targets=$("$go" test -list 'Fuzz.*' "$p") || { echo "$targets"; exit 1; }
	for t in $(grep '^Fuzz' <<<"$targets"); do
		for attempt in 1 2; do
			echo "== $p $t"
			if "$go" test -run '^$' -fuzz "^$t\$" -fuzztime "$fuzztime" "$p" 2>&1 | tee "$log"; [ "${PIPESTATUS[0]}" -eq 0 ]; then
				break
			fi
			if [ "$attempt" -eq 1 ] && coordinatorRace; then
				echo "== $t: the fuzzing coordinator's deadline race (golang/go#75804), no failing input; running it again"
				continue
			fi
			exit 1
		done
	done
done
