#!/bin/sh
# SPDX-License-Identifier: MIT
# test-robust.sh CASE USERTP CONS-PROG [CTL-CONNECT SOCK-LISTEN REL-LEN-PROG]: usertp mount under stress and failure (issue 12, 4-5).
#   concurrent     200 processes read and write control files at once for 3 s: no deadlock,
#                  no error but the kernel's, and the state is what the last writes made it
#   killed-program a program SIGKILLed right after it fired: the mount answers at once, and
#                  holds every record the program committed
#   killed-mount   the mount SIGKILLed: the program goes on (fires, answers) untraced
#   unmount        fusermount3 -u, and umount (root): the mount exits 0
#   other-user     an ordinary user mounts (through fusermount3), reads and unmounts
#   allow-other    root mounts with --allow-other and tracefs's -o gid=,mode=: a user of that
#                  group reads, writes trace_marker, and is refused what tracefs's modes
#                  refuse a group (EACCES, nothing changed); without either, kept out
#   instance-slam  five loops of mkdir and rmdir of instances beside `ls -lR` for 3 s, as the
#                  kernel's instance selftest: the mount serves on, said nothing (libfuse gives
#                  a directory removed while it is read no path: the mount died on it once)
#   event-fork     with options/event-fork, set_event_pid reads back the threads the programs
#                  added (a listed thread's new thread) while they live, as the kernel's
#   event-fork-shell  the kernel's idiom from a shell: `echo $$ > set_event_pid; echo 1 >
#                  options/event-fork; ./prog`: the program the shell starts is recorded from its
#                  first event, and one that is not the shell's is not; without event-fork
#                  neither is (issue 21, item 10; a program takes its nearest listed ancestor's
#                  verdict, src/lib/pid-filter.c: this passed before the issue's session too)
#   every-user     root's mount records another user's programs, those running and those that
#                  start later (from their first event); that user's lies (another's pid, a
#                  parent not its own) and garbage change nothing; root's `usertp record -a`
#                  records them too; nothing is left in the system directory
#   pipe-readers   1200 readers wait in trace_pipe (and trace_pipe_raw), none refused, and
#                  hold no thread of the mount: every other file is served meanwhile, the
#                  fired records reach the readers, and each reader ends when killed (issue
#                  21, item 14: the mount served 10 requests at once, not its 64, and 200
#                  readers held them all: every other file hung; then past 960 waiting
#                  readers, EBUSY)
#   pipe-kill      readers of trace_pipe and trace_pipe_raw killed while records flow to them,
#                  15 rounds of 100:
#                  the mount stays and serves.  A reader killed mid-read has its file released
#                  while its read is parked, and the read served after: it used the freed file
#                  (AddressSanitizer: heap-use-after-free in fs_read, within 3 rounds of 150
#                  readers, 4 runs of 4), and a read parked as its interrupt came could be
#                  freed twice (fs-loop.c)
#   pipe-share     with --allow-other, a second user's 600 readers of trace_pipe all wait
#                  (before: its 241st read failed with EBUSY), while root's readers still
#                  wait and every other file is served
#   stalls         another user's fake endpoints (listening, never answering) and stopped
#                  programs, and its connections that send part of a message to the socket of
#                  every user: root's mount starts, makes an instance and takes set_event
#                  writes within 5 s each (issue 21, item 14: 10 s per fake endpoint, one after
#                  the other, and 5 s per stopped program), and a root program's events are all
#                  recorded meanwhile.  (The only test that times: 5 s, for what took 60.)
#   flood          a second user floods the socket of every user (20 loops of connections
#                  that send part of a message) while 20 programs of a third user start: each
#                  of those is recorded from its first event (issue 21, item 14: 13 of 20 were
#                  not, before a user whose peer stalls was kept out; with 30 programs over 13 s,
#                  past the 10 s that lasts, all 30 were recorded too)
#   stalled-reader a `cat trace_pipe` stopped (SIGSTOP) while 200000 records are fired: the
#                  program never waits, and per CPU held + overwritten + dropped = fired
#   deputy         another user's runtime directory holds, for a process of that user, a link
#                  named as its endpoint to a root-only socket: root's mount and usertp list
#                  never connect to it (issue 21, item 15: the mount sent it a hello)
#   idle-cost      a program that starts while the mount runs, nothing enabled, holds no buffer
#                  pages (issue 21, item 7: before, every program that started faulted in its
#                  full per-CPU buffers, 2.9 MB on 2 CPUs); once an event is enabled they are in,
#                  and every event fired is in the trace
#   tiny-buffer    buffer_size_kb of 4 and 8, a small and a 4054-byte trace_marker write (one
#                  evicts the other: the tail the insertion kept was freed, issue 21 item 13),
#                  over and over: the records held and the stats agree, and clear to 0
#   refused-format a program fires 1000 records of an event whose format is refused
#                  (libtraceevent faults on it) and 1000 of one that prints: all are on the
#                  mount at once, those of no format as such (before: the mount waited 200 ms
#                  for the format at each record, and every file waited with it: 200 s)
#   names          a thread's first record shows its name as soon as it is on the mount (the
#                  kernel saves a task's name as it records; before, "<...>-TID" until the
#                  program told its threads' names, once a second)
#   names-ended    threads that end at once (200, one after another), read from trace_pipe as
#                  they come: every line names its thread, though none is in /proc by then
#                  (the mount asks the program, which noted the name before the record; before,
#                  lines read before the program told its names, once a second, said "<...>")
# Exit 77 where FUSE cannot be used (or, for other-user and every-user, without root or a
# second user).
set -eu
case=$1 usertp=$2 cons=$3 ctlconnect=${4:-} sock_listen=${5:-} rellen=${6:-}
test_name=robust
. "$(dirname "$0")/mount-lib.sh"
# start: cons-prog, the mount, and cons-prog's events seen there
start() {
	start_cons
	start_mount
	wait_until "cons-prog's events" grep -q '^cons:cons_a$' "$mnt/available_events"
}

