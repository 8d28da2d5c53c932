#!/usr/bin/env bash
# Runs go test with the given arguments and, when it fails, repeats the
# lines that say what failed at the very end of the output: a CI log is
# often read from its tail, and a timeout's "running tests:" header or a
# failed assertion sits thousands of lines up, above goroutine dumps.
#
# Then it reaps: every process the run started carries a marker in its
# environment (ZKRAFT_TEST_RUN, internal/testing/testproc), and whatever
# still carries it once go test has ended (a zkraft member, a JVM, a
# Chromium whose test binary died on a -timeout panic before its
# cleanups ran) is killed, with its process group, and named. A run that
# passed but left processes behind fails: some test does not stop what
# it starts.
set -uo pipefail
GO=${GO:-go}
log=$(mktemp "${TMPDIR:-/tmp}/zkraft-test.XXXXXX")
# The marker of this run: unique, so that two runs at once (two
# checkouts, two make tests) reap only their own.
marker="gotest-$$-$(date +%s%N)"

# marked lists the processes whose environment holds this run's marker
# (this script does not: only go test is given it).
marked() {
  grep -lzx "ZKRAFT_TEST_RUN=$marker" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 | sort -n
}

# reap kills whatever the run left and says what it was; it returns 1 if
# there was anything. A process killed in a test's last cleanup may take
# a moment to go: it is given two seconds first.
reap() {
  local pids left=() pid pgid self
  self=$(ps -o pgid= -p $$ | tr -d ' ')
  for _ in $(seq 20); do
    pids=$(marked)
    [ -z "$pids" ] && return 0
    sleep 0.1
  done
  for pid in $pids; do
    [ -r "/proc/$pid/cmdline" ] || continue
    left+=("$pid")
    echo "==== reaped pid $pid (group $(ps -o pgid= -p "$pid" | tr -d ' ')): $(tr '\0' ' ' <"/proc/$pid/cmdline" | cut -c1-200)"
  done
  [ ${#left[@]} -eq 0 ] && return 0
  for pid in "${left[@]}"; do
    pgid=$(ps -o pgid= -p "$pid" | tr -d ' ')
    # Its whole group if a test started it as a group of its own (the
    # group's leader is one of the run's), else the process alone: never
    # the group make and this script run in.
    if [ -n "$pgid" ] && [ "$pgid" != "$self" ] && grep -qx "$pgid" <<<"$pids"; then
      kill -KILL -- "-$pgid" 2>/dev/null
    fi
    kill -KILL "$pid" 2>/dev/null
  done
  echo "==== go test left ${#left[@]} process(es) running; killed"
  return 1
}

# On ^C or a kill, the reaping still happens (through the EXIT trap).
cleanup() {
  reap
  rm -f "$log"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A failed run's whole output is kept here, for a failure that does not come back.
keep=${ZKRAFT_TEST_FAILED_LOG:-${TMPDIR:-/tmp}/zkraft-test-failed.log}
ZKRAFT_TEST_RUN=$marker "$GO" test "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if ! reaped=$(reap); then
  echo "$reaped" | tee -a "$log"
  [ "$rc" -eq 0 ] && rc=1
fi
if [ "$rc" -ne 0 ]; then
  echo
  echo "==== go test failed (exit $rc); what failed:"
  grep -E -A4 '^panic: test timed out|^running tests:' "$log" | grep -v '^goroutine ' | head -40
  # Where a timed-out test waits: the dumped goroutines running test code.
  if grep -q '^panic: test timed out' "$log"; then
    echo "---- goroutines in test code:"
    awk 'BEGIN { RS = "" } /^goroutine / && /_test\.go:/ { print; print "" }' "$log" | head -150
  fi
  grep -E -A12 '^--- FAIL|^    --- FAIL' "$log" | head -200
  grep -E '^(FAIL|ok)[[:space:]]' "$log"
  grep -E '^==== (reaped|go test left)' "$log"
  if cp "$log" "$keep" 2>/dev/null; then
    echo "==== the whole output is in $keep"
  fi
fi
exit "$rc"
