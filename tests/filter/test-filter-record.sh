#!/bin/sh
# SPDX-License-Identifier: MIT
# test-filter-record.sh USERTP WORKER-POOL REC-PROG: usertp record -f (trace-cmd's: the
# filter of the -e before it) on the worker-pool example: exactly the jobs it selects, by id,
# against the program's own count; the other -e unfiltered.  A filter refused by a running
# program: the error with its caret, nothing recorded, status 1; one refused by the command's
# events, by its syntax or given before any -e: status 2 before its main() runs.
set -eu
usertp=$1 pool=$2 prog=$3
dir=$(mktemp -d /tmp/usertp-filter-record-XXXXXX)
trap 'kill $p 2>/dev/null || true; rm -rf "$dir"' EXIT
p=
export XDG_RUNTIME_DIR="$dir/xdg"
mkdir -m 700 "$XDG_RUNTIME_DIR"
fail=0
"$usertp" record -q -e jobs:job_done -f 'id >= 10 && id < 30' -e jobs:job_queued \
	-o "$dir/a.dat" -- "$pool" -w 2 64 >"$dir/out" 2>&1
grep -q "64 queued, 64 started, 64 done" "$dir/out" || { cat "$dir/out"; fail=1; }
"$usertp" report -i "$dir/a.dat" >"$dir/report"
ids=$(sed -n 's/.* job_done: *id=\([0-9]*\) .*/\1/p' "$dir/report" | sort -n | tr '\n' ' ')
want=$(seq 10 29 | tr '\n' ' ')
[ "$ids" = "$want" ] || { echo "job_done ids: $ids"; fail=1; }
[ "$(grep -c ' job_queued: ' "$dir/report")" -eq 64 ] || { echo "job_queued not 64"; fail=1; }
# Nothing lost: the refused records left nothing behind.
"$usertp" report --stat "$dir/a.dat" | grep -q "^all *84 *0" ||
	{ "$usertp" report --stat "$dir/a.dat"; fail=1; }

# usertp list -v shows the sessions of a program, their events and filters.
"$prog" handler 3 >"$dir/p" &
p=$!
until grep -q ready "$dir/p" 2>/dev/null; do sleep 0.05; done
"$usertp" record -q -e rec:rec_event -f 'seq > 1 && thread == 0' -P "$p" -o "$dir/l.dat" &
r=$!
until [ -n "$(ls "$dir"/l.dat.spool-* 2>/dev/null)" ]; do sleep 0.05; done
sleep 0.2
"$usertp" list -v -P "$p" >"$dir/list"
kill -INT "$r"
wait "$r" || true
grep -q "^  session 1 tracing=1$" "$dir/list" && grep -q "^    events=rec:rec_event$" "$dir/list" &&
	grep -q "^    filter rec:rec_event seq > 1 && thread == 0$" "$dir/list" ||
	{ echo "list -v:"; cat "$dir/list"; fail=1; }
kill "$p"
wait "$p" 2>/dev/null || true
p=

# A running program that cannot take the filter: said with its caret, status 1.
"$prog" handler 3 >"$dir/p" &
p=$!
until grep -q ready "$dir/p" 2>/dev/null; do sleep 0.05; done
set +e
"$usertp" record -e rec:rec_event -f 'nosuch == 1' -P "$p" -o "$dir/b.dat" 2>"$dir/err"
status=$?
set -e
[ "$status" -eq 1 ] || { echo "refused by the program: status $status"; fail=1; }
grep -q "the filter of rec:rec_event does not fit rec:rec_event" "$dir/err" &&
	grep -q "^nosuch == 1$" "$dir/err" && grep -q "^       \^$" "$dir/err" &&
	grep -q "^parse_error: Field not found$" "$dir/err" || { cat "$dir/err"; fail=1; }
kill "$p"
wait "$p" 2>/dev/null || true
p=

# The command has an event that does not take its filter: as trace-cmd, refused before its
# main() runs (it prints nothing), with the caret; status 2, no file.  (Events that come
# later with dlopen(): tests/layouts, record mode.)
set +e
"$usertp" record -q -e jobs:job_done -f 'nosuch == 1' -e jobs:job_queued -o "$dir/d.dat" \
	-- "$pool" 8 >"$dir/out4" 2>"$dir/err4"
s4=$?
set -e
[ "$s4" -eq 2 ] && [ ! -s "$dir/out4" ] && [ ! -e "$dir/d.dat" ] ||
	{ echo "refused at the start: status $s4, $(cat "$dir/out4")"; fail=1; }
grep -q "the filter of jobs:job_done does not fit jobs:job_done: Invalid argument" "$dir/err4" &&
	grep -q "^parse_error: Field not found$" "$dir/err4" &&
	grep -q "the command was stopped before its main()" "$dir/err4" || { cat "$dir/err4"; fail=1; }

# Syntax, or no -e: before anything starts.
set +e
"$usertp" record -e 'jobs:*' -f '(id == 1' -o "$dir/c.dat" -- "$pool" 1 2>"$dir/err2"
s2=$?
"$usertp" record -f 'id > 1' -e 'jobs:*' -o "$dir/c.dat" -- "$pool" 1 2>"$dir/err3"
s3=$?
set -e
[ "$s2" -eq 2 ] && grep -q "^parse_error: Too many '('$" "$dir/err2" || { cat "$dir/err2"; fail=1; }
[ "$s3" -eq 2 ] && grep -q "no -e before it" "$dir/err3" || { cat "$dir/err3"; fail=1; }
exit $fail