case $case in
deputy)
	need_second_user
	chmod 755 "$dir"
	mkdir -m 700 "$dir/root-only"
	"$sock_listen" "$dir/root-only/daemon.sock" "$dir/daemon.log" >"$dir/listen.out" &
	pids="$pids $!"
	wait_until "the root-only socket" grep -q listening "$dir/listen.out"
	mkdir -m 700 "$dir/other" "$dir/other/xdg" "$dir/other/xdg/usertp"
	chown -R usertp-test2 "$dir/other"
	setpriv --reuid=usertp-test2 --regid=usertp-test2 --clear-groups \
		env XDG_RUNTIME_DIR="$dir/other/xdg" sleep 60 &
	q=$!
	pids="$pids $q"
	wait_until "the other user's process" sh -c "[ \$(stat -c %u /proc/$q) -ne 0 ]"
	setpriv --reuid=usertp-test2 --regid=usertp-test2 --clear-groups \
		ln -s "$dir/root-only/daemon.sock" "$dir/other/xdg/usertp/$q.sock"
	start_mount
	cat "$mnt/available_events" >/dev/null
	"$usertp" list >/dev/null 2>&1 || true
	"$usertp" list -P $q >/dev/null 2>&1 || true
	sleep 0.5
	[ ! -s "$dir/daemon.log" ] || { bad "root connected to the root-only socket through the link:"; head -3 "$dir/daemon.log"; }
	kill -0 $m || bad "the mount died"
	;;
