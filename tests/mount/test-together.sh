#!/bin/sh
# SPDX-License-Identifier: MIT
# test-together.sh USERTP CONS-PROG CTL-CONNECT SOCK-LISTEN REL-LEN-PROG LAYOUT-EXE: root's
# mount and root's `usertp record -a` serve every user while a second user (usertp-test2)
# attacks with all of issue 21's items 11 to 16 at once, and a third user's programs
# (usertp-test3) start meanwhile (issue 21, "Done when": each attack also has a test of its
# own, named below).  The second user's programs, joined to both before the attacks:
#   11   one truncates its buffers' memfd (consumer-shrunk)
#   11b  one puts garbage in its live page (consumer-garbled); one scribbles over all its
#        buffers (consumer-hostile)
#   12   one fires an event whose format libtraceevent faults on (rel-len-prog)
#   14   three are stopped (SIGSTOP); six fake endpoints listen and never answer; ten
#        connections to each service's socket of every user send part of a message; twenty
#        loops flood them with connections (mount-robust-stalls, mount-robust-flood)
#   15   a link among its endpoints to a root-only socket (mount-robust-deputy)
#   15b  its spool, whose meta names root's directory and one of whose files is a link to a
#        root-only secret, recovered by root (record-recover-foreign)
#   16   a setuid-root libusertp program run with USERTP_OUTPUT a link to a root file
#        (setuid-output)
# Meanwhile: root's operations on the mount (an instance made, its events set, listed and
# removed) each end within 5 s; ten programs of the third user are each recorded whole, from
# their first event, by the mount and by record -a; root's own program's 2000 events are all
# on the mount.  Afterwards both services run on: the mount serves, record -a ends at SIGINT
# (exit 0) with a file that trace-cmd and usertp report read, whose per-CPU counts agree
# (records, CPUSTAT, usertp report --stat and the summary); nothing was written or read
# where the second user pointed.
# Root and a second and third user (added if missing), and FUSE; exit 77 otherwise.
set -eu
usertp=$1 cons=$2 ctlconnect=$3 sock_listen=$4 rellen=$5 layoutexe=$6
test_name=together
. "$(dirname "$0")/mount-lib.sh"
need_second_user
id usertp-test3 >/dev/null 2>&1 || useradd -M -r -s /usr/sbin/nologin usertp-test3 ||
	{ echo "SKIP: cannot add a third user"; exit 77; }
command -v trace-cmd >/dev/null || { echo "SKIP: trace-cmd is not installed"; exit 77; }
chmod 755 "$dir"
export USERTP_SYSTEM_DIR="$dir/system"
for u in 2 3; do
	mkdir -m 700 "$dir/u$u" "$dir/u$u/xdg"
	cp "$cons" "$ctlconnect" "$sock_listen" "$rellen" "$dir/u$u/"
	chown -R usertp-test$u "$dir/u$u"
done
# as_user N CMD...: as usertp-testN, in its own runtime directory.  (exec: run with &, $! is
# the command's pid, which the cleanup kills.)
as_user() {
	u=$1
	shift
	exec setpriv --reuid=usertp-test$u --regid=usertp-test$u --clear-groups \
		env XDG_RUNTIME_DIR="$dir/u$u/xdg" USERTP_SYSTEM_DIR="$USERTP_SYSTEM_DIR" "$@"
}
ms() { echo $(($(date +%s%N) / 1000000)); }
within_5s() { # WHAT START
	[ $(($(ms) - $2)) -lt 5000 ] || bad "$1 took $(($(ms) - $2)) ms"
}
# attacker NAME PROG: a program of the second user that takes commands from the fifo
# $dir/NAME.in (held open by a sleep); its answers in $dir/NAME.out
attacker() {
	mkfifo -m 666 "$dir/$1.in"
	(as_user 2 "$dir/u2/$2") <"$dir/$1.in" >"$dir/$1.out" 2>&1 &
	pids="$pids $!"
	sleep 600 >"$dir/$1.in" &
	pids="$pids $!"
	wait_until "the second user's $1" grep -q ready "$dir/$1.out"
}
# tell NAME COMMAND: the attacker NAME is sent COMMAND, and its answer awaited
tell() {
	before=$(wc -l <"$dir/$1.out")
	echo "$2" >"$dir/$1.in"
	wait_until "$1's answer to $2" sh -c "[ \$(wc -l <'$dir/$1.out') -gt $before ]"
}
pid_of() { sed -n 's/^ready //p' "$dir/$1.out"; }
# records FILE PID EVENT: lines of PID's EVENT in FILE (its comm may not be known yet: <...>)
records() {
	grep -c -- "-$2 .* $3: " "$1" || true
}

