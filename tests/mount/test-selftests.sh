#!/bin/sh
# SPDX-License-Identifier: MIT
# test-selftests.sh USERTP REC-PROG: the kernel's own ftrace selftests for the event interface
# (tools/testing/selftests/ftrace, test.d/00basic, event, filter, instances; Debian ships
# them in the linux-source package) run by their own ftracetest on usertp mount, bind-mounted
# over /sys/kernel/tracing in a private mount namespace (unshare -m).
#
# The tests are the kernel's but for the events they use, which are user-space ones here:
# sched_switch (frequent, from every task) is rec_spin, fired 1000 times a second by each of
# three threads of a rec-prog running beside; the sched system is rec; their `yield` (which
# makes the kernel schedule) starts two rec-prog children that fire rec_event, rec_mark and
# rec_spin; event-no-pid.tc enables rec where it enabled syscalls.
#
# Every test must pass, but those that cannot apply (NOT_APPLICABLE below, each with why).
# Exit 77 without root, unshare, FUSE, or the selftests (linux-source, or USERTP_FTRACE_SELFTESTS
# naming the directory).
set -eu
usertp=$1 rec=$2
here=$(dirname "$0")
[ "$(id -u)" -eq 0 ] || { echo "test-selftests: needs root (a private mount namespace): skipped"; exit 77; }
command -v unshare >/dev/null || { echo "test-selftests: no unshare: skipped"; exit 77; }
test_name=selftests
. "$here/mount-lib.sh"

# The selftests: a directory given, or those of the linux-source package.
if [ -n "${USERTP_FTRACE_SELFTESTS:-}" ]; then
	cp -r "$USERTP_FTRACE_SELFTESTS" "$dir/ftrace"
else
	tarball=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | tail -1)
	[ -n "$tarball" ] || { echo "test-selftests: no /usr/src/linux-source-*.tar.xz (Debian: linux-source): skipped"; exit 77; }
	top=$(basename "$tarball" .tar.xz)
	tar -xJf "$tarball" -C "$dir" --wildcards "$top/tools/testing/selftests/ftrace/*"
	mv "$dir/$top/tools/testing/selftests/ftrace" "$dir/ftrace"
fi
t=$dir/ftrace/test.d
for f in "$t"/00basic/*.tc "$t"/event/*.tc "$t"/filter/*.tc "$t"/instances/*.tc; do
	sed -i 's/sched_switch/rec_spin/g; s/\bsched:/rec:/g; s#events/sched\b#events/rec#g;
		s/grep -q sched available_events/grep -q rec available_events/;
		s/enable_system syscalls/enable_system rec/' "$f"
done
# yield: two children of the test's shell that fire rec events (as the kernel's yield makes
# the shell's task switch).
cat >"$dir/yield" <<EOF
yield() {
    "$rec" handler 1 >"$dir/y1.\$\$" 2>/dev/null &
    y1=\$!
    "$rec" wait-slow 1 >"$dir/y2.\$\$" 2>/dev/null &
    y2=\$!
    until grep -q ready "$dir/y1.\$\$" 2>/dev/null && grep -q ready "$dir/y2.\$\$" 2>/dev/null; do sleep 0.01; done
    kill -TERM \$y1; kill -KILL \$y2; wait \$y1 \$y2 || true
    rm -f "$dir/y1.\$\$" "$dir/y2.\$\$"
}
EOF
awk -v y="$dir/yield" '/^yield\(\) \{/ { while ((getline l < y) > 0) print l; skip = 1; next }
	skip && /^\}/ { skip = 0; next } !skip' "$t/functions" >"$t/functions.new"
mv "$t/functions.new" "$t/functions"
grep -q "wait-slow" "$t/functions" || { echo "FAIL: yield() not replaced"; exit 1; }

"$rec" wait-slow 0 >"$dir/busy.out" &
pids=$!
wait_until "rec-prog ready" grep -q ready "$dir/busy.out"
start_mount
wait_until "rec-prog's events" grep -q '^rec:rec_spin$' "$mnt/available_events"

unshare -m sh -c "mount --bind '$mnt' /sys/kernel/tracing && cd '$dir/ftrace' &&
	./ftracetest -l '$dir/logs' test.d/00basic test.d/event test.d/filter test.d/instances" \
	>"$dir/out" 2>&1 || true
cat "$dir/out"

# What cannot apply, and why.
NOT_APPLICABLE='Basic trace clock test|Snapshot and tracing setting|Test trace_printk from module'
#   Basic trace clock test: it selects each clock trace_clock lists (usertp's pass), then
#     writes `local`, the kernel's sched_clock, which user space cannot read: refused.
#   Snapshot and tracing setting: no snapshot buffer in usertp (the harness says UNSUPPORTED).
#   Test trace_printk from module: a kernel module's trace_printk (UNRESOLVED: no module).
results=$(grep -cE '^\[[0-9]+\] .*\[(PASS|FAIL|UNRESOLVED|UNTESTED|UNSUPPORTED|XFAIL|UNDEFINED)\]' "$dir/out" || true)
[ "$results" -ge 20 ] || { echo "FAIL: ftracetest ran $results tests"; fail=1; }
grep -E '^\[[0-9]+\] ' "$dir/out" | grep -v '\[PASS\]$' | grep -Ev "\] (\(instance\)  )?($NOT_APPLICABLE)	" >"$dir/bad" || true
if [ -s "$dir/bad" ]; then
	echo "FAIL: these selftests do not pass on usertp mount:"
	cat "$dir/bad"
	for log in "$dir"/logs/*/*.tc-log.*; do
		[ -f "$log" ] || continue
		echo "--- $log"
		tail -n 15 "$log"
	done
	fail=1
fi
# The mount must still be serving, having said nothing.
if ! kill -0 $m 2>/dev/null; then
	rc=0
	wait $m || rc=$?
	m=
	echo "FAIL: the mount died (status $rc): $(cat "$dir/mount.err")"
	fail=1
fi
[ ! -s "$dir/mount.err" ] || { echo "FAIL: the mount said:"; cat "$dir/mount.err"; fail=1; }
exit $fail