idle-cost)
	start_mount
	# (cons-prog has usertp_printk() sites, which the top level records while trace_printk
	# is 1, as the kernel's: then something is enabled.)
	echo 0 >"$mnt/options/trace_printk"
	start_cons
	wait_until "cons-prog's events" grep -q '^cons:cons_a$' "$mnt/available_events"
	# The session's region: its bytes in memory, against the buffers' size.
	held() {
		for f in /proc/$p/fd/*; do
			case $(readlink "$f") in "/memfd:usertp-buffers"*) stat -L -c '%b %B %s' "$f" ;; esac
		done | awk '{ held += $1 * $2; size += $3 } END { print held + 0, size + 0 }'
	}
	set -- $(held)
	[ "$2" -gt 1000000 ] || bad "no session's buffers of the mount in the program: $2 bytes"
	[ "$1" -le 65536 ] || bad "nothing enabled, yet $1 of the buffers' $2 bytes in memory"
	echo 1 >"$mnt/events/cons/enable"
	set -- $(held)
	[ "$1" -ge $(($2 * 9 / 10)) ] || bad "events enabled, yet only $1 of the buffers' $2 bytes in memory"
	fire 1000
	# (The mount reads the program's pages as they fill, and at a read of trace: wait.)
	wait_dump='grep -c ": cons_[ab]: " "$mnt/trace"; cat "$mnt"/per_cpu/cpu*/stats'
	wait_until "2000 events in the trace" sh -c "[ \$(grep -c ': cons_[ab]: ' '$mnt/trace') -eq 2000 ]"
	wait_dump=
	;;
tiny-buffer)
	start_mount
	big=$(head -c 4054 /dev/zero | tr '\0' x)
	for kb in 4 8; do
		echo $kb >"$mnt/buffer_size_kb"
		i=0
		while [ $i -lt 50 ]; do
			echo small-$i >"$mnt/trace_marker"
			printf %s "$big" >"$mnt/trace_marker"
			i=$((i + 1))
		done
		lines=$(grep -c 'tracing_mark_write: ' "$mnt/trace" || true)
		entries=$(sum_stats entries)
		[ "$lines" = "$entries" ] || bad "kb=$kb: trace holds $lines records, stats say $entries"
		[ "$lines" -ge 1 ] || bad "kb=$kb: no record held"
		: >"$mnt/trace"
		[ "$(sum_stats entries)" -eq 0 ] || bad "kb=$kb: entries $(sum_stats entries) after clearing"
		[ -z "$(grep -v '^#' "$mnt/trace")" ] || bad "kb=$kb: records after clearing"
	done
	kill -0 $m || bad "the mount died"
	;;
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
	need_second_user
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
instance-slam)
	start
	end=$(($(date +%s) + 3))
	for i in 1 2 3 4 5; do
		(cd "$mnt/instances" && while [ "$(date +%s)" -lt $end ]; do
			mkdir x; mkdir y; mkdir z; rmdir x; rmdir y; rmdir z
		done 2>/dev/null) &
		pids="$pids $!"
	done
	(cd "$mnt" && while [ "$(date +%s)" -lt $end ]; do ls -lR >/dev/null 2>&1; done) &
	pids="$pids $!"
	for q in $pids; do wait $q || true; done
	pids=
	kill -0 $m || bad "the mount died"
	mkdir "$mnt/instances/x" && rmdir "$mnt/instances/x" || bad "mkdir and rmdir after"
	[ -z "$(ls "$mnt/instances")" ] || { bad "instances left:"; ls "$mnt/instances"; }
	[ ! -s "$dir/mount.err" ] || { bad "the mount said:"; cat "$dir/mount.err"; }
	;;
event-fork)
	start
	echo 1 >"$mnt/options/event-fork"
	echo "$p" >"$mnt/set_event_pid"
	echo cons:cons_a >"$mnt/set_event"
	echo hold >&3
	wait_until "a held thread" grep -q '^held ' "$dir/cons.out"
	tid=$(sed -n 's/^held //p' "$dir/cons.out")
	[ "$(cat "$mnt/set_event_pid" | tr '\n' ' ')" = "$(printf '%s\n' "$p" "$tid" | sort -n | tr '\n' ' ')" ] ||
		{ bad "set_event_pid with the new thread followed:"; cat "$mnt/set_event_pid"; }
	wait_until "the followed thread's cons_a" grep -q "cons-prog-$tid .* cons_a: seq=0" "$mnt/trace"
	echo release >&3
	wait_until "the thread ended" grep -q '^released' "$dir/cons.out"
	wait_until "the ended thread taken off" sh -c "[ \"\$(cat '$mnt/set_event_pid')\" = $p ]"
	# Without event-fork: what was written, and nothing else.
	echo 0 >"$mnt/options/event-fork"
	echo hold >&3
	wait_until "a second held thread" sh -c "[ \$(grep -c '^held ' '$dir/cons.out') -eq 2 ]"
	[ "$(cat "$mnt/set_event_pid")" = "$p" ] || { bad "set_event_pid without event-fork:"; cat "$mnt/set_event_pid"; }
	echo release >&3
	[ ! -s "$dir/mount.err" ] || { bad "the mount said:"; cat "$dir/mount.err"; }
	;;
