# SPDX-License-Identifier: MIT
# Shared by the report tests (sourced): a scratch directory, and `same` to compare
# usertp report with trace-cmd report given the same arguments.

command -v trace-cmd >/dev/null || { echo "SKIP: trace-cmd is not installed"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
compared=0

# same ARGS...: both commands' standard output byte for byte, and both succeed.
same() {
	if ! trace-cmd report "$@" >"$dir/theirs" 2>"$dir/theirs.err"; then
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

# expect FILE PATTERN WHAT: the pattern is in the file (so a comparison covered WHAT).
expect() {
	grep -q -- "$2" "$1" || { echo "no $3 in $1"; fail=1; }
}
