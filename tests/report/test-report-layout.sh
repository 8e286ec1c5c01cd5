#!/bin/sh
# SPDX-License-Identifier: MIT
# trace.dat files from a 32-bit host: a 4-byte long makes each page's header 12 bytes (its commit
# word, and the count of lost events after the entries, are longs).  usertp report prints such a
# file as trace-cmd report does, events and losses.  The files are ours, rewritten as a 32-bit
# kernel lays its pages out (the header_page format says so too).  (Big-endian pages are
# compared with libtraceevent's reader in the unit test test-kernel-page.)
#   usage: test-report-layout.sh USERTP REPORT-FIRE
set -eu
usertp=$1 fire=$2
. "$(dirname "$0")/lib.sh"
export LC_ALL=C
page=4096

# text FILE OLD NEW: OLD (once in FILE) overwritten by NEW, of the same length.
text() {
	at=$(grep -obUa -- "$2" "$1" | head -1 | cut -d: -f1)
	[ -n "$at" ] || { echo "no '$2' in $1"; exit 1; }
	printf '%s' "$3" | dd of="$1" bs=1 seek="$at" conv=notrunc status=none
}
# to32 IN OUT: IN (version 6, this host's layout) as a 32-bit host writes it.
to32() {
	cp "$1" "$2"
	put "$2" 13 1 4 # the file header's long size
	text "$2" "$(printf 'commit;\toffset:8;\tsize:8;')" "$(printf 'commit;\toffset:8;\tsize:4;')"
	text "$2" "$(printf 'data;\toffset:16;\tsize:4080;')" "$(printf 'data;\toffset:12;\tsize:4084;')"
	trace-cmd dump --flyrecord -i "$1" 2>/dev/null | sed -n 's/^[[:space:]]*\([0-9]*\)[[:space:]]*\([0-9]*\)[[:space:]]*\[offset.*/\1 \2/p' |
	while read -r off size; do
		p=$off
		while [ $p -lt $((off + size)) ]; do
			# The commit word's low half (size and flags), then the entries 4 bytes
			# earlier; a count of lost events after them is read as its low half too.
			dd if="$1" of="$2" bs=4096 iflag=skip_bytes,count_bytes oflag=seek_bytes \
				skip=$((p + 8)) seek=$((p + 8)) count=4 conv=notrunc status=none
			dd if="$1" of="$2" bs=4096 iflag=skip_bytes,count_bytes oflag=seek_bytes \
				skip=$((p + 16)) seek=$((p + 12)) count=$((page - 16)) conv=notrunc status=none
			put "$2" $((p + page - 4)) 4 0
			p=$((p + page))
		done
	done
}

# Many pages on both CPUs; then a small buffer that loses events.
USERTP_EVENTS='usertp-test:*' USERTP_OUTPUT=$dir/full.dat "$fire" 30 100
USERTP_BUFFER_KB=8 USERTP_EVENTS='usertp-test:*' USERTP_OUTPUT=$dir/lost.dat "$fire" 4 40
for f in full lost; do
	to32 "$dir/$f.dat" "$dir/$f-32.dat"
	trace-cmd dump --summary -i "$dir/$f-32.dat" 2>/dev/null | grep -q '4	\[Bytes in a long\]' ||
		{ echo "$f-32.dat: not a 4-byte long"; fail=1; }
	same -i "$dir/$f-32.dat"
	cp "$dir/ours" "$dir/$f-32.txt"
	# The same events as the file they were made from (the long size changes no field here).
	"$usertp" report -i "$dir/$f.dat" >"$dir/$f.txt"
	cmp -s "$dir/$f.txt" "$dir/$f-32.txt" || { echo "$f: not the events of the 64-bit file:";
		diff "$dir/$f.txt" "$dir/$f-32.txt" | head -5; fail=1; }
	[ "$(wc -l <"$dir/$f-32.txt")" -gt 100 ] || { echo "$f-32: too few events"; fail=1; }
done
expect "$dir/lost-32.txt" 'EVENTS DROPPED\]' "losses in the 32-bit file"
"$usertp" report --stat -i "$dir/lost-32.dat" >"$dir/stat32"
"$usertp" report --stat -i "$dir/lost.dat" >"$dir/stat64"
cmp -s "$dir/stat32" "$dir/stat64" || { echo "report --stat differs:"; diff "$dir/stat64" "$dir/stat32"; fail=1; }
[ $compared -eq 2 ] || fail=1
exit $fail
