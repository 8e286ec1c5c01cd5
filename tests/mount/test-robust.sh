#!/bin/sh
# SPDX-License-Identifier: MIT
# test-robust.sh CASE USERTP CONS-PROG: usertp mount under stress and failure (issue 12, 4-5).
#   concurrent     200 processes read and write control files at once for 3 s: no deadlock,
#                  no error but the kernel's, and the state is what the last writes made it
#   killed-program a program SIGKILLed right after it fired: the mount answers at once, and
#                  holds every record the program committed
#   killed-mount   the mount SIGKILLed: the program goes on (fires, answers) untraced
#   unmount        fusermount3 -u, and umount (root): the mount exits 0
#   other-user     an ordinary user mounts (through fusermount3), reads and unmounts
#   stalled-reader a `cat trace_pipe` stopped (SIGSTOP) while 200000 records are fired: the
#                  program never waits, and per CPU held + overwritten + dropped = fired
# Exit 77 where FUSE cannot be used (or, for other-user, without root or a second user).
set -eu
case=$1 usertp=$2 cons=$3
test_name=robust
. "$(dirname "$0")/mount-lib.sh"
# start: cons-prog, the mount, and cons-prog's events seen there
start() {
	start_cons
	start_mount
	wait_until "cons-prog's events" grep -q '^cons:cons_a$' "$mnt/available_events"
}

case $case in
concurrent)
	start
	echo "fire 0" >&3
	# 100 writers and 100 readers, each its own process, for 3 s; a writer's errors must be
	# the kernel's (EINVAL for its bad filter), nothing else.
	end=$(($(date +%s) + 3))
	for i in $(seq 100); do
		(
			while [ "$(date +%s)" -lt $end ]; do
				echo cons:cons_a >>"$mnt/set_event"
				echo 0 >"$mnt/events/cons/cons_b/enable"
				echo "seq > $i" >"$mnt/events/cons/cons_a/filter"
				echo "nosuch == 1" >"$mnt/events/cons/cons_b/filter" 2>/dev/null && echo "took a bad filter"
				echo $((i % 2)) >"$mnt/tracing_on"
				echo "fire 1" >&3
			done
		) >"$dir/w$i" 2>&1 &
		pids="$pids $!"
		(
			while [ "$(date +%s)" -lt $end ]; do
				cat "$mnt/set_event" "$mnt/events/enable" "$mnt/events/cons/cons_a/filter" \
					"$mnt/available_events" "$mnt/tracing_on" "$mnt/error_log" >/dev/null
				head -c 4096 "$mnt/trace" >/dev/null
				ls "$mnt/events/cons" >/dev/null
			done
		) >"$dir/r$i" 2>&1 &
		pids="$pids $!"
	done
	# Every one of them ends (a deadlock would hold them: the test's timeout would say so).
	for q in $pids; do wait $q || true; done
	pids=
	cat "$dir"/w* "$dir"/r* >"$dir/errors"
	[ ! -s "$dir/errors" ] || { bad "the writers and readers said:"; sort "$dir/errors" | uniq -c | head; }
	# The state is what the last writes make it.
	echo 'cons:cons_b' >"$mnt/set_event"
	echo 1 >"$mnt/tracing_on"
	echo 'seq < 1000' >"$mnt/events/cons/cons_b/filter"
	[ "$(cat "$mnt/set_event")" = cons:cons_b ] || bad "set_event: $(cat "$mnt/set_event")"
	[ "$(cat "$mnt/events/cons/cons_a/enable")$(cat "$mnt/events/cons/cons_b/enable")" = 01 ] || bad "enable files"
	[ "$(cat "$mnt/events/cons/cons_b/filter")" = 'seq < 1000' ] || bad "filter: $(cat "$mnt/events/cons/cons_b/filter")"
	[ "$(grep -c '^\[' "$mnt/error_log")" -eq 8 ] || bad "error_log: $(grep -c '^\[' "$mnt/error_log") entries, not 8"
	: >"$mnt/trace"
	fire 3
	wait_until "cons_b recorded" sh -c "[ \$(grep -c ' cons_b: ' \"$mnt/trace\") -eq 3 ]"
	[ "$(grep -c ' cons_a: ' "$mnt/trace")" -eq 0 ] || bad "cons_a recorded after it was disabled"
	;;
