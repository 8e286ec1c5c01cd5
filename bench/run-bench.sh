#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run-bench.sh - run bench-tracepoint natively and under callgrind and print one table:
#
#	what | ns/call | instructions/call
#
# usage: bench/run-bench.sh [-s|--smoke] [BUILD_DIR | path/to/bench-tracepoint]
#
# Builds nothing: BUILD_DIR (default: build-bench next to this directory) must already hold
# bench/bench-tracepoint.  -s runs the short smoke variant of both runs.
#
# ns/call: the median of several timed rounds of a native run (see bench-tracepoint.c).
#
# instructions/call: the benchmark runs under
#	valgrind --tool=callgrind --smc-check=all
# (--smc-check=all because the library rewrites call sites at run time: valgrind must notice
# that code it already translated changed).  For each case the program itself zeroes
# callgrind's counters with a client request, runs N1 calls, dumps the counters
# (CALLGRIND_DUMP_STATS_AT "usertp-bench CASE N1"), and does the same for N2 = 2 * N1, after a
# warm-up dumped separately (and ignored here) that takes every one-off cost.  This script
# reads the "totals:" line of each dump and prints
#	(Ir(N2) - Ir(N1)) / (N2 - N1)
# Taking the difference of two in-process runs makes the figure exact and robust: the fixed
# costs (calling the loop, the client requests) cancel, nothing depends on function names
# or inlining (as a callgrind_annotate per function would: the iterator is inlined into the
# call site, and the listener's path spans the program, libusertp, libc and ld.so), and the
# start-up and exit of the process (dynamic loading, constructors) are never counted.  The
# benchmark also checks that every case reached what it should: without --smc-check=all
# valgrind goes on running the stale nop, the probe sees no call and the run fails rather
# than report the disabled cost as the enabled one.
# Without valgrind (or a benchmark built without <valgrind/callgrind.h>) the column says n/a.
set -eu

smoke=
target=
for arg in "$@"; do
	case $arg in
	-s | --smoke) smoke=--smoke ;;
	-h | --help)
		sed -n '4,/^set -eu/s/^# \{0,1\}//p' "$0"
		exit 0
		;;
	-*)
		echo "run-bench.sh: unknown option $arg" >&2
		exit 2
		;;
	*) target=$arg ;;
	esac
done

here=$(cd "$(dirname "$0")" && pwd)
[ -n "$target" ] || target=$here/../build-bench
if [ -d "$target" ]; then
	bench=$target/bench/bench-tracepoint
else
	bench=$target
fi
if [ ! -x "$bench" ]; then
	echo "run-bench.sh: no benchmark at $bench (build it first)" >&2
	exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
status=0

echo "native run: $bench $smoke --tsv" >&2
"$bench" $smoke --tsv >"$tmp/native.tsv"

# One line per case: id <TAB> instructions/call (or n/a).
if command -v valgrind >/dev/null 2>&1; then
	echo "callgrind run: valgrind --tool=callgrind --smc-check=all $bench $smoke --callgrind" >&2
	if valgrind --tool=callgrind --smc-check=all --callgrind-out-file="$tmp/cg.out" \
		"$bench" $smoke --callgrind >"$tmp/cg.cases" 2>"$tmp/cg.log"; then
		# Each dump: "desc: Trigger: Client Request: usertp-bench CASE N" and "totals: IR".
		for f in "$tmp"/cg.out.*; do
			awk '/^desc: Trigger: Client Request: usertp-bench / { c = $6; n = $7 }
			     /^totals:/ { t = $2 }
			     END { if (c != "") print c, n, t }' "$f"
		done >"$tmp/dumps"
		# The dumps come in name order (cg.out.1, cg.out.10, cg.out.2, ...): pair each
		# case's two dumps by the N they name, not by position.
		awk '{ c = $1
		       if (!(c in lo) || $2 + 0 < lo[c]) { lo[c] = $2; ilo[c] = $3 }
		       if (!(c in hi) || $2 + 0 > hi[c]) { hi[c] = $2; ihi[c] = $3 } }
		     END { for (c in hi) if (hi[c] > lo[c])
			printf "%s\t%.2f\n", c, (ihi[c] - ilo[c]) / (hi[c] - lo[c]) }' \
			"$tmp/dumps" >"$tmp/instr.tsv"
	else
		echo "run-bench.sh: the callgrind run failed:" >&2
		tail -n 20 "$tmp/cg.log" >&2
		: >"$tmp/instr.tsv"
		status=1
	fi
else
	echo "run-bench.sh: valgrind not found, no instruction counts" >&2
	: >"$tmp/instr.tsv"
fi

# The table, in the order of the native run.
awk -F '\t' '
	FILENAME == ARGV[1] { ins[$1] = $2; next }
	{ what[++n] = $2; ns[n] = $4; id[n] = $1 }
	END {
		printf "%-28s | %8s | %17s\n", "what", "ns/call", "instructions/call"
		printf "%-28s-+-%8s-+-%17s\n", "----------------------------", "--------", "-----------------"
		for (i = 1; i <= n; i++)
			printf "%-28s | %8.2f | %17s\n", what[i], ns[i], (id[i] in ins) ? ins[id[i]] : "n/a"
	}' "$tmp/instr.tsv" "$tmp/native.tsv"
exit $status
