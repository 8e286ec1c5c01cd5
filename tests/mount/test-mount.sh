#!/bin/sh
# SPDX-License-Identifier: MIT
# test-mount.sh USERTP REC-PROG: usertp mount's first files (README, available_events,
# events/header_page, header_event, events/SYS/EV/format and id) with running programs:
# the same events and formats as usertp list gives, ids in the format texts, the ring
# buffer's headers as this kernel's, tracefs's modes, EINVAL on writes, a program that starts
# or ends seen at once, a clean unmount; and the mount killed: the programs run on.
# Exit 77 where FUSE cannot be used.
set -eu
usertp=$1 prog=$2
test_name=mount
. "$(dirname "$0")/mount-lib.sh"
# same A B: the same bytes (B read through; cmp takes tracefs's size 0 at its word)
same() {
	cat "$2" >"$dir/read" && cmp -s "$1" "$dir/read"
}

# start N: rec-prog with N events running (pid in p1), and the mount (pid in m)
start() {
	"$prog" wait "$1" >"$dir/p1" &
	p1=$!
	pids="$pids $p1"
	wait_until "rec-prog ready" grep -q ready "$dir/p1"
	start_mount
}

start 2

# A second mount on the same directory is refused, as a busy mount point (it stacked silently).
rc=0
"$usertp" mount "$mnt" 2>"$dir/second.err" || rc=$?
[ $rc -eq 1 ] && grep -q "busy" "$dir/second.err" || bad "a second mount on $mnt: status $rc: $(cat "$dir/second.err")"
[ "$(grep -c " $mnt .* - fuse.usertp " /proc/self/mountinfo)" -eq 1 ] || { bad "mounts on $mnt:"; grep " $mnt " /proc/self/mountinfo; fusermount3 -u "$mnt" || true; }

# The same events as usertp list, in the same order.
"$usertp" list >"$dir/list"
wait_until "available_events" grep -q '^rec:rec_event$' "$mnt/available_events"
same "$dir/list" "$mnt/available_events" || { bad "available_events differs from usertp list"; diff "$dir/list" "$mnt/available_events" || true; }
ls "$mnt/events" | sort >"$dir/ls-events"
# (usertp: libusertp's own events, <usertp/track.h>'s, in every program linked with it.)
printf 'enable\nftrace\nheader_event\nheader_page\nrec\nusertp\n' | cmp -s - "$dir/ls-events" || { bad "ls events:"; cat "$dir/ls-events"; }
ls "$mnt/events/rec/rec_event" | sort | tr '\n' ' ' | grep -q '^enable filter format id trigger $' || bad "ls events/rec/rec_event"
[ "$(ls "$mnt/events/rec" | grep -vx 'enable\|filter' | wc -l)" -eq "$(grep -c '^rec:' "$dir/list")" ] || bad "ls events/rec"

# Each format as usertp list -F gives it, but for its id, which is the mount's (its id file).
for ev in $(sed -n 's/^rec://p' "$dir/list"); do
	id=$(cat "$mnt/events/rec/$ev/id")
	"$usertp" list -F "rec:$ev" | sed '1d; s/^ID: .*/ID: '"$id"'/' >"$dir/want"
	same "$dir/want" "$mnt/events/rec/$ev/format" || { bad "format of rec:$ev"; diff "$dir/want" "$mnt/events/rec/$ev/format" || true; }
	case "$id" in '' | *[!0-9]*) bad "id of rec:$ev: '$id'" ;; esac
done
# The ids are the mount's own: each once.
[ "$(cat "$mnt"/events/rec/*/id | sort -u | wc -l)" -eq "$(ls -d "$mnt"/events/rec/*/ | wc -l)" ] || bad "ids not unique"

# The ring buffer's headers: the kernel's own texts (where tracefs can be read).
if [ -r /sys/kernel/tracing/events/header_page ]; then
	cat /sys/kernel/tracing/events/header_page >"$dir/kernel"
	same "$dir/kernel" "$mnt/events/header_page" || bad "header_page differs from the kernel's"
	cat /sys/kernel/tracing/events/header_event >"$dir/kernel"
	same "$dir/kernel" "$mnt/events/header_event" || bad "header_event differs from the kernel's"
