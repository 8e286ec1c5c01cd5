#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run-bench.sh - run bench-tracepoint natively and under callgrind and print one table:
#
#	what | ns/event | best | instructions/event
#
# then the notes of the native run (two threads against one, how often the recorder's buffer
# wrapped).
#
# usage: bench/run-bench.sh [-s|--smoke] [BUILD_DIR | path/to/bench-tracepoint]
#
# Builds nothing: BUILD_DIR (default: build-bench next to this directory) must already hold
# bench/bench-tracepoint.  -s runs the short smoke variant of both runs.
#
# ns/event: the median of several timed rounds of a native run (see bench-tracepoint.c); best:
# the fastest round (on a shared machine, the least disturbed one).  The
# native run is one `bench-tracepoint --tsv`: it starts itself again for each recorder case,
# with the case's environment (USERTP_EVENTS, ...) and a temporary USERTP_OUTPUT that it checks
# (every event fired was recorded) and deletes.
#
# instructions/event: each case of `bench-tracepoint --list` runs in a process of its own under
#	valgrind --tool=callgrind --smc-check=all
# with the environment --list gives for it (the recorder is configured when the process
# starts).  --smc-check=all because the library rewrites call sites at run time: valgrind must
# notice that code it already translated changed.  For each case the program itself zeroes
# callgrind's counters with a client request, runs N1 calls, dumps the counters
# (CALLGRIND_DUMP_STATS_AT "usertp-bench CASE EVENTS"), and does the same for N2 = 2 * N1, after
# a warm-up dumped separately (and ignored here) that takes every one-off cost.  This script
# reads the "totals:" line of each dump and prints
#	(Ir(N2) - Ir(N1)) / (EVENTS(N2) - EVENTS(N1))
# (EVENTS counts the calls of all threads: for the two-thread cases, instructions per event.)
# Taking the difference of two in-process runs makes the figure exact and robust: the fixed
# costs (calling the loop, the client requests) cancel, nothing depends on function names
# or inlining (as a callgrind_annotate per function would: the iterator is inlined into the
# call site, and the listener's path spans the program, libusertp, libc and ld.so), and the
# start-up and exit of the process (dynamic loading, constructors, the recorder writing its
# output) are never counted.  The benchmark also checks that every case reached what it should:
# without --smc-check=all valgrind goes on running the stale nop, the probe sees no call and the
# run fails rather than report the disabled cost as the enabled one; the recorder's output is
# checked here with `bench-tracepoint --case ID --check-output FILE --fired N`.
# Valgrind differs from the native run in two places the recorder uses: it hides the vDSO
# (clock_gettime() is a system call there: a few instructions counted instead of the vDSO's
# code, so the clock row says n/a) and it has no rseq.  On x86-64 the recorder cases run
# there with USERTP_RSEQ=1 USERTP_BENCH_RSEQ_STANDIN=1 (and USERTP_CONTROL=0, see
# bench-tracepoint.c): each recording thread writes a CPU
# number of its own into its rseq area, so that the recorder takes its rseq writer, as
# natively, and the benchmark fails the case if it did not (see bench-tracepoint.c).
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
if ! "$bench" $smoke --tsv >"$tmp/native.tsv"; then
	echo "run-bench.sh: the native run failed" >&2
	status=1
fi

# One line per case: id <TAB> instructions/event (or n/a).
: >"$tmp/instr.tsv"
if command -v valgrind >/dev/null 2>&1; then
	echo "callgrind runs: [case environment] valgrind --tool=callgrind --smc-check=all" \
		"$bench $smoke --case ID --callgrind" >&2
	"$bench" --list >"$tmp/cases"
	standin=
	[ "$(uname -m)" = x86_64 ] && standin="USERTP_RSEQ=1 USERTP_BENCH_RSEQ_STANDIN=1 USERTP_CONTROL=0"
	while IFS="$(printf '\t')" read -r id vars; do
		out=$tmp/rec-$id.txt
		# The case's VAR=value words, tab-separated (a value may hold spaces: a filter).
		ifs=$IFS
		IFS="$(printf '\t')"
		# shellcheck disable=SC2086 # split at tabs on purpose
		set -- $vars
		IFS=$ifs
		# Only the case's settings: the program refuses to run with any other.
		# shellcheck disable=SC2086 # $standin is a list of VAR=value words
		if ! env -u USERTP_EVENTS -u USERTP_CLOCK -u USERTP_BUFFER_KB -u USERTP_OVERWRITE \
			-u USERTP_OUTPUT -u USERTP_RSEQ -u USERTP_CONTROL "$@" ${vars:+USERTP_OUTPUT=$out $standin} \
			valgrind --tool=callgrind --smc-check=all \
			--callgrind-out-file="$tmp/cg-$id.out" \
			"$bench" $smoke --case "$id" --callgrind </dev/null >"$tmp/cg-$id.tsv" \
			2>"$tmp/cg-$id.log"; then
			echo "run-bench.sh: the callgrind run of $id failed:" >&2
			tail -n 20 "$tmp/cg-$id.log" >&2
			status=1
			continue
		fi
		if [ -n "$vars" ]; then
			fired=$(awk -F '\t' '$1 == "#fired" { print $2 }' "$tmp/cg-$id.tsv")
			if ! "$bench" --case "$id" --check-output "$out" --fired "${fired:-0}" \
				</dev/null >/dev/null; then
				echo "run-bench.sh: the recorder's output of the callgrind run of $id" \
					"is wrong" >&2
				status=1
				continue
			fi
			rm -f "$out"
		fi
		# (A case without dumps, as the clock: no instructions counted.)
		ls "$tmp/cg-$id.out".* >/dev/null 2>&1 || continue
		awk -v label=usertp-bench -f "$here/callgrind-per-event.awk" "$tmp/cg-$id.out".* \
			>>"$tmp/instr.tsv"
	done <"$tmp/cases"
else
	echo "run-bench.sh: valgrind not found, no instruction counts" >&2
fi

# The table, in the order of the native run, then its notes.
awk -F '\t' '
	FILENAME == ARGV[1] { ins[$1] = $2; next }
	$1 == "#note" { note[++m] = $2; next }
	/^#/ { next }
	{ what[++n] = $2; ns[n] = $4; best[n] = $5; id[n] = $1 }
	END {
		printf "%-44s | %8s | %8s | %18s\n", "what", "ns/event", "best", "instructions/event"
		printf "%-44s-+-%8s-+-%8s-+-%18s\n", "--------------------------------------------", \
			"--------", "--------", "------------------"
		for (i = 1; i <= n; i++)
			printf "%-44s | %8.2f | %8.2f | %18s\n", what[i], ns[i], best[i], \
				(id[i] in ins) ? ins[id[i]] : (id[i] ~ /\.aggregate$/ ? "-" : "n/a")
		for (i = 1; i <= m; i++)
			printf "%s\n", note[i]
	}' "$tmp/instr.tsv" "$tmp/native.tsv"
exit $status
