#!/bin/sh
# SPDX-License-Identifier: MIT
#
# bench/scaling.sh - how `usertp record`'s cost and its wait at the end grow: with the number
# of programs recorded at once, and with the size of the recording.
#
# usage: bench/scaling.sh [--smoke] [--sizes "MB..."] [--programs "N..."] [BUILD_DIR]
#
# Programs: one recording by `usertp record -a` per N in --programs (default "1 4 16 64") of
# N bench-producer processes started once it runs (they join it from before their main()),
# each firing RATE / N events per second (RATE 200,000 in all) for SECS seconds (5); once they
# have ended, Ctrl-C to the recorder.  Sizes: one recording per size in --sizes (default "100 1000",
# MB of trace.dat; 10000 too where the disk has 3 times the room) of two producer threads at
# 400,000 events/s, as long as that size takes.
#
# Per recording: events fired and recorded + lost (checked equal, exactly), the recorder's CPU
# time per event (usertp record's user + system time, the merge included), and the wait at the
# end: from Ctrl-C, once the last program has ended, to usertp record's exit (the file
# complete).  With the sizes, the disk's
# own rate beside it: the time to copy the file once (cp, then sync).
#
# BUILD_DIR (default: build-bench next to this directory) must hold bin/usertp and
# bench/bench-producer; this script builds nothing.  Files go to a new directory under
# /var/tmp (or BUILD_DIR where /var/tmp is in memory), removed at the end.  --smoke: tiny
# counts (one recording of 1 and of 4 programs, one of 5 MB), to keep it running.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
smoke= sizes= programs="1 4 16 64"
while [ $# -gt 0 ]; do
	case $1 in
	--smoke) smoke=1 ;;
	--sizes) shift; sizes=${1:?--sizes takes a list of MB} ;;
	--programs) shift; programs=${1:?--programs takes a list of counts} ;;
	-h | --help) sed -n '4,/^set -eu/s/^# \{0,1\}//p' "$0"; exit 0 ;;
	-*) echo "scaling.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
build=$(cd "${1:-$here/../build-bench}" && pwd)
usertp=$build/bin/usertp producer=$build/bench/bench-producer
for f in "$usertp" "$producer"; do
	[ -x "$f" ] || { echo "scaling.sh: $f is not built" >&2; exit 2; }
done
base=/var/tmp
[ "$(stat -f -c %T /var/tmp 2>/dev/null)" != tmpfs ] || base=$build
work=$(mktemp -d "$base/usertp-scaling-XXXXXX")
trap 'rm -rf "$work"' EXIT
rate=200000 secs=5 size_rate=400000
if [ -n "$smoke" ]; then
	programs="1 4" secs=0.5 sizes=${sizes:-5}
fi
if [ -z "$sizes" ]; then
	sizes="100 1000"
	room=$(df -Pm "$work" | awk 'NR == 2 { print $4 }')
	[ "$room" -lt 30000 ] || sizes="$sizes 10000"
fi

