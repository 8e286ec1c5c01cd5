#!/bin/sh
# SPDX-License-Identifier: MIT
# test-trace-clock.sh USERTP CLOCK-PROG: trace_clock per instance (issue 21, item 10).  The
# programs count the TSC where it is invariant and each instance prints its records on the
# clock it selects (src/common/tsc2nsec.c converts as it reads): trace_clock lists mono,
# mono_raw, boot, tai (and x86-tsc where the TSC is invariant) with the one in use in
# brackets; a write selects one and clears what is held; `local` (the kernel's sched_clock,
# which user space cannot read) is refused.  clock-prog's events carry CLOCK_MONOTONIC as it
# read it just before each: on mono the time `trace` prints is that one (the closest of 400
# within 2 us: `trace` prints microseconds); on tai it is CLOCK_TAI's; on x86-tsc raw ticks;
# trace_marker and per_cpu stats follow the clock.  A second instance keeps its own clock.
set -eu
usertp=$1 clockprog=$2
test_name=trace-clock
. "$(dirname "$0")/mount-lib.sh"
start_mount
"$clockprog" 60 1 >/dev/null & # (its catalog entry; its second event comes after the test)
pids="$pids $!"
wait_until "clock-prog's events" grep -q '^clock:clock_read$' "$mnt/available_events"
mkdir "$mnt/instances/other"
for t in "$mnt" "$mnt/instances/other"; do
	echo 'clock:*' >"$t/set_event"
done
tsc=
grep -q ' constant_tsc' /proc/cpuinfo && grep -q ' nonstop_tsc' /proc/cpuinfo && tsc=" x86-tsc"
[ "$(cat "$mnt/trace_clock")" = "[mono] mono_raw boot tai$tsc" ] ||
	bad "trace_clock: $(cat "$mnt/trace_clock")"
# closest FILE OFFSET_NS: the smallest |printed - carried - OFFSET| of the clock_read lines, in us
closest() {
	awk -v off="$2" '/ clock_read: / { t = $4; sub(/:$/, "", t); split(t, p, ".")
		m = $NF; sub(/^mono=/, "", m); m = m + off
		x = (p[1] * 1000000 + p[2]) - int(m / 1000); if (x < 0) x = -x
		if (++n == 1 || x < a) a = x }
	END { print n ? a : "none" }' "$1"
}
# Each clock: selected, listed so, the records held cleared, then clock-prog's 400 events.
for c in mono boot tai mono_raw; do
	echo "  $c " >"$mnt/trace_clock" || bad "cannot select $c"
	grep -q "\[$c\]" "$mnt/trace_clock" || bad "$c not selected: $(cat "$mnt/trace_clock")"
	[ "$(grep -c clock_read "$mnt/trace")" -eq 0 ] ||
		bad "$c: the records held were not cleared"
	"$clockprog" 0 200
	grep clock_read "$mnt/trace" >"$dir/$c.txt"
	[ "$(wc -l <"$dir/$c.txt")" -eq 400 ] || bad "$c: $(wc -l <"$dir/$c.txt") records"
done
# (CLOCK_TAI - CLOCK_MONOTONIC, read once here: the same for both within microseconds)
off=$(python3 -c 'import time
print(time.clock_gettime_ns(time.CLOCK_TAI) - time.clock_gettime_ns(time.CLOCK_MONOTONIC))')
[ "$(closest "$dir/mono.txt" 0)" -le 2 ] || bad "mono: $(closest "$dir/mono.txt" 0) us off"
[ "$(closest "$dir/tai.txt" "$off")" -le 200 ] || bad "tai: $(closest "$dir/tai.txt" "$off") us off"
# (The seconds are padded to 5 places, as the kernel's %5lu: a machine up for less than
# 10000 s prints a space more.)
grep -q '\] \.\.\.\.\. *[0-9]*\.[0-9]\{6\}: clock_read' "$dir/boot.txt" ||
	bad "boot: no seconds.microseconds: $(head -1 "$dir/boot.txt")"
# The other instance kept mono, and its records.
grep -q '^\[mono\]' "$mnt/instances/other/trace_clock" || bad "the other instance's clock changed"
[ "$(grep -c clock_read "$mnt/instances/other/trace")" -eq 1600 ] ||
	bad "the other instance holds $(grep -c clock_read "$mnt/instances/other/trace") of 1600"
if [ -n "$tsc" ]; then
	echo x86-tsc >"$mnt/trace_clock"
	"$clockprog" 0 3
	echo hello >"$mnt/trace_marker"
	# Raw ticks: no decimal point, far above the mono nanoseconds carried (2 GHz or more).
	grep -q ': clock_read: ' "$mnt/trace" && ! grep -q '[0-9]\.[0-9]*: clock_read' "$mnt/trace" ||
		bad "x86-tsc: $(grep -m1 clock_read "$mnt/trace")"
	grep -q '^now ts: [0-9]*$' "$mnt/per_cpu/cpu0/stats" ||
		bad "x86-tsc stats: $(grep 'now ts' "$mnt/per_cpu/cpu0/stats")"
	grep -q ' [0-9]*: tracing_mark_write: hello' "$mnt/trace" ||
		bad "x86-tsc marker: $(grep mark "$mnt/trace")"
fi
if echo local >"$mnt/trace_clock" 2>/dev/null; then bad "local was taken"; fi
if echo nosuch >"$mnt/trace_clock" 2>/dev/null; then bad "nosuch was taken"; fi
echo mono >"$mnt/trace_clock"
echo hello >"$mnt/trace_marker"
grep -q ' [0-9]*\.[0-9]\{6\}: tracing_mark_write: hello' "$mnt/trace" ||
	bad "mono marker: $(grep mark "$mnt/trace")"
grep -q '^now ts: *[0-9]*\.[0-9]\{6\}$' "$mnt/per_cpu/cpu0/stats" ||
	bad "mono stats: $(grep 'now ts' "$mnt/per_cpu/cpu0/stats")"
[ "$fail" -eq 0 ] && echo "trace-clock: ok"
exit "$fail"
