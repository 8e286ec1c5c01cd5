#!/bin/sh
# SPDX-License-Identifier: MIT
# <usertp/track.h> and usertp report --spans, with track-prog's known lengths and values, built
# as C, as C++ and against the static library, recorded by the embedded recorder and by
# usertp record:
#   - trace-cmd report prints the events as usertp report does; their fields have the names
#     and types of Perfetto's kernel track events (track_event_type char, slice_name and
#     track_name __string, scope_span_id and scope_tgid, counter_value);
#   - the figures of --spans are an awk script's over `usertp report -t`'s lines (spans paired
#     per thread, the last begun ended first; async spans by name and id), exactly;
#   - each span at least as long as what it holds (2 ms sleeps, 1 ms of spinning, a 3 ms
#     sleep on another thread for the async one), at most 1 s more (the scheduler's share);
#     the counter's values, the instants, the span left open and the stray end exactly;
#   - JSON says what CSV says; a file without these events is refused with one line.
#   - in a module dlopen()ed by a program that knows nothing of usertp (track-mod in
#     dlopen-host), embedded and by usertp record (--allow-missing: the program defines none);
#   usage: test-report-spans.sh USERTP TRACK-PROG TRACK-PROG-CXX TRACK-PROG-STATIC DLOPEN-HOST
#          TRACK-MOD
set -eu
usertp=$1 dlopen_host=$5 track_mod=$6
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../lib.sh"
rounds=10

# expected: --spans' CSV rows from the lines (kind,name,count,min,mean,p50,p90,p99,max,last,
# unpaired starts,unpaired ends,renamed ends), sorted as --spans sorts them
expected() {
	awk -v rounds=$rounds '
	function add(kind, name, d) {
		k = kind SUBSEP name; kinds[k] = kind; names[k] = name
		n[k]++; v[k, n[k]] = d; sum[k] += d; last[k] = d
		return k
	}
	{
		ev = $4; sub(/:$/, "", ev); ts = $3; sub(/:$/, "", ts)
		split(ts, p, "."); ns = p[1] * 1000000000 + p[2]
		tid = $1; sub(/.*-/, "", tid); type = $5; name = $6
	}
	ev == "usertp_span" && type == "B" { stack[tid, ++depth[tid]] = name; at[tid, depth[tid]] = ns }
	ev == "usertp_span" && type == "E" {
		if (!depth[tid]) { k = "span" SUBSEP name; kinds[k] = "span"; names[k] = name; ue[k]++; next }
		k = add("span", stack[tid, depth[tid]], ns - at[tid, depth[tid]])
		if (stack[tid, depth[tid]] != name) renamed[k]++
		depth[tid]--
	}
	ev == "usertp_span" && type == "I" { add("instant", name, 0) }
	ev == "usertp_async" && type == "B" { id = $7; sub(/id=/, "", id); began[name, id] = ns }
	ev == "usertp_async" && type == "E" {
		id = $7; sub(/id=/, "", id)
		if (!((name, id) in began)) { k = "async" SUBSEP name; kinds[k] = "async"; names[k] = name; ue[k]++; next }
		add("async", name, ns - began[name, id]); delete began[name, id]
	}
	ev == "usertp_counter" { split($5, kv, "="); pid = $1; sub(/.*-/, "", pid); add("counter", kv[1] " (pid " pid ")", kv[2]) }
	function rank(k, q,   r) { r = int((q * n[k] + 99) / 100); return v[k, r ? r : 1] }
	END {
		for (t in depth) for (i = 1; i <= depth[t]; i++) {
			k = "span" SUBSEP stack[t, i]; kinds[k] = "span"; names[k] = stack[t, i]; us[k]++
		}
		for (k in kinds) {
			for (i = 2; i <= n[k]; i++) {
				x = v[k, i]; for (j = i - 1; j >= 1 && v[k, j] > x; j--) v[k, j + 1] = v[k, j]; v[k, j + 1] = x
			}
			order = kinds[k] == "span" ? 0 : kinds[k] == "async" ? 1 : kinds[k] == "instant" ? 2 : 3
			printf "%d\t%s,\"%s\",%d,%d,%.1f,%d,%d,%d,%d,%d,%d,%d,%d\n", order, kinds[k], names[k], n[k] + 0,
				v[k, 1] + 0, n[k] ? sum[k] / n[k] : 0, rank(k, 50) + 0, rank(k, 90) + 0, rank(k, 99) + 0,
				v[k, n[k]] + 0, last[k] + 0, us[k] + 0, ue[k] + 0, renamed[k] + 0
		}
	}' "$dir/lines" | LC_ALL=C sort -t"$(printf '\t')" -k1,1n -k2 | cut -f2
}

