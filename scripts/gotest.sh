#!/usr/bin/env bash
# Runs go test with the given arguments and, when it fails, repeats the
# lines that say what failed at the very end of the output: a CI log is
# often read from its tail, and a timeout's "running tests:" header or a
# failed assertion sits thousands of lines up, above goroutine dumps.
set -uo pipefail
GO=${GO:-go}
log=$(mktemp "${TMPDIR:-/tmp}/zkraft-test.XXXXXX")
trap 'rm -f "$log"' EXIT
# A failed run's whole output is kept here, for a failure that does not come back.
keep=${ZKRAFT_TEST_FAILED_LOG:-${TMPDIR:-/tmp}/zkraft-test-failed.log}
"$GO" test "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
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
  if cp "$log" "$keep" 2>/dev/null; then
    echo "==== the whole output is in $keep"
  fi
fi
exit "$rc"
