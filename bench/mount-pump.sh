#!/bin/sh
# SPDX-License-Identifier: MIT
# mount-pump.sh BUILD [BUILD2] [JOBS] [ROUNDS]: the CPU time a running `usertp mount` spends per
# record it takes, with the bundled worker-pool's events enabled (strings, arrays, numbers
# after them: the mount makes each record's `trace` text as it arrives).
#
# Each round starts BUILD's mount (and BUILD2's, alternating, to compare two builds in the
# same run), enables jobs:* in it, runs BUILD's worker-pool -w 2 JOBS, waits until the mount's
# per-CPU stats count every record (entries, overrun, dropped and read no longer change), and
# divides the mount process's user + system time by that count.  Prints each round, then the
# medians.  Needs FUSE.
set -eu
. "$(dirname "$0")/mount-lib.sh"
if [ ! -c /dev/fuse ] || ! command -v fusermount3 >/dev/null; then
	echo "mount-pump: no /dev/fuse or no fusermount3: skipped"
	exit 77
fi
b1=$(cd "$1" && pwd)
b2=$b1
if [ $# -ge 2 ] && [ -d "$2" ]; then
	b2=$(cd "$2" && pwd)
	shift
fi
jobs=${2:-20000}
rounds=${3:-5}
tmp=$(mktemp -d)
export XDG_RUNTIME_DIR="$tmp/xdg" USERTP_SYSTEM_DIR="$tmp/xdg/system"
mkdir -m 700 "$XDG_RUNTIME_DIR" "$tmp/mnt"
m=
trap '[ -z "$m" ] || { fusermount3 -u "$tmp/mnt" 2>/dev/null; wait $m 2>/dev/null; }; rm -rf "$tmp"' EXIT
tick=$(getconf CLK_TCK)

# The records the mount has counted, over all CPUs.
counted() {
	cat "$tmp"/mnt/per_cpu/cpu*/stats |
		awk '/^(entries|overrun|dropped events|read events): / { s += $NF } END { print s + 0 }'
}

# One round of @build: "ns/record records".
round() {
	build=$1
	mount_start "$build/bin/usertp" "$tmp/mnt"
	# (A program must run for set_event to take its events.)
	"$build/examples/worker-pool" -w 1 -b 1000000 1 >/dev/null 2>&1 &
	w=$!
	until echo 'jobs:*' >"$tmp/mnt/set_event" 2>/dev/null; do sleep 0.01; done
	wait $w
	echo 20000 >"$tmp/mnt/buffer_size_kb"
	before=$(awk '{ print $14 + $15 }' /proc/$m/stat)
	"$build/examples/worker-pool" -w 2 "$jobs" >/dev/null 2>&1
	last=-1
	now=$(counted)
	while [ "$now" != "$last" ]; do
		last=$now
		sleep 0.3
		now=$(counted)
	done
	after=$(awk '{ print $14 + $15 }' /proc/$m/stat)
	fusermount3 -u "$tmp/mnt"
	wait $m 2>/dev/null || true
	m=
	echo "$(( (after - before) * (1000000000 / tick) / (now > 0 ? now : 1) )) $now"
}

: >"$tmp/r1"
: >"$tmp/r2"
r=1
while [ "$r" -le "$rounds" ]; do
	set -- $(round "$b1")
	echo "round $r: $b1: $1 ns/record ($2 records)"
	echo "$1" >>"$tmp/r1"
	if [ "$b2" != "$b1" ]; then
		set -- $(round "$b2")
		echo "round $r: $b2: $1 ns/record ($2 records)"
		echo "$1" >>"$tmp/r2"
	fi
	r=$((r + 1))
done
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "median: $b1: $(median "$tmp/r1") ns/record"
[ "$b2" = "$b1" ] || echo "median: $b2: $(median "$tmp/r2") ns/record"