# --- Root: its program, its mount, and later its record -a. ----------------------------------
start_cons
start_mount
wait_until "cons-prog's events" grep -q '^cons:cons_a$' "$mnt/available_events"
echo 'cons:*' >"$mnt/set_event"

# --- The second user's programs, before anything is attacked. -----------------------------------
for a in shrinker garbler scribbler stop1 stop2 stop3; do
	attacker $a cons-prog
done
attacker formats rel-len-prog
wait_until "rel-len-prog's events" grep -q '^usertp-test:t_rel_len$' "$mnt/available_events"
echo usertp-test:t_rel_len >>"$mnt/set_event"
echo usertp-test:t_plain_text >>"$mnt/set_event"
"$usertp" record -q -a -e 'cons:*' -e usertp-test:t_rel_len -e usertp-test:t_plain_text \
	-o "$dir/a.dat" 2>"$dir/rec.err" &
rec=$!
pids="$pids $rec"
wait_until "record -a's socket" sh -c "[ \$(ls '$USERTP_SYSTEM_DIR' | wc -l) -eq 2 ]"
for a in shrinker garbler scribbler stop1 stop2 stop3 formats; do
	q=$(pid_of $a)
	wait_source "$dir/a.dat" "$q"
done
# The direct file (src/consumer/spool.h: pages written as they are, adopted as the file's) is
# root's own program's, never another user's: theirs reach root's file through the merge.
wait_source "$dir/a.dat" "$p"
meta=$(ls "$dir"/a.dat.spool-*/meta)
if [ -e "$(dirname "$meta")/direct" ]; then
	n=$(sed -n 's/^direct \([0-9]*\) .*/\1/p' "$meta")
	check_count "the program of the direct file" "$(sed -n "s/^source $n pid=\([0-9]*\) .*/\1/p" "$meta")" "$p"
fi
tell garbler pin
for a in shrinker garbler scribbler stop1 stop2 stop3; do
	tell $a "fire 5"
	wait_until "$a's events on the mount" sh -c "[ \$(grep -c -- '-$(pid_of $a) .* cons_b: seq=4' '$mnt/trace') -eq 1 ]"
done

# The second user's spool (15b): made by a recorder of root's killed, then that user's.
mkfifo "$dir/own.in"
"$usertp" record -q -e 'cons:*' -o "$dir/own.dat" -- "$cons" <"$dir/own.in" >"$dir/own.out" 2>"$dir/own.err" &
own=$!
pids="$pids $own"
exec 9>"$dir/own.in"
wait_until "the recorded program" grep -q ready "$dir/own.out"
pids="$pids $(sed -n 's/^ready //p' "$dir/own.out")"
echo "fire 50" >&9
wait_until "the spool to recover" sh -c "grep -qs '^source ' '$dir'/own.dat.spool-*/meta"
kill -KILL $own
wait $own 2>/dev/null || true
exec 9>&-
spool=$(ls -d "$dir"/own.dat.spool-*)
mkdir -m 700 "$dir/root-only"

# The root-only socket the deputy's link points at (15), and the setuid program (16).
"$sock_listen" "$dir/root-only/daemon.sock" "$dir/daemon.log" >"$dir/listen.out" &
pids="$pids $!"
wait_until "the root-only socket" grep -q listening "$dir/listen.out"
cp "$layoutexe" "$dir/suid-prog"
chmod 4755 "$dir/suid-prog"
printf 'precious\n' >"$dir/root-only/root-file"
(as_user 2 ln -s "$dir/root-only/root-file" "$dir/u2/out.txt")

