#!/bin/sh
# SPDX-License-Identifier: MIT
# test-conformance.sh USERTP REC-PROG CONS-PROG TFS-WRITE: conformance.sh's scenarios on
# usertp mount with two running programs (cons-prog: cons:cons_a, cons_b, cons_c; rec-prog:
# rec:rec_event, ...), compared line by line with conformance.expected, the transcript of
# this machine's kernel (Linux 6.18) on its own events, but for what conformance.differences
# lists (FUSE's limits, each with its reason).  Where the kernel's tracefs can be
# written, the same scenarios run on it too (in an instance of their own, with sched and
# signal events), and must still give conformance.expected: the file is what the kernel does.
# Exit 77 where FUSE cannot be used.
set -eu
usertp=$1 rec=$2 cons=$3 tfs_write=$4
here=$(dirname "$0")
test_name=conformance
. "$here/mount-lib.sh"
kinst=/sys/kernel/tracing/instances/usertp-conf-$$
at_exit='[ ! -d "$kinst" ] || rmdir "$kinst" 2>/dev/null || true'

"$rec" wait 0 >"$dir/rec.out" &
pids=$!
start_cons
wait_until "rec-prog ready" grep -q ready "$dir/rec.out"
start_mount
wait_until "the programs' events" grep -q '^rec:rec_event$' "$mnt/available_events"
wait_until "the programs' events" grep -q '^cons:cons_a$' "$mnt/available_events"

# FIRE for the mount: cons-prog fires cons_a, and the mount holds it (within milliseconds).
cat >"$dir/fire" <<EOF
n=\$(grep -c fired "$dir/cons.out" || true)
echo "fire 1" >&3
. "$here/../lib.sh"
wait_until "cons-prog fired" sh -c '[ \$(grep -c fired "$dir/cons.out") -gt '\$n' ]'
# (up to 1 s: where a filter refuses it, it never comes)
i=0
until grep -q ' cons_a: ' "\${TFS_TRACE:-$mnt/trace}" || [ \$i -ge 20 ]; do sleep 0.05; i=\$((i + 1)); done
EOF
ROOT=$mnt TFS_TRACE=$mnt/trace sh "$here/conformance.sh" "$mnt" "$tfs_write" cons cons_a cons_c \
	rec rec_event seq sh "$dir/fire" >"$dir/usertp.txt" 2>&1
# (what FUSE cannot do as tracefs does: conformance.differences, each with its reason)
sed -f "$here/conformance.differences" "$here/conformance.expected" >"$dir/want.txt"
if ! diff -u "$dir/want.txt" "$dir/usertp.txt"; then
	echo "FAIL: usertp mount does not do what the kernel does (- kernel, + usertp)"
	fail=1
fi
# The same in an instance of the mount (instances/NAME has every file the top level has).
mkdir "$mnt/instances/conf"
ROOT=$mnt TFS_TRACE=$mnt/instances/conf/trace sh "$here/conformance.sh" "$mnt/instances/conf" \
	"$tfs_write" cons cons_a cons_c rec rec_event seq sh "$dir/fire" >"$dir/usertp-inst.txt" 2>&1
rmdir "$mnt/instances/conf"
if ! diff -u "$dir/want.txt" "$dir/usertp-inst.txt"; then
	echo "FAIL: an instance of usertp mount does not do what the kernel does (- kernel, + usertp)"
	fail=1
fi

# trace_pipe live, in another process, while this one enables and disables (docs/tracefs.md §7):
# it shows what is recorded as it comes, nothing while the event is off, and a reader
# killed while it waits leaves the mount serving.
cat "$mnt/trace_pipe" >"$dir/pipe" &
cat_pid=$!
# (Each fire is waited for, fired, before the next setting: cons-prog reads its commands in
# its own time.)
echo cons:cons_a >"$mnt/set_event"
fire 3
wait_until "trace_pipe shows cons_a live" sh -c "[ \$(grep -c \" cons_a: seq=\" \"$dir/pipe\") -eq 3 ]"
echo '!cons:cons_a' >>"$mnt/set_event"
fire 3
echo cons:cons_b >>"$mnt/set_event"
fire 1
wait_until "trace_pipe shows cons_b" grep -q " cons_b: seq=0" "$dir/pipe"
[ "$(grep -c ' cons_a: ' "$dir/pipe")" -eq 3 ] || { echo "FAIL: cons_a recorded while off"; fail=1; }
# set_event_pid reaches the programs: cons-prog's pid records, another pid does not.
echo 1 >"$mnt/set_event_pid"
fire 1
echo $p >"$mnt/set_event_pid"
fire 2
wait_until "trace_pipe shows cons_b of the listed pid" grep -q " cons_b: seq=1" "$dir/pipe"
[ "$(grep -c ' cons_b: ' "$dir/pipe")" -eq 3 ] || { echo "FAIL: set_event_pid: cons_b of an unlisted pid recorded"; grep cons_b "$dir/pipe"; fail=1; }
echo >"$mnt/set_event_pid"
kill -KILL $cat_pid
wait $cat_pid 2>/dev/null || true

