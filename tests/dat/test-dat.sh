#!/bin/sh
# SPDX-License-Identifier: MIT
# The recorder's trace.dat output read by trace-cmd: every event the text output has, with the
# same text, in the same order; lost events marked.   usage: test-dat.sh dat-fire worker-pool
set -eu
command -v trace-cmd >/dev/null || { echo "SKIP: trace-cmd is not installed"; exit 77; }
fire=$1 pool=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0

# Same records twice: as text and as trace.dat.  (t_rel_len is left out: libtraceevent 1.7.1,
# which trace-cmd prints with, crashes on __get_rel_dynamic_array_len().)
events='usertp-test:*,!t_rel_len'
USERTP_EVENTS=$events USERTP_OUTPUT=$dir/a.txt "$fire" 20
USERTP_EVENTS=$events USERTP_OUTPUT=$dir/a.dat "$fire" 20
trace-cmd report -i "$dir/a.dat" >"$dir/report.txt" 2>"$dir/report.err" || { cat "$dir/report.err"; exit 1; }
# "name: text" of every event line, in order (trace-cmd pads the name column).
grep -v '^#' "$dir/a.txt" | sed -n 's/^.*[0-9]: \([a-z_]*\): \(.*\)$/\1: \2/p' >"$dir/ours"
sed -n 's/^.*[0-9]: \([a-z_]*\): *\(.*\)$/\1: \2/p' "$dir/report.txt" >"$dir/theirs"
n=$(wc -l <"$dir/ours")
# 20 rounds of 9 events, t_class_cond 19 times (a > 0), t_cond 10 times (even)
[ "$n" -eq 209 ] || { echo "text output has $n events, expected 209"; fail=1; }
if ! cmp -s "$dir/ours" "$dir/theirs"; then
	echo "trace-cmd report differs from the text output:"
	diff "$dir/ours" "$dir/theirs" | head -20
	fail=1
fi
grep -q 'FAILED TO PARSE\|UNKNOWN' "$dir/report.txt" && { echo "trace-cmd could not parse some events"; fail=1; }

# A multi-threaded program, several pages: all calls there, comm and pid columns filled in.
USERTP_EVENTS='jobs:*' USERTP_OUTPUT=$dir/b.dat "$pool" -w 3 500 2>"$dir/pool.err"
trace-cmd report -i "$dir/b.dat" >"$dir/b.txt"
for ev in queued started done; do
	c=$(grep -c " job_$ev: " "$dir/b.txt" || true)
	[ "$c" -eq 500 ] || { echo "job_$ev: $c in trace-cmd report, expected 500"; fail=1; }
done
grep -q '^ *worker-[0-9]-[0-9]* *\[' "$dir/b.txt" || { echo "no worker-N comm in the report"; fail=1; }

# Overwritten events are marked where they were lost.
USERTP_BUFFER_KB=8 USERTP_EVENTS='jobs:*' USERTP_OUTPUT=$dir/c.dat "$pool" -w 2 500 2>/dev/null
trace-cmd report -i "$dir/c.dat" >"$dir/c.txt"
grep -q 'EVENTS DROPPED\]' "$dir/c.txt" || { echo "no [EVENTS DROPPED] mark for an overwritten buffer"; fail=1; }
exit $fail