allow-other)
	need_second_user
	chmod 755 "$dir"
	as_other() {
		setpriv --reuid=usertp-test2 --regid=usertp-test2 --clear-groups "$@"
	}
	start_cons
	group=$(id -g usertp-test2)
	for opts in "--allow-other" "-o gid=$group,mode=0750" "--allow-other -o gid=$group,mode=0750"; do
		# shellcheck disable=SC2086
		"$usertp" mount -f $opts "$mnt" 2>>"$dir/mount.err" &
		m=$!
		wait_until "the mount ($opts)" mountpoint -q "$mnt"
		if as_other ls "$mnt" >"$dir/ls" 2>&1; then
			in=yes
		else
			in=no
			grep -q 'Permission denied' "$dir/ls" || { bad "kept out, but not by EACCES ($opts):"; cat "$dir/ls"; }
		fi
		case $opts in
		--allow-other\ -o*) [ $in = yes ] || { bad "the group is kept out ($opts)"; cat "$dir/ls"; } ;;
		*) [ $in = no ] || bad "let in with $opts alone" ;;
		esac
		[ $in = yes ] || { fusermount3 -u "$mnt"; wait $m; m=; continue; }
		[ "$(stat -c '%a %g' "$mnt" "$mnt/set_event" "$mnt/available_events" "$mnt/trace_marker" "$mnt/instances" | tr '\n' ' ')" = \
		  "750 $group 640 $group 440 $group 220 $group 750 $group " ] || { bad "modes:"; stat -c '%a %g %n' "$mnt"/*; }
		as_other grep -q '^cons:cons_a$' "$mnt/available_events" || bad "the group cannot read available_events"
		echo cons:cons_b >"$mnt/set_event"
		as_other sh -c "echo cons:cons_a > '$mnt/set_event'" 2>"$dir/w" && bad "the group wrote set_event"
		grep -q 'Permission denied' "$dir/w" || { bad "set_event refused, but not by EACCES:"; cat "$dir/w"; }
		[ "$(cat "$mnt/set_event")" = cons:cons_b ] || bad "set_event changed by a refused write"
		as_other mkdir "$mnt/instances/theirs" 2>"$dir/w" && bad "the group made an instance"
		[ ! -e "$mnt/instances/theirs" ] || bad "an instance of the group's is there"
		as_other sh -c "echo from-the-group > '$mnt/trace_marker'" || bad "the group cannot write trace_marker"
		as_other grep -q 'tracing_mark_write: from-the-group' "$mnt/trace" || bad "the group's marker is not in trace"
		fusermount3 -u "$mnt"
		wait $m || bad "the mount failed ($opts)"
		m=
	done
	[ ! -s "$dir/mount.err" ] || { bad "the mount said:"; cat "$dir/mount.err"; }
	;;
event-fork-shell)
	start
	echo 'cons:*' >"$mnt/set_event"
	sh -c 'echo $$ >"$1/set_event_pid"; echo 1 >"$1/options/event-fork"; "$2" auto 3; true' \
		sh "$mnt" "$cons" >"$dir/shell.out" 2>&1 || bad "the shell's program failed"
	fire 2
	wait_until "the shell's program's 6 events" sh -c "[ \$(grep -c 'cons_[ab]: seq=' '$mnt/trace') -ge 6 ]"
	sleep 0.3
	grep 'cons_a: seq=' "$mnt/trace" | grep -v "cons-prog-$p " | sed 's/.*seq=//' >"$dir/seqs"
	[ "$(tr '\n' ' ' <"$dir/seqs")" = "0 1 2 " ] || { bad "the shell's program's cons_a (0 1 2):"; cat "$mnt/trace"; }
	! grep -q "cons-prog-$p " "$mnt/trace" || bad "a program the shell did not start was recorded"
	# Without event-fork, the program a listed shell starts is not listed.
	: >"$mnt/trace"
	sh -c 'echo $$ >"$1/set_event_pid"; echo 0 >"$1/options/event-fork"; "$2" auto 3; true' \
		sh "$mnt" "$cons" >>"$dir/shell.out" 2>&1 || bad "the shell's program failed"
	sleep 0.3
	! grep -q 'cons_[ab]: seq=' "$mnt/trace" || { bad "recorded without event-fork:"; cat "$mnt/trace"; }
	[ ! -s "$dir/mount.err" ] || { bad "the mount said:"; cat "$dir/mount.err"; }
	;;
every-user)
	need_second_user
	# A system directory of the test's own (USERTP_SYSTEM_DIR), that both sides use.
	chmod 755 "$dir"
	export USERTP_SYSTEM_DIR="$dir/system"
	mkdir -m 700 "$dir/other" "$dir/other/xdg"
	cp "$cons" "$ctlconnect" "$dir/other/"
	chown -R usertp-test2 "$dir/other"
	as_other() {
		setpriv --reuid=usertp-test2 --regid=usertp-test2 --clear-groups \
			env XDG_RUNTIME_DIR="$dir/other/xdg" USERTP_SYSTEM_DIR="$USERTP_SYSTEM_DIR" "$@"
	}
	mkfifo -m 666 "$dir/in"
	as_other "$dir/other/cons-prog" <"$dir/in" >"$dir/cons.out" &
	p=$!
	exec 3>"$dir/in"
	wait_until "the other user's program" grep -q ready "$dir/cons.out"
	q=$(sed -n 's/^ready //p' "$dir/cons.out")
	pids=$q
	start_mount
	wait_until "its events listed" grep -q '^cons:cons_a$' "$mnt/available_events"
	echo cons:cons_a >"$mnt/set_event"
	fire 3
	wait_until "3 cons_a of the running program" sh -c "[ \$(grep -c 'cons-prog-$q .* cons_a: seq=' \"$mnt/trace\") -eq 3 ]"
	# One that starts later: recorded from its first event.
	as_other "$dir/other/cons-prog" auto 2 >"$dir/later.out" 2>&1 || bad "the later program failed"
	others() { grep 'cons_a: seq=' "$mnt/trace" | grep -v "cons-prog-$q " || true; }
	[ "$(others | sed 's/.*seq=//' | tr '\n' ' ')" = "0 1 " ] ||
		{ bad "the later program's cons_a (seq 0 and 1):"; cat "$mnt/trace"; }
	# Lies and garbage, from that user, on the socket every user may use.
	sock=$(ls "$USERTP_SYSTEM_DIR"/all.*)
	as_other "$dir/other/ctl-connect" "$sock" "join pid=$q ppid=1 comm=liar" >/dev/null 2>&1 || true
	as_other "$dir/other/ctl-connect" "$sock" "fork pid=$q ppid=1 size=4096" >/dev/null 2>&1 || true
	as_other "$dir/other/ctl-connect" "$sock" --raw 00ff00ff0a >/dev/null 2>&1 || true
	fire 2
	wait_until "5 cons_a of the running program" sh -c "[ \$(grep -c 'cons-prog-$q .* cons_a: seq=' \"$mnt/trace\") -eq 5 ]"
	# (That user is kept out for a while now: its programs start untraced, and say nothing.)
	as_other "$dir/other/cons-prog" auto 1 >"$dir/banned.out" 2>&1 || bad "a program of the banned user failed"
	[ ! -s "$dir/banned.out" ] || { bad "a program of the banned user said:"; cat "$dir/banned.out"; }
	[ "$(others | wc -l)" -eq 2 ] || bad "a program of the banned user was recorded"
	kill -0 $q || bad "the program died"
	# Root's record -a: the other user's program too (in the record's own system socket).
	"$usertp" record -q -a -e cons:cons_a -o "$dir/a.dat" 2>"$dir/rec.err" &
	rec=$!
	pids="$pids $rec"
	wait_until "record -a's socket" sh -c "[ \$(ls '$USERTP_SYSTEM_DIR' | wc -l) -eq 2 ]"
	wait_source "$dir/a.dat" "$q"
	fire 4
	sleep 0.3
	kill -INT $rec
	wait $rec || { bad "record -a failed:"; cat "$dir/rec.err"; }
	"$usertp" report -i "$dir/a.dat" >"$dir/a.txt" 2>&1 || bad "report failed"
	[ "$(grep -c "cons-prog-$q .* cons_a: *seq=" "$dir/a.txt")" -eq 4 ] || { bad "record -a: not 4 cons_a"; cat "$dir/a.txt"; }
	fusermount3 -u "$mnt"
	wait $m || bad "the mount failed"
	m=
	[ -z "$(ls -A "$USERTP_SYSTEM_DIR")" ] || { bad "left in the system directory:"; ls -la "$USERTP_SYSTEM_DIR"; }
	[ ! -s "$dir/mount.err" ] || { bad "the mount said:"; cat "$dir/mount.err"; }
	;;
pipe-readers)
	start
	echo cons:cons_a >"$mnt/set_event"
	# (The raw readers in an instance of their own: they would take the top level's records.)
	mkdir "$mnt/instances/raw"
	# 1200 readers, more than the mount has threads (1024): a read with nothing to give is
	# parked without a thread (fs-loop.c), so none is refused (before: past 960 waiting
	# reads, EBUSY) and the mount keeps a few threads.
	readers=
	: >"$dir/readers.err"
	for i in $(seq 600); do
		cat "$mnt/trace_pipe" >"$dir/pipe.$i" 2>>"$dir/readers.err" &
		readers="$readers $!"
		cat "$mnt/instances/raw/per_cpu/cpu0/trace_pipe_raw" >/dev/null 2>>"$dir/readers.err" &
		readers="$readers $!"
	done
	pids=$readers
	wait_until "1200 readers waiting" sh -c "[ \$(ls -l /proc/*/fd/ 2>/dev/null | grep -c ' -> $mnt/.*trace_pipe') -ge 1200 ]"
	sleep 1
	[ ! -s "$dir/readers.err" ] || { bad "readers refused:"; sort "$dir/readers.err" | uniq -c; }
	threads=$(awk '/^Threads:/ { print $2 }' "/proc/$m/status")
	[ "$threads" -lt 200 ] || bad "the mount has $threads threads for 1200 waiting readers"
	# The other files (a read, a write, a directory) are served meanwhile, at once: a
	# 20 s timeout only keeps the test from hanging when they are not.
	timeout 20 cat "$mnt/available_events" >"$dir/avail" || bad "available_events not served"
	grep -q '^cons:cons_a$' "$dir/avail" || bad "available_events without cons:cons_a"
	timeout 20 sh -c "echo cons:cons_b >>'$mnt/set_event'" || bad "set_event not written"
	timeout 20 cat "$mnt/set_event" >"$dir/set_event" || bad "set_event not read"
	[ "$(sort "$dir/set_event" | tr "\n" " ")" = "cons:cons_a cons:cons_b " ] || { bad "set_event read back:"; cat "$dir/set_event"; }
	timeout 20 ls "$mnt/events/cons" >/dev/null || bad "events/cons not listed"
	fire 50
	wait_until "100 records in the readers" sh -c "[ \$(cat '$dir'/pipe.* | grep -c 'cons_[ab]: seq=') -eq 100 ]"
	kill $readers
	for r in $readers; do wait $r 2>/dev/null || true; done
	pids=
	timeout 20 cat "$mnt/trace_pipe" </dev/null >/dev/null &
	sleep 0.2
	kill $! && wait $! 2>/dev/null || true
	rmdir "$mnt/instances/raw" || bad "instances/raw not removed"
	;;