# field CSV KIND NAME COLUMN: a column (by header name) of a row of --spans' CSV
field() {
	awk -F, -v kind="$2" -v name="\"$3\"" -v col="$4" '
	NR == 1 { for (i = 1; i <= NF; i++) at[$i] = i; next }
	$1 == kind && $2 == name { print $at[col] }' "$1"
}

check_figures() { # FILE LABEL
	"$usertp" report -t -i "$1" >"$dir/lines"
	"$usertp" report -i "$1" --spans --format csv >"$dir/csv"
	expected >"$dir/want"
	tail -n +2 "$dir/csv" | sed 's/,ns,/,/; s/,value,/,/' >"$dir/got"
	cmp -s "$dir/got" "$dir/want" || { echo "$2: --spans against the lines:"; diff "$dir/got" "$dir/want"; fail=1; }
	for row in "span sleep 2000000" "span busy 1000000" "span outer 3000000" "async request 3000000"; do
		# shellcheck disable=SC2086 # KIND NAME FLOOR
		set -- $row
		check_count "$2: $1 $2 spans" "$(field "$dir/csv" "$1" "$2" count)" $rounds
		[ "$(field "$dir/csv" "$1" "$2" min)" -ge "$3" ] && [ "$(field "$dir/csv" "$1" "$2" max)" -le $(($3 + 1000000000)) ] ||
			{ echo "$1 $2: min $(field "$dir/csv" "$1" "$2" min), max $(field "$dir/csv" "$1" "$2" max) ns for $3 ns"; fail=1; }
	done
	check_count "instants" "$(field "$dir/csv" instant tick count)" $rounds
	check_count "the span left open" "$(field "$dir/csv" span left-open unpaired_starts)" 1
	check_count "the stray end" "$(field "$dir/csv" span stray unpaired_ends)" 1
	check_count "the span ended under another name" "$(field "$dir/csv" span renamed renamed_ends)" 1
	check_count "the span ended under another name, ended" "$(field "$dir/csv" span renamed count)" 1
	counter=$(grep '^counter,"queue (pid [0-9]*)",' "$dir/csv" | cut -d, -f4-)
	[ "$counter" = "10,0,45.0,40,80,90,90,90,0,0,0" ] || { echo "the counter: $counter"; fail=1; }
}

for prog in "$2" "$3" "$4"; do
	label=$(basename "$prog")
	USERTP_EVENTS='usertp:*' USERTP_OUTPUT="$dir/$label.dat" "$prog" $rounds >/dev/null
	same -i "$dir/$label.dat"
	check_figures "$dir/$label.dat" "$label"
done

# Perfetto's field names and types, in the file's formats.
trace-cmd report --events -i "$dir/track-prog.dat" >"$dir/formats" 2>/dev/null ||
	"$usertp" report -R -i "$dir/track-prog.dat" >/dev/null
for f in 'char track_event_type;' '__data_loc char\[\] slice_name;' '__data_loc char\[\] track_name;' \
	'unsigned long long scope_span_id;' 'long long counter_value;' 'int scope_tgid;'; do
	grep -q "field:$f" "$dir/formats" || { echo "no field $f in the formats"; fail=1; }
done

# usertp record: the events are libusertp's, not the program's, and are found there.
XDG_RUNTIME_DIR="$dir/xdg" && mkdir -m 700 "$XDG_RUNTIME_DIR" && export XDG_RUNTIME_DIR
"$usertp" record -q -e 'usertp:*' -o "$dir/r.dat" -- "$2" $rounds >/dev/null 2>"$dir/err" ||
	{ echo "usertp record:"; cat "$dir/err"; fail=1; }
check_figures "$dir/r.dat" "usertp record"

# usertp record -P: a running program's spans from when the recorder joined (a span whose
# begin came before is an end unpaired, in the awk's pairing too).
"$2" 300 >/dev/null &
running=$!
"$usertp" record -q -e 'usertp:*' -P "$running" -o "$dir/p.dat" 2>"$dir/err" ||
	{ echo "usertp record -P:"; cat "$dir/err"; fail=1; }
