#!/bin/sh
# SPDX-License-Identifier: MIT
# usertp report against trace-cmd report on files the recorder writes: several programs
# merged (-i repeated), both CPUs, lost events, multi-page data, every field kind; --cpu, -F,
# -v, -l, -t, -R; the same files converted by trace-cmd to version 7 (plain and zstd); and
# --stat's counts against the events trace-cmd prints.
#   usage: test-report.sh USERTP REPORT-FIRE WORKER-POOL DAT-FIRE
set -eu
usertp=$1 fire=$2 pool=$3 datfire=$4
. "$(dirname "$0")/lib.sh"

# One program on every CPU, several pages per CPU (2 x 40 batches x 500 events).
USERTP_EVENTS='usertp-test:*' USERTP_OUTPUT=$dir/fire.dat "$fire" 40 100
# The same with a small buffer: older events overwritten, [N EVENTS DROPPED] on each CPU.
USERTP_BUFFER_KB=8 USERTP_EVENTS='usertp-test:*' USERTP_OUTPUT=$dir/lost.dat "$fire" 40 100
# Other programs: threads, and every field kind (t_rel_len left out: libtraceevent 1.7.1,
# which trace-cmd prints with, crashes on __get_rel_dynamic_array_len()).
USERTP_EVENTS='jobs:*' USERTP_OUTPUT=$dir/pool.dat "$pool" -w 3 300 2>/dev/null
USERTP_EVENTS='usertp-test:*,!t_rel_len' USERTP_OUTPUT=$dir/kinds.dat "$datfire" 20

for f in fire lost pool kinds; do
	same -i "$dir/$f.dat"
done
same -i "$dir/lost.dat"
expect "$dir/ours" 'EVENTS DROPPED\]' "lost events"
ncpu=$(sed -n 's/^cpus=//p' "$dir/ours")
if [ "$(nproc)" -ge 2 ]; then
	same -i "$dir/fire.dat"
	expect "$dir/ours" '\[000\]' "CPU 0 event"
	expect "$dir/ours" '\[001\]' "CPU 1 event"
	[ "$(wc -l <"$dir/ours")" -gt 400 ] || { echo "fire.dat: too few events"; fail=1; }
fi

# Several files merged by time, with the file name column.
same -i "$dir/fire.dat" -i "$dir/pool.dat" -i "$dir/kinds.dat"
same -i "$dir/pool.dat" -i "$dir/lost.dat"

# CPU selection, filters (trace-cmd 3.1.6 applies -F only when given before -i), formats.
for cpus in 0 1 1,0 0-1; do
	same --cpu "$cpus" -i "$dir/lost.dat"
done
same -F t_helpers -i "$dir/fire.dat"
same -F 'usertp-test/t_scalars: i > 150 && i < 700' -F t_plain_text -i "$dir/fire.dat"
same -v -F t_scalars -i "$dir/fire.dat"
same -F 'job_done' -v -F 'job_done: id < 100' -i "$dir/pool.dat"
for flags in -l -t -R "-l -R"; do
	# shellcheck disable=SC2086
	same $flags -i "$dir/lost.dat"
done

# trace-cmd's version 7 files, uncompressed and zstd: the same lines as the original.
for comp in none zstd; do
	trace-cmd convert -i "$dir/lost.dat" -o "$dir/v7-$comp.dat" --file-version 7 \
		--compression "$comp" >/dev/null 2>&1
	theirs "$dir/v6.txt" -i "$dir/lost.dat"
	"$usertp" report -i "$dir/v7-$comp.dat" >"$dir/v7.txt" || fail=1
	cmp -s "$dir/v6.txt" "$dir/v7.txt" || { echo "v7 ($comp) output differs"; fail=1; }
	same -i "$dir/v7-$comp.dat"
done

# --stat: per CPU and per event, what trace-cmd prints; lost events as it marks them.
theirs "$dir/theirs" -i "$dir/lost.dat"
"$usertp" report --stat -i "$dir/lost.dat" >"$dir/stat" || fail=1
for cpu in $(seq 0 $((ncpu - 1))); do
	events=$(grep -c "\[$(printf %03d "$cpu")\]" "$dir/theirs" || true)
	lost=$(sed -n "s/^CPU:$cpu \[\([0-9]*\) EVENTS DROPPED\]/\1/p" "$dir/theirs" |
		awk '{ n += $1 } END { print n + 0 }')
	grep -q "^ *$cpu  *$events  *$lost\$" "$dir/stat" ||
		{ echo "--stat CPU $cpu: expected $events events, $lost lost:"; cat "$dir/stat"; fail=1; }
done
for ev in t_scalars t_dynamic t_helpers t_class_plain t_plain_text; do
	n=$(grep -c " $ev: " "$dir/theirs" || true)
	grep -q "^ *$n  usertp-test:$ev\$" "$dir/stat" ||
		{ echo "--stat: expected $n $ev"; cat "$dir/stat"; fail=1; }
done
"$usertp" report --stat --cpu 1 -F t_helpers -i "$dir/fire.dat" >"$dir/stat" || fail=1
n=$(trace-cmd report --cpu 1 -F t_helpers -i "$dir/fire.dat" | grep -c ' t_helpers: ' || true)
grep -q "^ *$n  usertp-test:t_helpers\$" "$dir/stat" && ! grep -q t_scalars "$dir/stat" ||
	{ echo "--stat with --cpu and -F: expected only $n t_helpers"; cat "$dir/stat"; fail=1; }

echo "$compared comparisons with trace-cmd report"
exit $fail