pipe-kill)
	start
	echo cons:cons_a >"$mnt/set_event"
	round=0
	while [ $round -lt 15 ]; do
		round=$((round + 1))
		readers=
		for i in $(seq 50); do
			cat "$mnt/trace_pipe" >/dev/null 2>&1 &
			readers="$readers $!"
			cat "$mnt/per_cpu/cpu0/trace_pipe_raw" >/dev/null 2>&1 &
			readers="$readers $!"
		done
		pids=$readers
		wait_until "100 readers waiting" sh -c "[ \$(ls -l /proc/*/fd/ 2>/dev/null | grep -c ' -> $mnt/.*trace_pipe') -ge 100 ]"
		echo "fire 300" >&3
		kill $readers 2>/dev/null || true
		for r in $readers; do wait $r 2>/dev/null || true; done
		pids=
		mountpoint -q "$mnt" || { bad "round $round: the mount is gone"; break; }
	done
	timeout 20 cat "$mnt/available_events" >"$dir/avail" || bad "available_events not served after"
	grep -q '^cons:cons_a$' "$dir/avail" || bad "available_events without cons:cons_a after"
	kill -0 "$m" 2>/dev/null || bad "the mount ended"
	;;
pipe-share)
	need_second_user
	chmod 755 "$dir"
	start_cons
	group=$(id -g usertp-test2)
	"$usertp" mount -f --allow-other -o gid=$group,mode=0750 "$mnt" 2>>"$dir/mount.err" &
	m=$!
	wait_until "the mount" mountpoint -q "$mnt"
	echo cons:cons_a >"$mnt/set_event"
	: >"$dir/other.err"
	chmod 666 "$dir/other.err"
	setpriv --reuid=usertp-test2 --regid=usertp-test2 --clear-groups sh -c \
		'for i in $(seq 600); do cat "$1/trace_pipe" >/dev/null 2>>"$2" & done; wait' sh "$mnt" "$dir/other.err" &
	readers=$!
	pids="$pids $readers"
	wait_until "the second user's 600 readers waiting" sh -c \
		"[ \$(ls -l /proc/*/fd/ 2>/dev/null | grep -c ' -> $mnt/trace_pipe') -ge 600 ]"
	sleep 1
	[ ! -s "$dir/other.err" ] || { bad "readers refused:"; sort "$dir/other.err" | uniq -c; }
	timeout 20 cat "$mnt/available_events" >/dev/null || bad "available_events not served"
	set +e
	timeout 1 cat "$mnt/trace_pipe" >/dev/null 2>"$dir/root.err"
	st=$?
	set -e
	[ $st -eq 124 ] || { bad "root's reader did not wait (exit $st):"; cat "$dir/root.err"; }
	pkill -u usertp-test2 -x cat || true
	wait $readers || true
	;;
