#!/bin/sh
# SPDX-License-Identifier: MIT
# usertp report against trace-cmd report on a kernel trace that trace-cmd writes (its
# default: version 7, zstd), the same converted to version 6, and merged with one of ours.
# Skipped (77) without trace-cmd, tracefs, or the right to trace the kernel.
#   usage: test-report-kernel.sh USERTP REPORT-FIRE
set -eu
usertp=$1 fire=$2
. "$(dirname "$0")/lib.sh"
tracefs=/sys/kernel/tracing
[ -d $tracefs/events ] || mount -t tracefs nodev $tracefs 2>/dev/null || true
[ -w $tracefs/events/sched/enable ] || { echo "SKIP: no writable tracefs"; exit 77; }

events="sched/sched_switch sched/sched_wakeup sched/sched_process_exec syscalls/sys_enter_openat syscalls/sys_exit_openat"
set_events() {
	for e in $events; do
		[ -e $tracefs/events/$e/enable ] && echo "$1" >$tracefs/events/$e/enable
	done
}
trap 'set_events 0; rm -rf "$dir"' EXIT
echo >$tracefs/trace
set_events 1
USERTP_EVENTS='usertp-test:*' USERTP_OUTPUT=$dir/ours.dat "$fire" 4 50
ls / >/dev/null
set_events 0
# trace-cmd extract writes what is in the buffer; where /proc/sys/kernel/ftrace_enabled
# refuses writes (some VMs), give it a private copy that accepts them.
if ! trace-cmd extract -o "$dir/k.dat" >/dev/null 2>&1; then
	echo 1 >"$dir/one"
	unshare -m sh -c "mount --bind '$dir/one' /proc/sys/kernel/ftrace_enabled &&
		trace-cmd extract -o '$dir/k.dat'" >/dev/null 2>&1 ||
		{ echo "SKIP: trace-cmd extract cannot run here"; exit 77; }
fi
theirs "$dir/k.txt" -i "$dir/k.dat" 2>/dev/null
grep -q ' sched_switch: ' "$dir/k.txt" || { echo "SKIP: no kernel events were recorded"; exit 77; }

same -i "$dir/k.dat"
expect "$dir/ours" ' sys_enter_openat: ' "syscall event"
same --cpu 0 -i "$dir/k.dat"
same -F 'sched_switch: prev_pid != 0' -i "$dir/k.dat"
trace-cmd convert -i "$dir/k.dat" -o "$dir/k6.dat" --file-version 6 --compression none >/dev/null 2>&1
same -i "$dir/k6.dat"
same -i "$dir/k.dat" -i "$dir/ours.dat"
# A file trace-cmd recorded with CPU 1 alone (-M 2): "cpus=" counts the machine's CPUs, as
# trace-cmd prints it, not those with data (before: cpus=0 or 1 on this 2-CPU machine).
on=$(cat $tracefs/tracing_on)
echo 1 >"$dir/one"
if unshare -m sh -c "mount --bind '$dir/one' /proc/sys/kernel/ftrace_enabled &&
	trace-cmd record -M 2 -e sched:sched_switch -o '$dir/k1.dat' taskset -c 1 sleep 0.05" \
	>/dev/null 2>&1; then
	same -i "$dir/k1.dat"
	expect "$dir/ours" "^cpus=$(getconf _NPROCESSORS_CONF)\$" "cpus= of a file with CPU 1 alone"
fi
echo "$on" >$tracefs/tracing_on
echo "$compared comparisons with trace-cmd report"
exit $fail
