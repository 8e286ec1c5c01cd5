#!/bin/sh
# SPDX-License-Identifier: MIT
#
# compare-builds.sh - the same benchmark case, run alternately from two (or more) builds, so
# that a change is judged against what came before under the same machine load.
#
# usage: bench/compare-builds.sh [-n ROUNDS] CASE BUILD_DIR BUILD_DIR...
#
# Each BUILD_DIR must hold bench/bench-tracepoint (a Release build: see run-bench.sh).  CASE
# is an id of `bench-tracepoint --list`; recorder cases get their environment from that list,
# and a temporary USERTP_OUTPUT.  Every round runs `bench-tracepoint --case CASE -r 5` once
# per build, in turn; the script prints, per build, the best round of all (the least
# disturbed) and the median of the runs' best rounds, in ns/event.  On a shared machine the
# absolute figures move by tens of percent from one minute to the next; their order, taken
# this way, does not.
set -eu

rounds=10
if [ "${1:-}" = -n ]; then
	rounds=$2
	shift 2
fi
if [ $# -lt 2 ]; then
	sed -n '4,/^set -eu/s/^# \{0,1\}//p' "$0" | sed '$d' >&2
	exit 2
fi
case=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# The case's VAR=value words, tab-separated (a value may hold spaces: a filter).
vars=$("$1/bench/bench-tracepoint" --list | awk -F '\t' -v c="$case" '$1 == c {
	sub(/^[^\t]*\t?/, ""); print; f = 1 } END { exit !f }') || {
	echo "compare-builds.sh: no case $case (see bench-tracepoint --list)" >&2
	exit 2
}
# run_case BUILD: one run of the case, in its environment alone.
run_case() {
	ifs=$IFS
	IFS="$(printf '\t')"
	# shellcheck disable=SC2086 # split at tabs on purpose
	set -- "$1" $vars
	IFS=$ifs
	b=$1
	shift
	env -u USERTP_EVENTS -u USERTP_CLOCK -u USERTP_BUFFER_KB -u USERTP_OUTPUT \
		-u USERTP_OVERWRITE "$@" ${vars:+USERTP_OUTPUT=$tmp/out.txt} \
		"$b/bench/bench-tracepoint" --case "$case" -r 5 --tsv </dev/null
}
i=0
while [ $i -lt "$rounds" ]; do
	for build in "$@"; do
		run_case "$build" |
			awk -F '\t' -v b="$build" '!/^#/ && NF == 5 { print b "\t" $5 }' >>"$tmp/best"
	done
	i=$((i + 1))
done
for build in "$@"; do
	awk -F '\t' -v b="$build" '$1 == b { print $2 }' "$tmp/best" | sort -g |
		awk -v b="$build" '{ v[NR] = $1 }
			END { if (!NR) { print b ": no result"; exit 1 }
			      printf "%s: best %.2f ns/event, median of the runs'"'"' best %.2f (%d runs)\n",
				     b, v[1], (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), NR }'
done
