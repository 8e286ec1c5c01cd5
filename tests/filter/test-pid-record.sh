#!/bin/sh
# SPDX-License-Identifier: MIT
# test-pid-record.sh USERTP WORKER-POOL REC-PROG: pid filters under usertp record, on the
# worker-pool example (the main thread queues the jobs, worker threads run them):
#   -F             only the command's own thread: every job_queued, no worker's event;
#   -F -c          its worker threads followed too: every event, as the program counts them;
#   -F -c through a shell that is not traced: the programs it starts are followed (as the
#                  kernel follows the shell's forks), and -F alone follows none;
#   --pid/--notrace-pid  a thread id not in the program: nothing / everything;
#   usertp list -v shows a running session's lists;
#   bad lists and options: status 2 before anything starts.
set -eu
usertp=$1 pool=$2 prog=$3
dir=$(mktemp -d /tmp/usertp-pid-record-XXXXXX)
trap 'kill $p 2>/dev/null || true; rm -rf "$dir"' EXIT
p=
export XDG_RUNTIME_DIR="$dir/xdg"
mkdir -m 700 "$XDG_RUNTIME_DIR"
fail=0

# count FILE EVENT: the lines of EVENT in the report of FILE.
count() {
	"$usertp" report -i "$1" | grep -c " $2: " || true
}

"$usertp" record -q -e 'jobs:*' -F -o "$dir/f.dat" -- "$pool" -w 2 40 >/dev/null 2>"$dir/out"
grep -q "40 queued, 40 started, 40 done" "$dir/out" || { cat "$dir/out"; fail=1; }
[ "$(count "$dir/f.dat" job_queued)" -eq 40 ] && [ "$(count "$dir/f.dat" job_started)" -eq 0 ] &&
	[ "$(count "$dir/f.dat" job_done)" -eq 0 ] ||
	{ echo "-F: not only the main thread's:"; "$usertp" report -i "$dir/f.dat" | head; fail=1; }
# Its records are the command's own thread's: one pid in the file, and nothing lost.
[ "$("$usertp" report -i "$dir/f.dat" | sed -n 's/^ *[^ ]*-\([0-9]*\) .*/\1/p' | sort -u | wc -l)" -eq 1 ] ||
	{ echo "-F: more than one thread"; fail=1; }
"$usertp" report --stat "$dir/f.dat" | grep -q "^all *40 *0" || { "$usertp" report --stat "$dir/f.dat"; fail=1; }

"$usertp" record -q -e 'jobs:*' -F -c -o "$dir/fc.dat" -- "$pool" -w 3 50 >/dev/null 2>"$dir/out"
slow=$(sed -n 's/.* \([0-9]*\) slow.*/\1/p' "$dir/out")
[ "$(count "$dir/fc.dat" job_queued)" -eq 50 ] && [ "$(count "$dir/fc.dat" job_started)" -eq 50 ] &&
	[ "$(count "$dir/fc.dat" job_done)" -eq 50 ] && [ "$(count "$dir/fc.dat" job_slow)" -eq "$slow" ] ||
	{ echo "-F -c: not every thread's ($slow slow):"; cat "$dir/out"; "$usertp" report --stat "$dir/fc.dat"; fail=1; }

# Through a shell (not traced): the programs it starts are its children.
"$usertp" record -q -e 'jobs:job_queued' -F -c -o "$dir/sh.dat" -- \
	sh -c "\"$pool\" 6 >/dev/null 2>&1; \"$pool\" 4 >/dev/null 2>&1" 2>"$dir/err"
[ "$(count "$dir/sh.dat" job_queued)" -eq 10 ] || { echo "-F -c through sh:"; cat "$dir/err"; fail=1; }
"$usertp" record -q -e 'jobs:job_queued' -F -o "$dir/sh0.dat" -- \
	sh -c "\"$pool\" 6 >/dev/null 2>&1; \"$pool\" 4 >/dev/null 2>&1" 2>"$dir/err"
[ "$(count "$dir/sh0.dat" job_queued)" -eq 0 ] || { echo "-F through sh followed children"; fail=1; }

# A thread id not in the program.
"$usertp" record -q -e 'jobs:*' --pid 1 -o "$dir/p1.dat" -- "$pool" 8 >/dev/null 2>&1
[ "$(count "$dir/p1.dat" job_queued)" -eq 0 ] || { echo "--pid 1 recorded"; fail=1; }
"$usertp" record -q -e 'jobs:job_queued' --notrace-pid 1,2 -o "$dir/n1.dat" -- "$pool" 8 >/dev/null 2>&1
[ "$(count "$dir/n1.dat" job_queued)" -eq 8 ] || { echo "--notrace-pid 1,2 left out"; fail=1; }

# usertp list -v: the lists of a running session, with event-fork.
"$prog" handler 3 >"$dir/p" &
p=$!
until grep -q ready "$dir/p" 2>/dev/null; do sleep 0.05; done
"$usertp" record -q -e rec:rec_event --pid "$p,5" --notrace-pid 3 -c -P "$p" -o "$dir/l.dat" &
r=$!
until [ -n "$(ls "$dir"/l.dat.spool-* 2>/dev/null)" ]; do sleep 0.05; done
sleep 0.2
"$usertp" list -v -P "$p" >"$dir/list"
kill -INT "$r"
wait "$r" || true
if [ "$p" -lt 5 ]; then want="$p,5"; else want="5,$p"; fi
grep -q "^    pids $want$" "$dir/list" && grep -q "^    notrace_pids 3$" "$dir/list" &&
	grep -q "^    event_fork 1$" "$dir/list" || { echo "list -v:"; cat "$dir/list"; fail=1; }
kill "$p"
wait "$p" 2>/dev/null || true
p=

# Bad input: status 2, one line, nothing runs.
for args in "--pid abc" "--pid 1,-2" "--pid 1073741824" "--notrace-pid 1,,x" "-c" "-F -P 1 --"; do
	set +e
	# shellcheck disable=SC2086
	case "$args" in
	*--) "$usertp" record -e 'jobs:*' ${args%--} -o "$dir/bad.dat" >"$dir/bad" 2>&1 ;;
	*) "$usertp" record -e 'jobs:*' $args -o "$dir/bad.dat" -- "$pool" 1 >"$dir/bad" 2>&1 ;;
	esac
	s=$?
	set -e
	[ "$s" -eq 2 ] && [ "$(wc -l <"$dir/bad")" -eq 1 ] && ! grep -q queued "$dir/bad" ||
		{ echo "record $args: status $s"; cat "$dir/bad"; fail=1; }
done
exit $fail