wait "$running" || true
"$usertp" report -t -i "$dir/p.dat" >"$dir/lines"
"$usertp" report -i "$dir/p.dat" --spans --format csv >"$dir/csv"
expected >"$dir/want"
tail -n +2 "$dir/csv" | sed 's/,ns,/,/; s/,value,/,/' | cmp -s - "$dir/want" ||
	{ echo "record -P: --spans against the lines:"; cat "$dir/csv" "$dir/want"; fail=1; }
[ "$(field "$dir/csv" span outer count)" -ge 1 ] || { echo "record -P: no span"; cat "$dir/csv"; fail=1; }

# JSON = CSV, key by key.
"$usertp" report -i "$dir/r.dat" --spans --format json >"$dir/json"
"$usertp" report -i "$dir/r.dat" --spans --format csv >"$dir/csv"
if command -v python3 >/dev/null; then
	python3 -c '
import csv, json, sys
j = json.load(open(sys.argv[1]))
c = list(csv.DictReader(open(sys.argv[2])))
assert len(j) == len(c) == 9, (len(j), len(c))
for a, b in zip(j, c):
    for k in b:
        assert str(a[k]) == b[k], (k, a[k], b[k])
' "$dir/json" "$dir/csv" || { echo "JSON against CSV:"; cat "$dir/json" "$dir/csv"; fail=1; }
fi

# A record whose string lies outside it (a hostile file): left out, not read.  The first
# "outer" begin's __data_loc word (offset 16, length 6) made to point 0xfff0 bytes on.
if command -v python3 >/dev/null; then
	python3 -c '
import sys
d = bytearray(open(sys.argv[1], "rb").read())
word = (16 | 6 << 16).to_bytes(4, "little")
at = d.find(word + b"outer\0")
assert at > 0
d[at:at + 4] = (0xfff0 | 6 << 16).to_bytes(4, "little")
open(sys.argv[2], "wb").write(d)
' "$dir/r.dat" "$dir/bad.dat"
	set +e
	"$usertp" report -i "$dir/bad.dat" --spans --format csv >"$dir/csv" 2>"$dir/err"
	status=$?
	set -e
	[ $status -eq 0 ] && [ "$(field "$dir/csv" span outer count)" -eq $((rounds - 1)) ] &&
		[ "$(grep -c '^span,' "$dir/csv")" -eq 6 ] ||
		{ echo "a record outside its bounds: status $status:"; cat "$dir/err" "$dir/csv"; fail=1; }
	"$usertp" report -i "$dir/bad.dat" | grep -q 'FIELD slice_name OUTSIDE THE RECORD' ||
		{ echo "the damaged record is not said"; fail=1; }
fi

# A module's spans and counter, dlopen()ed: 7 calls, embedded and recorded.
USERTP_EVENTS='usertp:*' USERTP_OUTPUT="$dir/m.dat" "$dlopen_host" "$track_mod" 7
"$usertp" record -q -e 'usertp:*' --allow-missing -o "$dir/m2.dat" -- "$dlopen_host" "$track_mod" 7 \
	2>"$dir/err" || { echo "usertp record of the module:"; cat "$dir/err"; fail=1; }
for f in m m2; do
	"$usertp" report -i "$dir/$f.dat" --spans --format csv >"$dir/csv"
	check_count "$f: the module's spans" "$(field "$dir/csv" span module count)" 7
	counter=$(grep '^counter,"module-n (pid [0-9]*)",' "$dir/csv" | cut -d, -f4,5,10,11)
	[ "$counter" = "7,0,6,6" ] || { echo "$f: the module's counter: $counter"; fail=1; }
done

# A file without them: one line, status 1.
USERTP_EVENTS='usertp:usertp_flow' USERTP_OUTPUT="$dir/none.dat" "$2" 1 >/dev/null
set +e
"$usertp" report -i "$dir/none.dat" --spans >"$dir/out" 2>"$dir/err"
status=$?
set -e
[ $status -eq 1 ] && [ "$(wc -l <"$dir/err")" -eq 1 ] && grep -q 'no events of <usertp/track.h>' "$dir/err" ||
	{ echo "--spans without span events: status $status:"; cat "$dir/err"; fail=1; }
exit $fail