stalls)
	need_second_user
	chmod 755 "$dir"
	export USERTP_SYSTEM_DIR="$dir/system"
	mkdir -m 700 "$dir/other" "$dir/other/xdg"
	cp "$cons" "$ctlconnect" "$sock_listen" "$dir/other/"
	chown -R usertp-test2 "$dir/other"
	# (Run with &: exec, so that $! is the program's pid, which the cleanup kills.)
	as_other() {
		exec setpriv --reuid=usertp-test2 --regid=usertp-test2 --clear-groups \
			env XDG_RUNTIME_DIR="$dir/other/xdg" USERTP_SYSTEM_DIR="$USERTP_SYSTEM_DIR" "$@"
	}
	ms() { echo $(($(date +%s%N) / 1000000)); }
	within_5s() { # WHAT START
		[ $(($(ms) - $2)) -lt 5000 ] || bad "$1 took $(($(ms) - $2)) ms"
	}
	start_cons
	# Three programs of the other user (they make its runtime directory), stopped later.
	stopped=
	for i in 1 2 3; do
		mkfifo -m 666 "$dir/in.$i"
		as_other "$dir/other/cons-prog" <"$dir/in.$i" >"$dir/other.$i.out" &
		stopped="$stopped $!"
		eval "exec $((3 + i))>\"\$dir/in.\$i\""
		wait_until "the other user's program $i" grep -q ready "$dir/other.$i.out"
	done
	pids="$stopped"
	rundir=$(dirname "$(ls "$dir"/other/xdg/*/*.sock | head -1)")
	# Six fake endpoints of that user, in its runtime directory, named as their pids.
	for i in 1 2 3 4 5 6; do
		as_other sh -c 'exec "$0" "$1/$$.sock" /dev/null hold' "$dir/other/sock-listen" "$rundir" >/dev/null &
		pids="$pids $!"
	done
	wait_until "six fake endpoints" sh -c "[ \$(ls '$rundir' | wc -l) -ge 9 ]"
	t=$(ms)
	start_mount
	wait_until "the events listed" grep -q '^cons:cons_a$' "$mnt/available_events"
	within_5s "the mount's start" $t
	t=$(ms)
	mkdir "$mnt/instances/x" || bad "mkdir instances/x failed"
	within_5s "mkdir instances/x" $t
	kill -STOP $stopped
	for i in 1 2 3; do
		t=$(ms)
		echo cons:cons_a >"$mnt/set_event" || bad "set_event write $i failed"
		within_5s "set_event write $i with three programs stopped" $t
	done
	# Ten connections that each send part of a message on the socket of every user.
	sock=$(ls "$USERTP_SYSTEM_DIR"/all.*)
	for i in 1 2 3 4 5 6 7 8 9 10; do
		as_other "$dir/other/ctl-connect" "$sock" --raw ff00000061 4 >/dev/null 2>&1 &
		pids="$pids $!"
	done
	t=$(ms)
	echo cons:cons_b >>"$mnt/set_event" || bad "set_event write failed"
	within_5s "set_event write with partial messages" $t
	fire 1000
	wait_until "root's program's 2000 events" sh -c "[ \$(grep -c 'cons-prog-$p .* cons_[ab]: seq=' \"$mnt/trace\") -eq 2000 ]"
	kill -CONT $stopped
	;;
