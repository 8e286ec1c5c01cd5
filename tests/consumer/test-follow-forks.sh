#!/bin/sh
# SPDX-License-Identifier: MIT
# test-follow-forks.sh FOLLOW-FORKS CONS-PROG WORKER-POOL: the follow-forks example (kernel
# events in a public session) follows a command's process tree: a shell that runs the bundled
# worker-pool, then cons-prog, which forks two children that fire events.  Every fork of the
# tree is reported, each child's events after its fork, in timestamp order, nothing of other
# processes; while another process keeps changing the global tracefs settings (tracing_on,
# set_event, set_event_pid, trace_clock, event-fork, a filter that refuses every fork) and
# making an instance of its own: the session's instance is not disturbed.  The global settings
# are put back at the end.  Skips (77) without a writable tracefs.
set -u
follow=$1 prog=$2 pool=$3
T=/sys/kernel/tracing
[ -w "$T/instances" ] && [ -r "$T/events/sched/sched_process_fork/format" ] ||
	{ echo "no writable tracefs at $T: skipped"; exit 77; }
dir=$(mktemp -d /tmp/usertp-follow-forks-XXXXXX)
export XDG_RUNTIME_DIR="$dir/xdg"
mkdir -m 700 "$XDG_RUNTIME_DIR"

# The global settings this test changes, to put back.
F=$T/events/sched/sched_process_fork/filter
saved_on=$(cat $T/tracing_on)
saved_clock=$(sed 's/.*\[\(.*\)\].*/\1/' $T/trace_clock)
saved_events=$(cat $T/set_event)
saved_pids=$(cat $T/set_event_pid)
saved_fork=$(cat $T/options/event-fork)
saved_filter=$(cat $F)
restore() {
	[ -n "${disturber:-}" ] && kill "$disturber" 2>/dev/null && wait "$disturber" 2>/dev/null
	rmdir $T/instances/follow-forks-other-$$ 2>/dev/null
	echo "$saved_on" > $T/tracing_on
	echo "$saved_clock" > $T/trace_clock
	echo > $T/set_event
	[ -n "$saved_events" ] && echo "$saved_events" | while read -r e; do echo "$e" >> $T/set_event; done
	echo "$saved_pids" > $T/set_event_pid
	echo "$saved_fork" > $T/options/event-fork
	case "$saved_filter" in none) echo 0 > $F ;; *) echo "$saved_filter" > $F ;; esac
	rm -rf "$dir"
}
trap restore EXIT

# Another tool, meanwhile: the global settings every way, and an instance of its own.
(
	i=0
	while :; do
		echo 1 > $T/events/sched/sched_process_fork/enable
		echo 'child_pid < 0' > $F
		echo 0 > $T/tracing_on
		echo 1 > $T/set_event_pid
		echo 1 > $T/options/event-fork
		echo local > $T/trace_clock
		mkdir $T/instances/follow-forks-other-$$ 2>/dev/null
		echo 'sched:*' > $T/instances/follow-forks-other-$$/set_event 2>/dev/null
		sleep 0.01
		echo > $T/set_event
		echo 1 > $T/tracing_on
		echo > $T/set_event_pid
		echo global > $T/trace_clock
		rmdir $T/instances/follow-forks-other-$$ 2>/dev/null
		i=$((i + 1))
		echo $i > "$dir/disturbed.new" && mv "$dir/disturbed.new" "$dir/disturbed"
	done
) &
disturber=$!
until [ -s "$dir/disturbed" ]; do sleep 0.01; done

fail=0
# (The shell waits between its two programs, so that the other tool's changes come between.)
before=$(cat "$dir/disturbed")
"$follow" -- sh -c "\"$pool\" 2 >/dev/null; sleep 0.3; printf 'fork 3\nfork 2\nquit\n' | \"$prog\"" \
	>"$dir/out" 2>"$dir/err" &
follower=$!
wait $follower
status=$?
after=$(cat "$dir/disturbed")
kill "$disturber"; wait "$disturber" 2>/dev/null; disturber=
[ "$status" -eq 0 ] || { echo "follow-forks exited $status"; fail=1; }
[ "$after" -gt "$before" ] || { echo "the global settings were not changed meanwhile"; fail=1; }

# cons-prog says its pid and its children's: the truth the timeline is checked against.
P=$(sed -n 's/^ready \([0-9]*\)$/\1/p' "$dir/out")
kids=$(sed -n 's/^forked \([0-9]*\)$/\1/p' "$dir/out")
[ -n "$P" ] && [ "$(echo $kids | wc -w)" -eq 2 ] || { echo "cons-prog did not say its pids"; fail=1; }
grep -E '^[0-9]+\.[0-9]{6} ' "$dir/out" > "$dir/timeline"

# In timestamp order.
sort -s -n -k1,1 "$dir/timeline" | cmp -s - "$dir/timeline" || { echo "not in time order"; fail=1; }
# The command's exec, the first thing recorded.
head -1 "$dir/timeline" | grep -q ' exec [0-9]* /usr/bin/sh$\| exec [0-9]* /bin/sh$' ||
	{ echo "the first line is not the command's exec:"; head -3 "$dir/timeline"; fail=1; }
# Every fork's parent is in the tree (the command, or a child seen forked): nothing of others.
tree=$(sed -n '1s/.* exec \([0-9]*\) .*/\1/p' "$dir/timeline")
while read -r ts what a b c d; do
	case $what in
	fork) parent=${a%%(*} child=${c%%(*}
		echo " $tree " | grep -q " $parent " || { echo "a fork outside the tree: $ts $what $a $b $c"; fail=1; }
		tree="$tree $child" ;;
	event) pid=${a%%/*}
		echo " $tree " | grep -q " $pid " || { echo "an event outside the tree: $ts $what $a $b"; fail=1; } ;;
	esac
done < "$dir/timeline"
# cons-prog's forks, each with its child's events after it: 3 and 2 of each event.
n=3
for k in $kids; do
	line=$(grep -n " fork $P(cons-prog) -> $k(cons-prog)$" "$dir/timeline" | cut -d: -f1)
	[ -n "$line" ] || { echo "the fork of $k is not reported"; fail=1; continue; }
	first=$(grep -n " event $k/$k cons:" "$dir/timeline" | head -1 | cut -d: -f1)
	[ -n "$first" ] && [ "$first" -gt "$line" ] || { echo "the events of $k before its fork"; fail=1; }
	for e in cons_a cons_b; do
		c=$(grep -c " event $k/$k cons:$e: " "$dir/timeline")
		[ "$c" -eq $n ] || { echo "$k: $c $e of $n"; fail=1; }
	done
	n=2
done
# The bundled example's events (strings, arrays): its 2 jobs done.
[ "$(grep -c ' jobs:job_done: id=[01] worker=worker-[0-9] ns=[0-9]* flags=' "$dir/timeline")" -eq 2 ] ||
	{ echo "the worker-pool's jobs are not all there"; fail=1; }
# The count it says is the lines it printed.
forks=$(grep -c ' fork ' "$dir/timeline")
grep -q "^forks: $forks$" "$dir/err" || { echo "forks: $forks printed, stderr says:"; cat "$dir/err"; fail=1; }
# Its instance is gone (usertp-record-PID, or -PID-N: another recorder's may be there meanwhile).
ls $T/instances | grep -qx "usertp-record-$follower\(-[0-9]*\)\?" && { echo "an instance left:"; ls $T/instances; fail=1; }
[ $fail -eq 0 ] || { echo "--- output"; cat "$dir/out" "$dir/err"; }
exit $fail
