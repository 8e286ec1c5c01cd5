#!/bin/sh
# SPDX-License-Identifier: MIT
# The worker-pool example traced in-process: every call appears once, matching the counts the
# program keeps itself.   usage: test-example.sh PATH-TO-worker-pool
set -eu
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
"$1" -t -w 3 200 >"$out" 2>"$err"
summary=$(cat "$err")
echo "$summary"
count() { grep -c " $1: " "$out" || true; }
num() { echo "$summary" | sed -n "s/.* \([0-9]*\) $1.*/\1/p"; }
fail=0
for ev in queued started done; do
	[ "$(count job_$ev)" = "$(num "$ev")" ] || { echo "job_$ev: $(count job_$ev) lines, program says $(num "$ev")"; fail=1; }
done
[ "$(count job_slow)" = "$(num slow)" ] || { echo "job_slow: $(count job_slow) lines, program says $(num slow)"; fail=1; }
[ "$(count job_queued)" = 200 ] || fail=1
# every job id once per event
for ev in queued started done; do
	ids=$(sed -n "s/.* job_$ev: id=\([0-9]*\) .*/\1/p" "$out" | sort -n | uniq | wc -l)
	[ "$ids" = 200 ] || { echo "job_$ev: $ids distinct ids"; fail=1; }
done
exit $fail