flood)
	need_second_user
	id usertp-test3 >/dev/null 2>&1 || useradd -M -r -s /usr/sbin/nologin usertp-test3 ||
		{ echo "SKIP: cannot add a third user"; exit 77; }
	chmod 755 "$dir"
	export USERTP_SYSTEM_DIR="$dir/system"
	for u in 2 3; do
		mkdir -m 700 "$dir/u$u" "$dir/u$u/xdg"
		cp "$cons" "$ctlconnect" "$dir/u$u/"
		chown -R usertp-test$u "$dir/u$u"
	done
	as_user() { # N CMD...: as usertp-testN
		u=$1
		shift
		setpriv --reuid=usertp-test$u --regid=usertp-test$u --clear-groups \
			env XDG_RUNTIME_DIR="$dir/u$u/xdg" USERTP_SYSTEM_DIR="$USERTP_SYSTEM_DIR" "$@"
	}
	start_cons
	start_mount
	wait_until "cons-prog's events" grep -q '^cons:cons_a$' "$mnt/available_events"
	echo 'cons:*' >"$mnt/set_event"
	sock=$(ls "$USERTP_SYSTEM_DIR"/all.*)
	touch "$dir/flooding"
	for i in $(seq 20); do
		as_user 2 sh -c 'while [ -e "$0" ]; do "$1" "$2" --raw ff00000061 1 >/dev/null 2>&1; done' \
			"$dir/flooding" "$dir/u2/ctl-connect" "$sock" &
		pids="$pids $!"
	done
	sleep 0.5
	for i in $(seq 20); do
		as_user 3 "$dir/u3/cons-prog" auto 1 >>"$dir/u3.out" 2>&1 || bad "a program of the third user failed"
	done
	rm "$dir/flooding"
	n=$(grep 'cons_a: seq=0' "$mnt/trace" | grep -v "cons-prog-$p " | sed 's/^ *cons-prog-\([0-9]*\) .*/\1/' | sort -u | wc -l)
	[ "$n" -eq 20 ] || bad "$n of the third user's 20 programs recorded"
	;;
