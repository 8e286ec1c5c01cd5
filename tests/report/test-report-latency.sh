#!/bin/sh
# SPDX-License-Identifier: MIT
# usertp report --latency on the bundled example's events (numbers and strings as keys):
#   - its figures (count, min, mean, p50, p90, p99, max, the unpaired) are those an awk script
#     computes from `usertp report -t`'s lines (the same nanoseconds), exactly;
#   - a known wait: with -b US the example's resize jobs wait US microseconds for their input,
#     so from job_started to job_done each takes at least that (-F keeps the resize starts);
#   - CSV and JSON parse, and say what the text says;
#   - refused with one line: a typo'd event or field (with the close matches), a pair that is
#     not one, --format alone, --stat with it.
#   usage: test-report-latency.sh USERTP WORKER-POOL
set -eu
usertp=$1 pool=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
. "$(dirname "$0")/../lib.sh"

USERTP_EVENTS='jobs:*' USERTP_OUTPUT="$dir/w.dat" "$pool" -w 3 -b 3000 600 >/dev/null
"$usertp" report -t -i "$dir/w.dat" >"$dir/lines"

# expected START END FIELD: the figures of the pair as CSV's row, from the lines, by awk
expected() {
	awk -v start="$1" -v end="$2" -v field="$3" '
	function value(   m) {
		match($0, " " field "=[^ ]*")
		return substr($0, RSTART + length(field) + 2, RLENGTH - length(field) - 2)
	}
	{
		ev = $4; sub(/:$/, "", ev); ts = $3; sub(/:$/, "", ts)
		split(ts, p, "."); ns = p[1] * 1000000000 + p[2]
	}
	ev == start { k = value(); if (k in wait) us++; wait[k] = ns; next }
	ev == end {
		k = value()
		if (!(k in wait)) { ue++; next }
		d[++n] = ns - wait[k]; sum += d[n]; last = d[n]; delete wait[k]
	}
	function rank(p,   r) { r = int((p * n + 99) / 100); return d[r ? r : 1] }
	END {
		for (i = 2; i <= n; i++) { v = d[i]; for (j = i - 1; j >= 1 && d[j] > v; j--) d[j + 1] = d[j]; d[j + 1] = v }
		for (k in wait) us++
		printf "%d,%d,%.1f,%d,%d,%d,%d,%d,%d,%d,0\n", n, d[1], sum / n, rank(50), rank(90), rank(99), d[n], last, us, ue
	}' "$dir/lines"
}

# A number as the key (id), and a string (name: job_done has none, job_started has).
for pair in "job_queued id job_done" "job_queued name job_started"; do
	# shellcheck disable=SC2086 # START FIELD END
	set -- $pair
	"$usertp" report -i "$dir/w.dat" --format csv --latency "jobs:$1.$2 -> jobs:$3.$2" >"$dir/csv"
	got=$(sed -n 2p "$dir/csv" | cut -d, -f4-)
	want=$(expected "$1" "$3" "$2")
	[ "$got" = "$want" ] || { echo "$1.$2 -> $3.$2: $got, the lines say $want"; fail=1; }
	[ "$(sed -n 1p "$dir/csv")" = "kind,name,unit,count,min,mean,p50,p90,p99,max,last,unpaired_starts,unpaired_ends,renamed_ends" ] ||
		{ echo "CSV header:"; cat "$dir/csv"; fail=1; }
	[ "$(sed -n 2p "$dir/csv" | cut -d, -f1,3)" = latency,ns ] || { echo "CSV kind, unit:"; cat "$dir/csv"; fail=1; }
done
check_count "jobs paired" "$(sed -n 2p "$dir/csv" | cut -d, -f4)" 600

# The known wait: resize jobs (kind 0) take at least 3 ms from start to done.
"$usertp" report -i "$dir/w.dat" -F 'jobs/job_started: kind == 0' -F 'jobs/job_done' --format csv \
	--latency 'job_started.id -> job_done.id' >"$dir/csv"
min=$(sed -n 2p "$dir/csv" | cut -d, -f5)
count=$(sed -n 2p "$dir/csv" | cut -d, -f4)
check_count "resize jobs paired" "$count" "$(grep -c ' job_started: .* kind=resize ' "$dir/lines")"
[ "$min" -ge 3000000 ] || { echo "a resize job took $min ns, less than its 3 ms wait"; fail=1; }

# Text and JSON agree with CSV.
"$usertp" report -i "$dir/w.dat" --latency 'job_queued.id -> job_done.id' >"$dir/text"
"$usertp" report -i "$dir/w.dat" --latency 'job_queued.id -> job_done.id' --format csv >"$dir/csv"
grep -q '^job_queued.id -> job_done.id: 600 paired; unpaired: 0 starts, 0 ends$' "$dir/text" ||
	{ echo "text:"; cat "$dir/text"; fail=1; }
[ "$(grep -c '^  \[.*) *[0-9]* |#' "$dir/text")" -ge 1 ] || { echo "no histogram:"; cat "$dir/text"; fail=1; }
buckets=$(sed -n 's/^  \[.*) *\([0-9]*\) |#*$/\1/p' "$dir/text" | awk '{ n += $1 } END { print n }')
check_count "the histogram's counts" "$buckets" 600
"$usertp" report -i "$dir/w.dat" --latency 'job_queued.id -> job_done.id' --format json >"$dir/json"
if command -v python3 >/dev/null; then
	python3 -c '
import csv, json, sys
j = json.load(open(sys.argv[1]))
c = list(csv.DictReader(open(sys.argv[2])))
assert len(j) == 1 and len(c) == 1, (j, c)
for k in c[0]:
    assert str(j[0][k]) == c[0][k], (k, j[0][k], c[0][k])
' "$dir/json" "$dir/csv" || { echo "JSON against CSV:"; cat "$dir/json" "$dir/csv"; fail=1; }
fi

# Refused, one line each (status 1: not in the file; 2: not a pair, or options that clash).
refused() {
	want_status=$1 pattern=$2
	shift 2
	set +e
	"$usertp" report -i "$dir/w.dat" "$@" >"$dir/out" 2>"$dir/err"
	status=$?
	set -e
	[ "$status" -eq "$want_status" ] && [ "$(wc -l <"$dir/err")" -eq 1 ] && [ ! -s "$dir/out" ] &&
		grep -q -- "$pattern" "$dir/err" || { echo "$*: status $status:"; cat "$dir/err"; fail=1; }
}
refused 1 'no event jobs:job_queud .*close matches: jobs:job_queued' --latency 'jobs:job_queud.id -> jobs:job_done.id'
refused 1 'no field idd .*close matches: jobs:job_queued.id' --latency 'job_queued.idd -> job_done.id'
refused 2 'SYS:START.FIELD -> SYS:END.FIELD' --latency 'job_queued -> job_done'
refused 2 'one event' --latency 'job_done.id -> job_done.id'
refused 2 'give one' --format csv
refused 2 'one of them' --stat --latency 'job_queued.id -> job_done.id'
refused 2 'text, csv or json' --latency 'job_queued.id -> job_done.id' --format xml
exit $fail
