#!/bin/sh
# SPDX-License-Identifier: MIT
# <usertp/track.h>'s events through usertp mount, as a tracefs user reaches them: a program of
# spans runs (track-prog, test-report-spans.sh's), its system "usertp" is listed in
# available_events and events/, `echo 'usertp:*' > set_event` turns its spans, counters and
# flows on, trace_pipe gives them in the lines of trace-cmd report (B/E/I, names, the counter's
# value), and `echo > set_event` turns them off.
#   usage: test-mount-spans.sh USERTP TRACK-PROG
test_name=mount-spans
usertp=$1 track=$2
. "$(dirname "$0")/mount-lib.sh"
set -eu

start_mount
"$track" 2000 >"$dir/track.out" &
pids="$pids $!"
wait_until "usertp:usertp_span in available_events" grep -q '^usertp:usertp_span$' "$mnt/available_events"
for ev in usertp_span usertp_async usertp_counter usertp_flow; do
	[ -f "$mnt/events/usertp/$ev/format" ] || bad "no events/usertp/$ev/format"
done
grep -q 'field:char track_event_type;' "$mnt/events/usertp/usertp_span/format" ||
	bad "usertp_span's format has no track_event_type"
echo 'usertp:*' >"$mnt/set_event"
[ "$(sort "$mnt/set_event" | tr '\n' ' ')" = "usertp:usertp_async usertp:usertp_counter usertp:usertp_flow usertp:usertp_span " ] ||
	{ bad "set_event:"; cat "$mnt/set_event"; }
# (trace_pipe blocks: read from it in the background, until enough has come.)
cat "$mnt/trace_pipe" >"$dir/pipe" &
reader=$!
pids="$pids $reader"
wait_until "spans, counters and async spans in trace_pipe" sh -c "
	[ \$(grep -c ' usertp_span: *B outer\$' '$dir/pipe') -ge 3 ] &&
	[ \$(grep -c ' usertp_span: *E sleep\$' '$dir/pipe') -ge 3 ] &&
	grep -q ' usertp_counter: *queue=[0-9]*\$' '$dir/pipe' &&
	grep -q ' usertp_async: *E request id=[0-9]*\$' '$dir/pipe' &&
	grep -q ' usertp_flow: *f id=[0-9]*\$' '$dir/pipe'"
echo >"$mnt/set_event"
[ ! -s "$mnt/set_event" ] || bad "set_event not emptied"
kill $reader 2>/dev/null || true
exit $fail