# --- All the attacks at once. -------------------------------------------------------------------
rundir=$(dirname "$(ls "$dir"/u2/xdg/*/*.sock | head -1)")
tell shrinker shrink
echo 'garble 1' >"$dir/garbler.in"
echo scribble >"$dir/scribbler.in"
echo 'fire 200' >"$dir/formats.in"
kill -STOP $(pid_of stop1) $(pid_of stop2) $(pid_of stop3)
for i in 1 2 3 4 5 6; do
	(as_user 2 sh -c 'exec "$0" "$1/$$.sock" /dev/null hold' "$dir/u2/sock-listen" "$rundir") >/dev/null &
	pids="$pids $!"
done
(as_user 2 sleep 120) &
deputy=$!
pids="$pids $deputy"
wait_until "the deputy's process" sh -c "[ \$(stat -c %u /proc/$deputy) -ne 0 ]"
(as_user 2 ln -s "$dir/root-only/daemon.sock" "$rundir/$deputy.sock")
touch "$dir/flooding"
for sock in "$USERTP_SYSTEM_DIR"/all.*; do
	for i in 1 2 3 4 5 6 7 8 9 10; do
		(as_user 2 "$dir/u2/ctl-connect" "$sock" --raw ff00000061 4) >/dev/null 2>&1 &
		pids="$pids $!"
		(as_user 2 sh -c 'while [ -e "$0" ]; do "$1" "$2" --raw ff00000061 1 >/dev/null 2>&1; done' \
			"$dir/flooding" "$dir/u2/ctl-connect" "$sock") &
		pids="$pids $!"
	done
done
(as_user 2 env USERTP_EVENTS='jobs:*' USERTP_OUTPUT="$dir/u2/out.txt" "$dir/suid-prog" 2 10) \
	>"$dir/suid.out" 2>&1 &
suid=$!
pids="$pids $suid"

# --- Meanwhile: root's work, and the third user's programs. ------------------------------------
t=$(ms)
mkdir "$mnt/instances/x" || bad "mkdir instances/x failed"
within_5s "mkdir instances/x" $t
t=$(ms)
echo 'cons:*' >"$mnt/instances/x/set_event" || bad "instances/x/set_event not written"
within_5s "instances/x/set_event" $t
t=$(ms)
grep -q '^cons:cons_a$' "$mnt/available_events" || bad "available_events without cons:cons_a"
within_5s "available_events" $t
: >"$dir/u3.out"
chmod 666 "$dir/u3.out"
for i in 1 2 3 4 5 6 7 8 9 10; do
	(as_user 3 sh -c 'echo "started $$" >>"$1"; exec "$2" auto 20' sh "$dir/u3.out" "$dir/u3/cons-prog") \
		>/dev/null 2>&1 || bad "a program of the third user failed"
done
fire 1000
recover_foreign "$spool"
t=$(ms)
rmdir "$mnt/instances/x" || bad "rmdir instances/x failed"
within_5s "rmdir instances/x" $t

# --- The attacks end; both services run on. -----------------------------------------------------
rm "$dir/flooding"
kill -CONT $(pid_of stop1) $(pid_of stop2) $(pid_of stop3)
# Each attacker runs on, and those whose buffers still hold together are read on: the
# garbled page is its program's loss, the next ones are read; the stopped are read again.
tell shrinker "fire 5"
tell garbler "fire 1000"
tell scribbler "fire 5"
tell stop1 "fire 5"
grep -q '^shrunk 0$' "$dir/shrinker.out" || bad "the memfd was truncated: $(tail -1 "$dir/shrinker.out")"
grep -q '^garbled [1-9]' "$dir/garbler.out" || bad "nothing garbled: $(tail -2 "$dir/garbler.out")"
grep -q '^scribbled [1-9]' "$dir/scribbler.out" || bad "nothing scribbled: $(tail -2 "$dir/scribbler.out")"
for a in shrinker stop1; do
	wait_until "$a's events after the attacks" sh -c "[ \$(grep -c -- '-$(pid_of $a) .* cons_b: seq=4\$' '$mnt/trace') -eq 2 ]"