fi
grep -q "available_events" "$mnt/README" || bad "README"
! grep -q "shared/reference" "$mnt/README" || bad "README points at a document users do not have"
[ "$(cat "$mnt/available_tracers")" = nop ] && [ "$(cat "$mnt/current_tracer")" = nop ] || bad "tracers"
printf 'nop\n' >"$mnt/current_tracer" || bad "current_tracer: nop refused"
if printf function | dd of="$mnt/current_tracer" conv=notrunc status=none 2>"$dir/werr"; then
	bad "current_tracer took 'function'"
else
	grep -q "Invalid argument" "$dir/werr" || { bad "current_tracer 'function': not EINVAL"; cat "$dir/werr"; }
fi
[ "$(stat -c %A "$mnt/current_tracer")" = -rw-r----- ] || bad "mode of current_tracer"

# tracefs's modes, and its errors.
[ "$(stat -c %A "$mnt")" = drwx------ ] || bad "mode of the root: $(stat -c %A "$mnt")"
[ "$(stat -c %A "$mnt/available_events")" = -r--r----- ] || bad "mode of available_events"
[ "$(stat -c %A "$mnt/events/rec/rec_event")" = drwxr-xr-x ] || bad "mode of an event's directory"
[ "$(stat -c %A "$mnt/instances")" = drwxr-x--- ] || bad "mode of instances"
for f in available_events events/header_page events/rec/rec_event/format events/rec/rec_event/id; do
	if printf x | dd of="$mnt/$f" conv=notrunc status=none 2>"$dir/werr"; then
		bad "a write to $f was taken"
	else
		grep -q "Invalid argument" "$dir/werr" || { bad "a write to $f: not EINVAL:"; cat "$dir/werr"; }
	fi
done
[ ! -e "$mnt/events/nosuch" ] && [ ! -e "$mnt/events/rec/nosuch" ] && [ ! -e "$mnt/nosuch" ] || bad "nosuch exists"

# A stalled program (stopped) holds no one: 20 readers at once all finish (one waits for it,
# 2 s at most; the others read what the mount has), and its events stay listed.
kill -STOP $p1
sleep 0.3 # (the catalog is older than its 200 ms now: the first reader asks the programs)
t0=$(date +%s)
readers=
i=0
while [ $i -lt 20 ]; do
	timeout 60 sh -c "cat '$mnt/available_events' && ls '$mnt/events/rec'" >"$dir/r$i" &
	readers="$readers $!"
	i=$((i + 1))
done
for r in $readers; do
	wait $r || bad "a reader failed with a program stopped"
done
[ $(($(date +%s) - t0)) -lt 10 ] || bad "20 readers took $(($(date +%s) - t0)) s with a program stopped"
[ "$(cat "$dir"/r* | grep -c '^rec:rec_event$')" -eq 20 ] || bad "the stopped program's events left the list"
kill -CONT $p1

# A program that starts is there at once; one that ends, gone.
XDG_RUNTIME_DIR="$XDG_RUNTIME_DIR" "$prog" wait 1 >"$dir/p2" &
p2=$!
pids="$pids $p2"
wait_until "rec-prog 2 ready" grep -q ready "$dir/p2"
kill $p1
wait $p1 2>/dev/null || true
p1=
wait_until "the events of the second program" grep -q '^rec:rec_event$' "$mnt/available_events"
kill $p2
wait $p2 2>/dev/null || true
p2=
wait_until "no events left" sh -c "[ -z \"\$(cat '$mnt/available_events')\" ]"
[ ! -e "$mnt/events/rec" ] || bad "events/rec is still there"

# Unmounted cleanly: the mount ends with status 0.
fusermount3 -u "$mnt" || bad "fusermount3 -u"
wait $m || bad "usertp mount ended with status $?"
m=
grep -v '^$' "$dir/mount.err" && bad "usertp mount said something" || true

# Killed: the programs go on untraced, and the mount point is left to unmount.
start 1
cat "$mnt/available_events" >/dev/null
kill -KILL $m
wait $m 2>/dev/null || true
m=
kill -0 $p1 || bad "the program died with the mount"
fusermount3 -u "$mnt" || umount -l "$mnt" || bad "could not unmount after a kill"
exit $fail