names-ended)
	start
	echo cons:cons_a >"$mnt/set_event"
	cat "$mnt/trace_pipe" >"$dir/pipe" &
	reader=$!
	for i in $(seq 200); do
		echo "thread 1" >&3
	done
	wait_until "200 threads" sh -c "[ \$(grep -c '^thread ' '$dir/cons.out') -eq 200 ]"
	wait_until "their 200 records read" sh -c "[ \$(grep -c ' cons_a: ' '$dir/pipe') -eq 200 ]"
	kill "$reader"
	for tid in $(sed -n 's/^thread //p' "$dir/cons.out"); do
		grep -q -- "^ *cons-prog-$tid .* cons_a: " "$dir/pipe" || { bad "thread $tid:"; grep -- "-$tid " "$dir/pipe"; }
	done
	;;
names)
	start
	echo cons:cons_a >"$mnt/set_event"
	for i in 1 2 3 4 5; do
		echo hold >&3
		wait_until "a held thread" sh -c "[ \$(grep -c '^held ' '$dir/cons.out') -eq $i ]"
		tid=$(grep '^held ' "$dir/cons.out" | tail -1 | cut -d' ' -f2)
		wait_until "thread $tid's record" sh -c "grep -- '-$tid .* cons_a: ' '$mnt/trace' >'$dir/line'"
		grep -q -- "^ *cons-prog-$tid " "$dir/line" || { bad "thread $tid's first record:"; cat "$dir/line"; }
		echo release >&3
		wait_until "the thread released" sh -c "[ \$(grep -c '^released' '$dir/cons.out') -eq $i ]"
	done
	;;
refused-format)
	start_mount
	mkfifo "$dir/rel.in"
	"$rellen" <"$dir/rel.in" >"$dir/rel.out" &
	q=$!
	pids=$q
	exec 4>"$dir/rel.in"
	wait_until "rel-len-prog's events" grep -q '^usertp-test:t_rel_len$' "$mnt/available_events"
	echo usertp-test:t_rel_len >"$mnt/set_event"
	echo usertp-test:t_plain_text >>"$mnt/set_event"
	echo "fire 1000" >&4
	wait_until "rel-len-prog fired" grep -q fired "$dir/rel.out"
	wait_until "1000 t_plain_text" sh -c "[ \$(grep -c -- '-$q .* t_plain_text: ' '$mnt/trace') -eq 1000 ]"
	[ "$(grep -c -- "-$q .*: (an event whose format its program did not give)" "$mnt/trace")" -eq 1000 ] ||
		bad "not 1000 records of no format"
	[ "$(sum_stats entries)" -eq 2000 ] || bad "entries: $(sum_stats entries), not 2000"
	exec 4>&-
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
