#!/bin/sh
# SPDX-License-Identifier: MIT
# test-filter-embedded.sh USERTP REC-PROG: filters of the embedded recorder
# (USERTP_EVENTS='SPECS if FILTER; ...'), run in the program before the ring buffer: exactly
# the matching records kept, the others leaving nothing (no lost count); a filter that does
# not fit its event said with its caret, and the event not recorded.  Both writers: the
# library's choice and USERTP_RSEQ=0.
set -eu
usertp=$1 prog=$2
dir=$(mktemp -d /tmp/usertp-filter-XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail=0
count() { "$usertp" report -i "$1" | grep -c "$2" || true; }
for mode in "" 0; do
	export USERTP_RSEQ=$mode
	[ -n "$mode" ] || unset USERTP_RSEQ
	USERTP_EVENTS='rec:rec_event if seq >= 5 && seq < 15' USERTP_OUTPUT="$dir/a.dat" "$prog" seq 20
	n=$(count "$dir/a.dat" " rec_event: ")
	[ "$n" -eq 10 ] || { echo "rseq=$mode: $n records of seq 5..14, not 10"; fail=1; }
	# No lost events marked: a refused record leaves nothing behind.
	"$usertp" report --stat "$dir/a.dat" >"$dir/stat"
	grep -q "^all *10 *0" "$dir/stat" || { echo "stat:"; cat "$dir/stat"; fail=1; }
	# Groups: every rec event; rec_event only for seq 3.
	USERTP_EVENTS='rec:*; rec:rec_event if seq == 3 || thread != 0' USERTP_OUTPUT="$dir/b.dat" \
		"$prog" return 20
	[ "$(count "$dir/b.dat" " rec_event: ")" -eq 1 ] && [ "$(count "$dir/b.dat" " rec_mark: ")" -eq 1 ] ||
		{ echo "groups:"; "$usertp" report -i "$dir/b.dat"; fail=1; }
	# A filter that does not fit: said, with its caret; the event not recorded.
	USERTP_EVENTS='rec:rec_event if seq >= 5 &&' USERTP_OUTPUT="$dir/c.dat" "$prog" seq 20 2>"$dir/err"
	grep -q "^seq >= 5 &&$" "$dir/err" && grep -q "^         \^$" "$dir/err" &&
		grep -q "^parse_error: Meaningless filter expression$" "$dir/err" ||
		{ echo "error:"; cat "$dir/err"; fail=1; }
	[ "$(count "$dir/c.dat" " rec_event: ")" -eq 0 ] || { echo "a refused filter recorded"; fail=1; }
done
exit $fail
