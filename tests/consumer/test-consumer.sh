#!/bin/sh
# SPDX-License-Identifier: MIT
# test-consumer.sh CASE TEST-CONSUMER CONS-PROG FOLLOW WORKER-POOL SLOW-BIND: one case of
# test-consumer.c (or "follow": the example program against two worker-pools), in a runtime
# directory of its own, so that sessions attached to every program do not meet those of other
# tests.  SLOW-BIND: the preload that holds a program's bind() (tests/record/slow-bind.c).
set -e
case=$1 test=$2 prog=$3 follow=$4 pool=$5
# (LD_PRELOAD's list: a sanitizer's runtime must come first among the preloaded.)
runtime=$(ldd "$prog" | awk '/lib[at]san/ { print $3; exit }')
export SLOW_BIND="${6:+${runtime:+$runtime }$6}"
dir=$(mktemp -d /tmp/usertp-consumer-XXXXXX)
trap 'rm -rf "$dir"' EXIT
export XDG_RUNTIME_DIR="$dir/xdg"
mkdir -m 700 "$XDG_RUNTIME_DIR"
if [ "$case" != follow ]; then
	set +e
	"$test" "$case" "$prog"
	exit $?
fi
# The example: one line per finished job of every worker-pool, with its duration.
"$follow" -n 20 -t 20 >"$dir/out" 2>"$dir/err" &
f=$!
until grep -q following "$dir/err" 2>/dev/null; do sleep 0.05; done
"$pool" 10 >/dev/null
"$pool" -w 2 10 >/dev/null
fail=0
wait "$f" || { echo "follow failed:"; cat "$dir/err"; fail=1; }
n=$(grep -c '^\[[0-9]*\] job [0-9]* done by thread [0-9]* in [0-9]* us$' "$dir/out" || true)
[ "$n" -eq 20 ] || { echo "follow: $n lines of 20"; cat "$dir/out" "$dir/err"; fail=1; }
# Each program's jobs 0..9, once each.
for p in $(sed 's/^\[\([0-9]*\)\].*/\1/' "$dir/out" | sort -u); do
	jobs=$(grep "^\[$p\] job" "$dir/out" | sed 's/.* job \([0-9]*\) .*/\1/' | sort -n | tr '\n' ' ')
	[ "$jobs" = "0 1 2 3 4 5 6 7 8 9 " ] || { echo "program $p: jobs $jobs"; fail=1; }
done
[ $(sed 's/^\[\([0-9]*\)\].*/\1/' "$dir/out" | sort -u | wc -l) -eq 2 ] ||
	{ echo "not two programs:"; cat "$dir/out"; fail=1; }
exit $fail