done
wait_until "the garbler's events after its garbage" sh -c "grep -q -- '-$(pid_of garbler) .* cons_b: seq=999\$' '$mnt/trace'"
wait $suid || bad "the setuid program failed: $(cat "$dir/suid.out")"
kill -0 $m || bad "the mount died"
kill -0 $rec || { bad "record -a died:"; cat "$dir/rec.err"; }
# The mount: root's program whole, each program of the third user whole from its first event.
wait_until "root's program's 1000 cons_b on the mount" sh -c \
	"[ \$(grep -c -- '-$p .* cons_b: seq=' '$mnt/trace') -eq 1000 ]"
timeout 20 cat "$mnt/trace" >"$dir/trace" || bad "the mount's trace not served"
check_count "root's program's cons_a on the mount" "$(records "$dir/trace" $p cons_a)" 1000
third=$(sed -n 's/^started //p' "$dir/u3.out")
check_count "the third user's programs" "$(echo $third | wc -w)" 10
for q in $third; do
	check_count "the third user's program $q: cons_a on the mount" "$(records "$dir/trace" $q cons_a)" 20
	check_count "the third user's program $q: cons_b on the mount" "$(records "$dir/trace" $q cons_b)" 20
	grep -m1 -- "-$q .* cons_a: " "$dir/trace" | grep -q 'seq=0$' ||
		bad "the third user's program $q: not recorded from its first event"
done
# The second user's events that print still print; those that cannot come without a format.
[ "$(records "$dir/trace" "$(pid_of formats)" t_plain_text)" -ge 200 ] ||
	bad "rel-len-prog's t_plain_text not on the mount"
# record -a: ends at SIGINT with a file both readers read, the third user's programs whole.
kill -INT $rec
wait_until "record -a to end" sh -c "! kill -0 $rec"
wait $rec || { bad "record -a failed:"; cat "$dir/rec.err"; }
trace-cmd report -i "$dir/a.dat" >"$dir/a.txt" 2>"$dir/a.err" || { bad "trace-cmd report failed:"; cat "$dir/a.err"; }
"$usertp" report "$dir/a.dat" >"$dir/ua.txt" 2>&1 || { bad "usertp report failed:"; tail -3 "$dir/ua.txt"; }
exact "$dir/a.dat" "$dir/rec.err" -
# The refused format said once (before: at each listing of the program's events, asked anew).
check_count "record -a's words of the refused format" "$(grep -c 'the format of event .* is refused' "$dir/rec.err")" 1
for q in $third; do
	check_count "the third user's program $q: cons_a in record -a's file" "$(records "$dir/a.txt" $q cons_a)" 20
	check_count "the third user's program $q: cons_b in record -a's file" "$(records "$dir/a.txt" $q cons_b)" 20
done
check_count "root's program's cons_b in record -a's file" "$(records "$dir/a.txt" $p cons_b)" 1000
# Nothing written or read where the second user pointed (the spool: recover_foreign).
[ ! -s "$dir/daemon.log" ] || { bad "root connected to the root-only socket through the link:"; head -3 "$dir/daemon.log"; }
[ "$(cat "$dir/root-only/root-file")" = precious ] || bad "the setuid program wrote through the link"
# The mount still serves, and stops cleanly; nothing is left in the system directory.
timeout 20 cat "$mnt/available_events" >/dev/null || bad "available_events not served after"
fusermount3 -u "$mnt"
wait $m || bad "the mount failed"
m=
[ -z "$(ls -A "$USERTP_SYSTEM_DIR")" ] || { bad "left in the system directory:"; ls -la "$USERTP_SYSTEM_DIR"; }
[ $fail -ne 0 ] || echo "ok: root's mount and record -a ran on through the attacks together"
exit $fail