# A program that starts after the settings has them from its first event, in every instance:
# the top level records cons_a with seq < 3, an instance cons_b from the listed pid only
# (none here: a pid that is not the new program's), both with tracing on.
mkdir "$mnt/instances/later"
echo cons:cons_a >"$mnt/set_event"
echo 'seq < 3' >"$mnt/events/cons/cons_a/filter"
echo cons:cons_b >"$mnt/instances/later/set_event"
echo 1 >"$mnt/instances/later/set_event_pid"
: >"$mnt/trace"
"$cons" auto 10 >/dev/null
wait_until "the new program's cons_a" sh -c "[ \$(grep -c ' cons_a: ' \"$mnt/trace\") -eq 3 ]"
[ "$(grep ' cons_a: ' "$mnt/trace" | sed 's/.*seq=//' | tr '\n' ' ')" = "0 1 2 " ] ||
	{ echo "FAIL: a later program's first events are not as the filter says"; grep cons_a "$mnt/trace"; fail=1; }
grep -q ' cons_b: ' "$mnt/trace" && { echo "FAIL: the top level recorded cons_b"; fail=1; }
grep -q ' cons_' "$mnt/instances/later/trace" && { echo "FAIL: the instance ignored its pid filter for a later program"; fail=1; }
echo >"$mnt/instances/later/set_event_pid"
"$cons" auto 2 >/dev/null
wait_until "the instance's cons_b of a later program" sh -c "[ \$(grep -c ' cons_b: ' \"$mnt/instances/later/trace\") -eq 2 ]"
rmdir "$mnt/instances/later"
echo 0 >"$mnt/events/cons/cons_a/filter"
: >"$mnt/set_event"

# Exact counts (docs/tracefs.md §9, §11): 3000 records into 11 KiB per CPU; per CPU, held plus
# overwritten (overwrite on) or held plus dropped (off) is what came, summed: 3000.
echo 8 >"$mnt/buffer_size_kb"
echo cons:cons_a >"$mnt/set_event"
for ow in 1 0; do
	echo $ow >"$mnt/options/overwrite"
	: >"$mnt/trace"
	n=$(grep -c fired "$dir/cons.out")
	echo "fire 3000" >&3
	wait_until "cons-prog fired 3000" sh -c "[ \$(grep -c fired \"$dir/cons.out\") -gt $n ]"
	if [ $ow = 1 ]; then
		wait_until "3000 held or overwritten" sh -c "[ \$(cat \"$mnt\"/per_cpu/cpu*/stats | awk '/^(entries|overrun): / { s += \$NF } END { print s }') -eq 3000 ]"
		[ "$(sum_stats overrun)" -gt 0 ] || { echo "FAIL: 3000 records in 11 KiB and nothing overwritten"; fail=1; }
		head -3 "$mnt/trace" | grep -q "entries-written: $(sum_stats entries)/3000 " ||
			{ echo "FAIL: overwrite on: trace's counts"; head -3 "$mnt/trace"; fail=1; }
	else
		wait_until "3000 held or dropped" sh -c "[ \$(cat \"$mnt\"/per_cpu/cpu*/stats | awk '/^(entries|dropped events): / { s += \$NF } END { print s }') -eq 3000 ]"
		[ "$(sum_stats overrun)" -eq 0 ] || { echo "FAIL: overwrite off, and records overwritten"; fail=1; }
		head -3 "$mnt/trace" | grep -q "entries-written: $(sum_stats entries)/$(sum_stats entries) " ||
			{ echo "FAIL: overwrite off: trace's counts"; head -3 "$mnt/trace"; fail=1; }
		grep -q ' cons_a: seq=0$' "$mnt/trace" || { echo "FAIL: overwrite off: the first record is not kept"; fail=1; }
	fi
done
echo 1 >"$mnt/options/overwrite"
echo 1408 >"$mnt/buffer_size_kb"
: >"$mnt/set_event"
: >"$mnt/trace"
timeout 10 cat "$mnt/tracing_on" >/dev/null || { echo "FAIL: the mount hangs after a reader was killed"; fail=1; }
: >"$mnt/set_event"

if [ -w /sys/kernel/tracing/instances ] && mkdir "$kinst" 2>/dev/null; then
	# A new instance takes the options of the top level, which another tool may have left
	# changed (`trace-cmd record` leaves function-trace 0): the ones the scenarios read are set
	# to the kernel's defaults first, in the test's own instance only.
	for o in record-tgid:0 overwrite:1 irq-info:1 markers:1 event-fork:0 pause-on-trace:0 \
		function-trace:1; do
		echo "${o#*:}" >"$kinst/options/${o%%:*}"
	done
	ROOT=/sys/kernel/tracing sh "$here/conformance.sh" "$kinst" "$tfs_write" sched sched_process_fork sched_process_exec \
		signal signal_generate parent_pid sh -c '/bin/true; /bin/true' >"$dir/kernel.txt" 2>&1
	rmdir "$kinst"
	if ! diff -u "$here/conformance.expected" "$dir/kernel.txt"; then
		echo "FAIL: this kernel no longer gives conformance.expected (- file, + kernel)"
		fail=1
	fi
else
	echo "(the kernel's tracefs cannot be written here: compared with the stored transcript only)"
fi
# Unmounted, the mount ends cleanly and says nothing (a sanitizer's report would be here).
fusermount3 -u "$mnt"
rc=0
wait $m || rc=$?
m=
[ $rc -eq 0 ] || { echo "FAIL: the mount exited with $rc"; fail=1; }
[ ! -s "$dir/mount.err" ] || { echo "FAIL: the mount said:"; cat "$dir/mount.err"; fail=1; }
exit $fail