killed-program)
	start
	echo cons:cons_a >"$mnt/set_event"
	fire 5000
	kill -KILL $p
	wait $p 2>/dev/null || true
	p=
	# The mount answers at once, and holds all it committed: 5000 (or held + overwritten).
	timeout 5 cat "$mnt/tracing_on" >/dev/null || bad "the mount does not answer after the program was killed"
	wait_until "all 5000 held" sh -c "[ \$(grep -c ' cons_a: ' \"$mnt/trace\") -eq 5000 ]"
	[ "$(sum_stats 'dropped events,overrun')" -eq 0 ] || bad "records lost: $(sum_stats 'dropped events,overrun')"
	;;
killed-mount)
	start
	echo cons:cons_a >"$mnt/set_event"
	fire 10
	kill -KILL $m
	wait $m 2>/dev/null || true
	m=
	# The program goes on, untraced: it fires and answers; its list shows no session.
	fire 100000
	kill -0 $p || bad "the program died with the mount"
	"$usertp" list -v -P $p >"$dir/list" 2>&1 || bad "usertp list -v -P: $(cat "$dir/list")"
	! grep -q '^ *session ' "$dir/list" || { bad "the program still records for the killed mount:"; cat "$dir/list"; }
	;;
unmount)
	start
	fusermount3 -u "$mnt" || bad "fusermount3 -u failed"
	rc=0
	wait $m || rc=$?
	m=
	[ $rc -eq 0 ] || bad "the mount exited with $rc after fusermount3 -u"
	if [ "$(id -u)" -eq 0 ]; then
		"$usertp" mount -f "$mnt" 2>>"$dir/mount.err" &
		m=$!
		wait_until "the mount" mountpoint -q "$mnt"
		umount "$mnt" || bad "umount failed"
		rc=0
		wait $m || rc=$?
		m=
		[ $rc -eq 0 ] || bad "the mount exited with $rc after umount"
	fi
	[ ! -s "$dir/mount.err" ] || { bad "the mount said:"; cat "$dir/mount.err"; }
	kill -0 $p || bad "the program died with the mount"
	;;
other-user)
	[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to run as a second user"; exit 77; }
	command -v setpriv >/dev/null || { echo "SKIP: no setpriv"; exit 77; }
	id usertp-test2 >/dev/null 2>&1 || useradd -M -r -s /usr/sbin/nologin usertp-test2 ||
		{ echo "SKIP: cannot add a user"; exit 77; }
	chmod 755 "$dir"
	# Debian's udev makes /dev/fuse 0666; where it is not (a container), the user gets it for
	# the test's length, and it is put back.
	fuse_mode=$(stat -c %a /dev/fuse)
	if [ "$fuse_mode" != 666 ]; then
		at_exit='chmod "$fuse_mode" /dev/fuse'
		chmod 666 /dev/fuse
	fi
	mkdir -m 700 "$dir/other" "$dir/other/xdg" "$dir/other/mnt"
	cp "$usertp" "$dir/other/usertp"
	chown -R usertp-test2 "$dir/other"
	as_other() {
		setpriv --reuid=usertp-test2 --regid=usertp-test2 --clear-groups \
			env XDG_RUNTIME_DIR="$dir/other/xdg" HOME="$dir/other" "$@"
	}
	as_other "$dir/other/usertp" mount -f "$dir/other/mnt" 2>"$dir/other.err" &
	m=$!
	wait_until "the user's mount" as_other mountpoint -q "$dir/other/mnt"
	as_other cat "$dir/other/mnt/available_events" "$dir/other/mnt/tracing_on" >"$dir/other.out" 2>&1 ||
		{ bad "the user cannot read the mount:"; cat "$dir/other.out"; }
	as_other sh -c "echo 0 > '$dir/other/mnt/tracing_on'" || bad "the user cannot write tracing_on"
	[ "$(as_other cat "$dir/other/mnt/tracing_on")" = 0 ] || bad "tracing_on"
	as_other fusermount3 -u "$dir/other/mnt" || bad "the user cannot unmount"
	rc=0
	wait $m || rc=$?
	m=
	[ $rc -eq 0 ] || { bad "the user's mount exited with $rc:"; cat "$dir/other.err"; }
	;;
stalled-reader)
	start
	echo cons:cons_a >"$mnt/set_event"
	cat "$mnt/trace_pipe" >/dev/null &
	reader=$!
	pids=$reader
	sleep 0.2
	kill -STOP $reader
	fire 200000
	# Every cons_a: held, overwritten or dropped (counted), per CPU and in all.
	wait_until "200000 counted" sh -c "[ \$(cat \"$mnt\"/per_cpu/cpu*/stats | awk '/^(entries|overrun|dropped events|read events): / { s += \$NF } END { print s }') -eq 200000 ]"
	kill -CONT $reader
	kill $reader
	;;
*)
	echo "test-robust: unknown case $case" >&2
	exit 2
	;;
esac
exit $fail
