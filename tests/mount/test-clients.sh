#!/bin/sh
# SPDX-License-Identifier: MIT
# test-clients.sh USERTP CONS-PROG TRACEFS-CLIENT: real clients of tracefs, unchanged, on
# usertp mount with a running program:
#   - libtracefs (tracefs-client): the systems and events it lists are the mount's, and the
#     records it reads from per_cpu/cpuN/trace_pipe_raw (pages in the kernel's format) are
#     those `trace` shows, a trace_marker write included; a tracefs_binary_write() to
#     trace_marker_raw is a raw_data record printed as the kernel prints it (issue 21, item
#     10: the mount had no trace_marker_raw);
#   - trace-cmd record and report, on the mount bind-mounted over /sys/kernel/tracing in a
#     private mount namespace (unshare -m; root only): every event fired is in the file.
# Exit 77 where FUSE cannot be used.
set -eu
usertp=$1 cons=$2 client=$3
test_name=clients
. "$(dirname "$0")/mount-lib.sh"

start_cons
start_mount
wait_until "cons-prog's events" grep -q '^cons:cons_a$' "$mnt/available_events"

# --- libtracefs ----------------------------------------------------------------------------
"$client" "$mnt" systems | sort >"$dir/systems"
# (libtracefs leaves out ftrace, which has no enable file, on the kernel's tracefs too)
ls -d "$mnt"/events/*/ | xargs -n1 basename | grep -vx ftrace | sort | cmp -s - "$dir/systems" ||
	{ bad "libtracefs's systems are not the mount's:"; cat "$dir/systems"; }
"$client" "$mnt" events cons | sort >"$dir/events"
printf 'cons_a\ncons_b\ncons_c\n' | cmp -s - "$dir/events" || { bad "libtracefs's events of cons:"; cat "$dir/events"; }
echo 'cons:*' >"$mnt/set_event"
fire 50
echo hello-marker >"$mnt/trace_marker"
wait_until "the mount holds them" sh -c "[ \$(grep -c ' cons_b: seq=' \"$mnt/trace\") -eq 50 ]"
# trace's lines as "TID NAME: TEXT", as tracefs-client prints what libtracefs read
grep -v '^#' "$mnt/trace" | sed 's/^ *.*-\([0-9]*\) *\[[0-9]*\] ..... *[0-9.]*: \([a-z_]*\): /\1 \2: /' |
	sed 's/^\([0-9]*\) tracing_mark_write: /\1 print: tracing_mark_write: /' >"$dir/trace"
"$client" "$mnt" raw | grep -v '^$' >"$dir/raw" || bad "libtracefs could not read trace_pipe_raw"
sort "$dir/trace" >"$dir/trace.sorted"
sort "$dir/raw" >"$dir/raw.sorted"
cmp -s "$dir/trace.sorted" "$dir/raw.sorted" ||
	{ bad "libtracefs read other records than trace shows"; diff "$dir/trace.sorted" "$dir/raw.sorted" | head; }
[ "$(wc -l <"$dir/raw")" -eq 101 ] || bad "libtracefs read $(wc -l <"$dir/raw") records, not 101"
[ "$(grep -vc '^#' "$mnt/trace")" -eq 0 ] || bad "trace_pipe_raw did not consume what it gave"
# trace_marker_raw: the kernel's "# ID buf:" and the data padded to 4 bytes, in trace; its
# print fmt (id:%04x, the first byte) through libtracefs; fewer than 4 bytes refused.
"$client" "$mnt" binary 0x1f hello || bad "tracefs_binary_write() failed"
grep -q ': # 1f buf: 68 65 6c 6c 6f 00 00 00$' "$mnt/trace" || { bad "no raw_data record in trace:"; cat "$mnt/trace"; }
"$client" "$mnt" raw >"$dir/raw" || bad "libtracefs could not read trace_pipe_raw"
grep -q ' raw_data: id:001f 00000068$' "$dir/raw" || { bad "libtracefs's raw_data:"; cat "$dir/raw"; }
! printf 'ab' >"$mnt/trace_marker_raw" 2>/dev/null || bad "a 2-byte trace_marker_raw write was taken"
: >"$mnt/set_event"

# --- trace-cmd, on the mount where it looks for tracefs -------------------------------------
if [ "$(id -u)" -ne 0 ] || ! command -v trace-cmd >/dev/null || ! command -v unshare >/dev/null; then
	echo "(trace-cmd part skipped: needs root, trace-cmd and unshare)"
	exit $fail
fi
# (-d: do not touch the function tracer; trace-cmd's default writes /proc/sys/kernel/ftrace_enabled)
n=$(grep -c fired "$dir/cons.out")
unshare -m sh -c "mount --bind '$mnt' /sys/kernel/tracing &&
	trace-cmd record -d -e 'cons:*' -o '$dir/tc.dat' sh -c 'echo \"fire 100\" >&3; until [ \$(grep -c fired \"$dir/cons.out\") -gt $n ]; do sleep 0.05; done; sleep 0.3'" \
	>"$dir/record.out" 2>&1 || { bad "trace-cmd record failed:"; cat "$dir/record.out"; }
trace-cmd report -i "$dir/tc.dat" >"$dir/report" 2>&1 || { bad "trace-cmd report failed:"; cat "$dir/report"; }
for ev in cons_a cons_b; do
	[ "$(grep -c " $ev: *seq=" "$dir/report")" -eq 100 ] || bad "trace-cmd report: $(grep -c " $ev: *seq=" "$dir/report") $ev, not 100"
done
seq 0 99 | cmp -s - "$(grep " cons_a: *seq=" "$dir/report" | sed 's/.*seq=//' >"$dir/seqs"; echo "$dir/seqs")" ||
	bad "trace-cmd report: cons_a out of order or missing"
[ "$(cat "$mnt/set_event" | wc -l)" -eq 0 ] || bad "trace-cmd left events enabled on the mount"
exit $fail
