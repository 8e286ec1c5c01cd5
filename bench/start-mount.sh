#!/bin/sh
# SPDX-License-Identifier: MIT
# start-mount.sh BUILD [STARTS] [ROUNDS]: what a running `usertp mount` with nothing enabled
# costs every libusertp program that starts (each joins the mount's instances before main()).
#
# Rounds alternate: the programs started with no mount, then with one (started for the round,
# nothing enabled).  In each, bench/peers' start-time starts peer-none (no libusertp) and
# peer-usertp (libusertp, one event, never enabled) STARTS times each (default 200), and one
# start of peer-usertp reports its peak resident memory.  Prints per round the means to main()
# and to the end, in microseconds, then the medians and what the mount adds.  Needs FUSE.
set -eu
. "$(dirname "$0")/mount-lib.sh"
if [ ! -c /dev/fuse ] || ! command -v fusermount3 >/dev/null; then
	echo "start-mount: no /dev/fuse or no fusermount3: skipped"
	exit 77
fi
build=$(cd "$1" && pwd)
starts=${2:-200}
rounds=${3:-5}
bin=$build/bench
usertp=$build/bin/usertp
tmp=$(mktemp -d)
export XDG_RUNTIME_DIR="$tmp/xdg" USERTP_SYSTEM_DIR="$tmp/xdg/system"
mkdir -m 700 "$XDG_RUNTIME_DIR" "$tmp/mnt"
m=
trap '[ -z "$m" ] || { fusermount3 -u "$tmp/mnt" 2>/dev/null; wait $m; }; rm -rf "$tmp"' EXIT
: >"$tmp/all.tsv"
r=1
while [ $r -le "$rounds" ]; do
	for mode in none mount; do
		if [ $mode = mount ]; then
			mount_start "$usertp" "$tmp/mnt"
		fi
		"$bin/start-time" "$starts" 1 "$bin/peer-none" "$bin/peer-usertp" |
			awk -v mode=$mode -v r=$r '{ sub(".*/", "", $1); print mode, r, $1, $3, $4 }' >>"$tmp/all.tsv"
		rss=$( { /usr/bin/time -f '%M' "$bin/peer-usertp" --start-time >/dev/null; } 2>&1)
		echo "$mode $r rss $rss 0" >>"$tmp/all.tsv"
		if [ -n "$m" ]; then
			fusermount3 -u "$tmp/mnt"
			wait $m
			m=
		fi
	done
	r=$((r + 1))
done
echo "mode round program to_main_us to_exit_us (rss: peak KiB of one peer-usertp)"
cat "$tmp/all.tsv"
median() {
	sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
echo
for mode in none mount; do
	for prog in peer-none peer-usertp; do
		printf '%-5s %-11s to main %6.0f us, to the end %6.0f us\n' $mode $prog \
			"$(awk -v m=$mode -v p=$prog '$1 == m && $3 == p { print $4 }' "$tmp/all.tsv" | median)" \
			"$(awk -v m=$mode -v p=$prog '$1 == m && $3 == p { print $5 }' "$tmp/all.tsv" | median)"
	done
	printf '%-5s peer-usertp peak resident %s KiB\n' $mode \
		"$(awk -v m=$mode '$1 == m && $3 == "rss" { print $4 }' "$tmp/all.tsv" | median)"
done
# What the mount adds to a start of peer-usertp, per round (against the round's no-mount run).
awk '$3 == "peer-usertp" { v[$1, $2] = $4 } END { for (k in v) { split(k, a, SUBSEP);
	if (a[1] == "mount") print v["mount", a[2]] - v["none", a[2]] } }' "$tmp/all.tsv" |
	median | awk '{ printf "the mount adds %.0f us to main() (median of the rounds)\n", $1 }'
