#!/bin/sh
# SPDX-License-Identifier: MIT
# test-example-filters.sh USERTP WORKER-POOL: filters and trigger conditions on the mount,
# with the bundled example's events (examples/worker-pool: a string after numbers, a fixed
# char array, a dynamic array of numbers, numbers after them), README's and usertp-mount(1)'s
# own example first ('id > 10' on jobs:job_done).  Refused texts are refused with the kernel's
# error file; a program that starts with the filters set records exactly what they keep.
# Exit 77 where FUSE cannot be used.
set -eu
usertp=$1 pool=$2
test_name=example-filters
. "$(dirname "$0")/mount-lib.sh"
start_mount

# A first program keeps the events defined while the filters are written: one job, whose
# input wait (-b) lasts until it is killed.
"$pool" -w 1 -b 10000000 1 2>/dev/null &
holder=$!
pids="$pids $holder"
wait_until "the example's events" grep -q '^jobs:job_done$' "$mnt/available_events"
ev=$mnt/events/jobs

# put FILE TEXT: TEXT written in one write(); the status is the write's
put() {
	printf '%s' "$2" | dd of="$1" conv=notrunc status=none 2>"$dir/werr"
}
# takes FILE TEXT: the write is taken and reads back
takes() {
	put "$1" "$2" || { bad "'$2' > ${1#$mnt/}: refused: $(cat "$dir/werr")"; sed 's/^/  /' "$1"; return 0; }
	case $1 in
	*/filter) [ "$(cat "$1")" = "$2" ] || bad "${1#$mnt/} reads '$(cat "$1")', not '$2'" ;;
	*/trigger) grep -qxF "${2%% if *}:unlimited if ${2#* if }" "$1" || bad "${1#$mnt/} does not list '$2': $(cat "$1")" ;;
	esac
}
# refuses FILE TEXT MESSAGE: EINVAL, and the filter file says the kernel's MESSAGE
refuses() {
	if put "$1" "$2"; then
		bad "'$2' > ${1#$mnt/} was taken"
	else
		grep -q "Invalid argument" "$dir/werr" || bad "'$2' > ${1#$mnt/}: $(cat "$dir/werr")"
		case $1 in */filter) grep -qF "parse_error: $3" "$1" || { bad "'$2': not '$3':"; sed 's/^/  /' "$1"; } ;; esac
	fi
}

# Refused as the kernel refuses them (and a refused write leaves the event unfiltered, as in
# the kernel: the filters kept are written after).
refuses "$ev/job_done/filter" 'id == "x"' 'Expecting numeric field'
refuses "$ev/job_done/filter" 'ns ~ "1*"' 'Expecting numeric field'
refuses "$ev/job_done/filter" 'worker > 1' 'Expecting string field'
refuses "$ev/job_queued/filter" 'name == 1' 'Expecting string field'
refuses "$ev/job_queued/filter" 'char ~ "x*"' 'Field not found'
refuses "$ev/job_done/filter" 'int > 1' 'Field not found'
# job_done, whose fields are id, worker[16], ns, flags, chunk_us[]: each one by its own type.
for text in 'worker ~ "worker-*"' 'worker == "worker-0"' 'ns > 0 && flags & 2' 'flags == 0 || id > 10'; do
	takes "$ev/job_done/filter" "$text"
done
# Numbers before and after strings and arrays: the filters the program below runs with.
takes "$ev/job_done/filter" 'id > 10'
takes "$ev/job_queued/filter" 'name ~ "resize*"'
takes "$ev/job_started/filter" 'kind == 1 && id < 20 && name ~ "*-1*"'
takes "$ev/job_slow/filter" 'ns > 0 && id >= 0'

# Trigger conditions on the same fields (none of them fires here).
takes "$ev/job_queued/trigger" 'traceoff if name ~ "nosuch*"'
takes "$ev/job_done/trigger" 'traceoff if id > 100000 && worker ~ "nosuch*"'
refuses "$ev/job_done/trigger" 'traceoff if worker > 1'

# A program that starts now records what the filters keep: 300 jobs (kinds 0, 1, 2 in turn).
printf 'jobs:job_queued jobs:job_started jobs:job_done\n' >"$mnt/set_event"
"$pool" -w 2 300 2>"$dir/pool.err" || bad "worker-pool failed: $(cat "$dir/pool.err")"
kill $holder
wait $holder 2>/dev/null || true
# (The mount's pump takes the program's last pages a moment after it ends.)
wait_until "the 394 records kept" sh -c "[ \$(grep -c ' job_queued: \| job_started: \| job_done: ' '$mnt/trace') -ge 394 ]"
cat "$mnt/trace" >"$dir/trace"
count() {
	grep -c " $1: " "$dir/trace" || true
}
[ "$(count job_queued)" -eq 100 ] || bad "job_queued if name ~ \"resize*\": $(count job_queued) lines, not 100"
[ "$(count job_started)" -eq 5 ] || bad "job_started if kind == 1 && id < 20 && name ~ \"*-1*\": $(count job_started), not 5 (ids 1, 10, 13, 16, 19)"
[ "$(count job_done)" -eq 289 ] || bad "job_done if id > 10: $(count job_done) lines, not 289"
awk '/ job_queued: / && !/name=resize-/ { bad = 1 } / job_done: / { sub(/.*id=/, ""); if ($1 + 0 <= 10) bad = 1 }
	END { exit bad }' "$dir/trace" || bad "a line the filters should have left out"
[ "$(cat "$mnt/tracing_on")" = 1 ] || bad "a trigger that should not fire turned tracing off"
[ "$(sum_stats "overrun,dropped events")" -eq 0 ] || bad "events lost"
[ $fail -eq 0 ] || sed -n '1,40p' "$dir/trace"
exit $fail
