# SPDX-License-Identifier: MIT
# Shared by the report tests (sourced): a scratch directory, `same` to compare usertp report
# with trace-cmd report given the same arguments, and `put` to damage or rewrite a file.

command -v trace-cmd >/dev/null || { echo "SKIP: trace-cmd is not installed"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
compared=0

# theirs OUT ARGS...: trace-cmd report ARGS into OUT. trace-cmd 3.1.6 parses the TRACECLOCK
# option's data as text even when it is empty (as in its own version 6 files and ours), so it
# reads a malloc(0) block; when that happens to hold a "[", it prints a file's times raw
# ("[000]9455950372123:"). Such a run is done again.
theirs() {
	out=$1
	shift
	for attempt in 1 2 3 4 5 6 7 8; do
		trace-cmd report "$@" >"$out" 2>"$dir/theirs.err" || return 1
		grep -q '\][0-9]\{7,\}:' "$out" || return 0
	done
}

# same ARGS...: both commands' standard output byte for byte, and both succeed.
same() {
	if ! theirs "$dir/theirs" "$@"; then
		echo "trace-cmd report $* failed:"; cat "$dir/theirs.err"; fail=1; return
	fi
	if ! "$usertp" report "$@" >"$dir/ours" 2>"$dir/ours.err"; then
		echo "usertp report $* failed:"; cat "$dir/ours.err"; fail=1; return
	fi
	if ! cmp -s "$dir/ours" "$dir/theirs"; then
		echo "usertp report $* differs from trace-cmd report:"
		diff "$dir/ours" "$dir/theirs" | head -10
		fail=1
	fi
	compared=$((compared + 1))
}

# put FILE OFFSET BYTES VALUE: a little-endian number written in place.
put() {
	i=0
	while [ $i -lt "$3" ]; do
		# shellcheck disable=SC2059
		printf "\\$(printf %03o $(( ($4 >> (8 * i)) & 255 )))"
		i=$((i + 1))
	done | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# expect FILE PATTERN WHAT: the pattern is in the file (so a comparison covered WHAT).
expect() {
	grep -q -- "$2" "$1" || { echo "no $3 in $1:"; head -5 "$1"; fail=1; }
}