# record N RATE SECS THREADS: one recording by `usertp record -a` of N producers (THREADS
# threads each) started once it runs, at RATE in all for SECS; once they have ended, Ctrl-C
# (SIGINT) to the recorder.  Prints "fired cpu_ns_per_event wait_s bytes lost" (%.0f, not
# %d: mawk's %d stops at 2^31).  A runtime directory of its own: -a sees only these programs.
record() {
	n=$1 per=$(($2 / $1)) s=$3 t=$4
	rm -rf "$work/run.dat" "$work"/p.* "$work/xdg"
	mkdir -m 700 "$work/xdg"
	XDG_RUNTIME_DIR=$work/xdg /usr/bin/time -f '%U %S' -o "$work/time" "$usertp" record -q -a \
		-e 'usertp_bench:*' -o "$work/run.dat" 2>"$work/err" &
	rec=$!
	i=0
	while [ -z "$(ls "$work"/xdg/usertp/all/ 2>/dev/null)" ] && [ $i -lt 1000 ]; do
		sleep 0.01
		i=$((i + 1))
	done
	# One at a time, each once the recorder has it (its spool exists): started all at once,
	# 16 programs kept it busier than a starting program waits for it (JOIN_ALL_MS, 250 ms),
	# and the last ones ran untraced until their control thread joined it (see RESULTS.md).
	i=0
	while [ $i -lt "$n" ]; do
		XDG_RUNTIME_DIR=$work/xdg "$producer" -t "$t" "$per" "$s" >"$work/p.$i" &
		pid=$! k=0
		while ! ls "$work"/run.dat.spool-*/"$pid"-* >/dev/null 2>&1 && [ $k -lt 500 ]; do
			sleep 0.01
			k=$((k + 1))
		done
		i=$((i + 1))
	done
	while pgrep -f "$producer -t $t $per $s" >/dev/null; do
		sleep 0.01
	done
	end=$(date +%s.%N)
	pkill -INT -P "$rec" # (usertp record, under /usr/bin/time, which ignores SIGINT)
	wait "$rec" || { echo "scaling.sh: usertp record failed:" >&2; cat "$work/err" >&2; exit 1; }
	done_at=$(date +%s.%N)
	fired=$(cat "$work"/p.* | sed -n 's/^fired \([0-9]*\).*/\1/p' | awk '{ n += $1 } END { printf "%.0f\n", n }')
	got=$("$usertp" report --stat "$work/run.dat" | awk '$1 == "all" { printf "%.0f\n", $2 + $3 }')
	[ "$got" = "$fired" ] || { echo "scaling.sh: $got recorded + lost, $fired fired" >&2; exit 1; }
	lost=$("$usertp" report --stat "$work/run.dat" | awk '$1 == "all" { print $3 }')
	awk -v f="$fired" -v end="$end" -v done="$done_at" \
		-v bytes="$(stat -c %s "$work/run.dat")" -v lost="$lost" '
		{ cpu = $1 + $2 }
		END { printf "%.0f %.1f %.2f %.0f %.0f\n", f, cpu * 1e9 / f, done - end, bytes, lost }' "$work/time"
}

echo "usertp record, scaling; $(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1);" \
	"usertp $(git -C "$here" describe --always --dirty 2>/dev/null || echo '?'); files in $base"
echo
echo "Programs recorded at once ($rate events/s in all, ${secs} s, one thread each):"
printf '  %8s %11s %8s %16s %14s %10s\n' programs fired lost "rec CPU ns/evt" "wait at end" "file MB"
for n in $programs; do
	set -- $(record "$n" "$rate" "$secs" 1)
	printf '  %8s %11s %8s %16s %12s s %10.1f\n' "$n" "$1" "$5" "$2" "$3" "$(awk -v b="$4" 'BEGIN { print b / 1e6 }')"
done
echo
echo "Recordings by size (2 threads, $size_rate events/s), and the disk copying the file once:"
printf '  %8s %11s %8s %16s %14s %14s\n' "MB" fired lost "rec CPU ns/evt" "wait at end" "cp + sync"
for mb in $sizes; do
	# About 52 bytes per event in the file (bench-record.sh's runs).
	s=$(awk -v mb="$mb" -v r="$size_rate" 'BEGIN { printf "%.1f", mb * 1e6 / 52 / r }')
	set -- $(record 1 "$size_rate" "$s" 2)
	sync
	t0=$(date +%s.%N)
	cp "$work/run.dat" "$work/copy.dat"
	sync
	t1=$(date +%s.%N)
	rm -f "$work/copy.dat"
	printf '  %8.0f %11s %8s %16s %12s s %12s s\n' "$(awk -v b="$4" 'BEGIN { print b / 1e6 }')" \
		"$1" "$5" "$2" "$3" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
done
echo
echo "rec CPU: usertp record -a's user + system time per event fired (the merge included);"
echo "wait at end: from Ctrl-C, once the programs have ended, to its exit (the file complete);"
echo "every run: recorded + lost = fired, exactly."
