#!/bin/sh
# SPDX-License-Identifier: MIT
#
# bench/peers/run.sh - usertp and the tracers people use now, measured side by side in one run:
# the same event (bench-common.h's payload: int, long, unsigned int, 9-character string) fired
# by the same loop (peer-event.c, one program per tracer) through
#
#	usertp		the embedded recorder (USERTP_EVENTS): its default clock (mono
#			nanoseconds, the TSC counted where it is invariant), x86-tsc, and mono
#			read in each event (USERTP_TSC=0)
#	LTTng-UST	a session with per-CPU buffers and its consumer daemon writing them to disk;
#			a snapshot session (the embedded recorder's counterpart: buffers in
#			memory, nothing written)
#	USDT		a <sys/sdt.h> probe: a nop; enabled, a uprobe in a tracefs instance (root)
#	trace_marker	the event written as text to a tracefs instance's trace_marker (root)
#
# usage: bench/peers/run.sh [--smoke] [--rounds N] [--no-install] [--build DIR] [--results DIR]
#
# It installs what it needs from Debian packages (scripts/deps.sh peers, as root), builds a
# Release tree (default: build-bench next to bench/) with every program it runs, then
# measures in interleaved rounds (every case once per round, the order turned by one each
# round; 7 rounds unless --rounds),
# and prints, per case, the median ns/event and min..max over the rounds, the median of the
# per-round ratios to usertp's case of the same round, and instructions per event counted by
# callgrind (--smc-check=all: usertp rewrites its call sites) as the difference of two windows
# (callgrind-per-event.awk).  Two threads run pinned to two CPUs, each firing the same number
# of events: per thread, each thread's time over its events; aggregate, the wall time over all
# events.  The machine's load average is printed at the start and at the end.
#
# Each block of the report is printed as soon as it is measured, and kept with the raw figures
# it came from (results.tsv, instr.tsv, record.tsv, fixed.tsv, search-TRACER, read.tsv,
# start.tsv, ...) in the results
# directory (default: BUILD/peers-results/DATE), which stays: a run that fails late keeps what
# it measured before.
#
# Every usertp run is checked: its file's recorded + lost must equal the events fired.  A case
# whose tracer is missing (LTTng-UST not installed, not root for the uprobe and trace_marker)
# is skipped with a line saying why.  Whatever it starts it stops by pid (the LTTng session
# daemon, if none was running), and it removes its tracefs instance, uprobe event and files,
# also when interrupted.  --smoke: one round of tiny counts (ctest's bench-peers-smoke), to
# keep the harness building and running; its figures mean nothing.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
rounds=7 smoke= install=1 build=$top/build-bench keep=
while [ $# -gt 0 ]; do
	case $1 in
	--smoke) smoke=1 rounds=1 ;;
	--rounds)
		shift
		case ${1:-} in
		[1-9] | [1-9][0-9]) rounds=$1 ;;
		*) echo "run.sh: --rounds takes a number from 1 to 99" >&2; exit 2 ;;
		esac
		;;
	--no-install) install= ;;
	--build)
		shift
		build=${1:?run.sh: --build takes a directory}
		;;
	--results)
		shift
		keep=${1:?run.sh: --results takes a directory}
		;;
	-h | --help)
		sed -n '4,/^set -eu/s/^# \{0,1\}//p' "$0"
		exit 0
		;;
	*) echo "run.sh: unknown argument $1 (run.sh --help)" >&2; exit 2 ;;
	esac
	shift
done

# Events per thread and run: a run lasts a few tenths of a second natively.
if [ -n "$smoke" ]; then
	fast=20000 slow=2000 cg_n=2000
else
	# (under callgrind, enough events that usertp's buffers wrap many times in both windows:
	# reusing a page has its cost, which the steady state pays)
	fast=2000000 slow=200000 cg_n=200000
fi

[ -z "$install" ] || "$top/scripts/deps.sh" peers
if [ ! -f "$build/CMakeCache.txt" ]; then
	cmake -S "$top" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
fi
# Every program this script and bench-record.sh run (bench-peers-smoke builds them in an empty
# tree, so that one forgotten here fails there).
cmake --build "$build" --target usertp-cli peer-none peer-usertp bench-producer start-time stall-probe >/dev/null
for t in peer-usdt peer-marker peer-lttng peer-producer-lttng; do	# where their headers are installed
	cmake --build "$build" --target "$t" >/dev/null 2>&1 || true
done
bin=$build/bench
usertp=$build/bin/usertp

tmp=$(mktemp -d)
keep=${keep:-$build/peers-results/$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$keep"
report=$keep/report.txt
: >"$report"
# say: stdin to the terminal and to the report, at once
say() { tee -a "$report"; }
tfs=/sys/kernel/tracing
instance=$tfs/instances/usertp-peers-$$
uprobe=
. "$here/lttng.sh"
# The uprobe's group is not the programs' system (usertp_bench): usertp record would take a
# spec of a system the kernel has for the kernel's.
# (The instance first: a uprobe still enabled there cannot be removed.)
remove_kernel_setup() {
	[ ! -d "$instance" ] || rmdir "$instance" 2>/dev/null || true
	[ -z "$uprobe" ] || echo "-:usertp_peers_usdt/bench_event" >>"$tfs/uprobe_events" 2>/dev/null || true
	uprobe=
}
cleanup() {
	remove_kernel_setup
	lttng_daemon_stop
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

note() { echo "$*" >>"$keep/notes"; }
: >"$keep/notes"

# --- What can run here -------------------------------------------------------------------
have_lttng= have_kernel=
if [ -x "$bin/peer-lttng" ] && command -v lttng >/dev/null && command -v lttng-sessiond >/dev/null; then
	lttng_daemon_start
	have_lttng=1
else
	note "LTTng-UST: not installed (scripts/deps.sh peers), its cases skipped"
fi
if [ "$(id -u)" -eq 0 ] && [ -w "$tfs/uprobe_events" ] && mkdir "$instance" 2>/dev/null; then
	have_kernel=1
	if [ -x "$bin/peer-usdt" ]; then
		# The probe's place and arguments from its ELF note, as a uprobe event: the note gives
		# the address and "SIZE@OPERAND" per argument (-4@%eax: a signed 32-bit register).
		spec=$(readelf -nW "$bin/peer-usdt" | awk '
			/Name: bench_event/ { on = 1 }
			on && /Location:/ { loc = $2; sub(/,$/, "", loc) }
			on && /Arguments:/ { for (i = 2; i <= NF; i++) arg[i - 1] = $i; n = NF - 1; exit }
			END { printf "%s", loc; for (i = 1; i <= n; i++) printf " %s", arg[i]; print "" }')
		set -- $spec
		loc=$1
		shift
		# The file offset of that address: through the program header that loads it.
		off=
		addr=$((loc))
		while read -r kind o v _ s _; do
			[ "$kind" = LOAD ] || continue
			if [ "$addr" -ge $((v)) ] && [ "$addr" -lt $((v + s)) ]; then
				off=$(printf '0x%x' $((addr - v + o)))
				break
			fi
		done <<EOF_LOAD
$(readelf -lW "$bin/peer-usdt")
EOF_LOAD
		args= i=0
		for a in "$@"; do
			i=$((i + 1))
			size=${a%%@*} op=${a#*@}
			# %eax, %rax -> ax; %esi -> si; %r8d -> r8 (the names of pt_regs)
			reg=$(echo "$op" | sed 's/^%[re]\{0,1\}\([abcd]x\|[sd]i\|bp\|sp\)$/\1/; s/^%\(r[0-9]*\)[dwb]\{0,1\}$/\1/')
			case $size in
			-*) type=s$(( ${size#-} * 8 )) ;;
			*) type=u$(( size * 8 )) ;;
			esac
			case $i in
			4) args="$args s=+0(%$reg):string" ;;	# the string: what the pointer points to
			*) args="$args $(echo abc | cut -c$i)=%$reg:$type" ;;
			esac
		done
		if echo "p:usertp_peers_usdt/bench_event $bin/peer-usdt:$off$args" >>"$tfs/uprobe_events" 2>"$tmp/uprobe.err"; then
			uprobe=1
		else
			note "USDT: the uprobe 'p:usertp_peers_usdt/bench_event $bin/peer-usdt:$off$args' was refused: $(cat "$tmp/uprobe.err")"
		fi
	fi
else
	note "USDT through a uprobe, trace_marker: need root and a writable tracefs at $tfs, skipped"
fi

# --- One run -----------------------------------------------------------------------------
# run_case CASE THREADS: one native run, "CASE THREADS ns aggregate cpu" appended to the
# results; or with CG=1, one run under callgrind, "CASE instructions" to the counts.
results=$keep/results.tsv counts=$keep/instr.tsv
: >"$results"
: >"$counts"
run_case() {
	case=$1 threads=$2 n=$fast prog=$bin/peer-usertp events= clock= tscoff= lttng= marker=
	case $case in
	loop) prog=$bin/peer-none ;;
	usertp-disabled) ;;
	usertp-mono) events="usertp_bench:*" ;;
	usertp-tsc) events="usertp_bench:*" clock=x86-tsc ;;
	usertp-vdso) events="usertp_bench:*" tscoff=1 ;;
	usertp-filter) events="usertp_bench:* if a >= 0 && b > 0" ;;
	lttng-disabled) prog=$bin/peer-lttng ;;
	lttng-consumer) prog=$bin/peer-lttng lttng=consumer ;;
	lttng-snapshot) prog=$bin/peer-lttng lttng=snapshot ;;
	lttng-filter) prog=$bin/peer-lttng lttng=filter ;;
	usdt-disabled) prog=$bin/peer-usdt ;;
	usdt-uprobe) prog=$bin/peer-usdt n=$slow ;;
	trace-marker) prog=$bin/peer-marker n=$slow marker=$instance/trace_marker ;;
	esac
	[ -z "${CG:-}" ] || n=$cg_n
	out=$tmp/run.out dat=$tmp/u.dat
	session=usertp-peers-$$
	if [ -n "$lttng" ]; then
		rm -rf "$tmp/lttng"
		case $lttng in
		filter) lttng_session_start "$session" consumer "$tmp/lttng" 'a >= 0 && b > 0' ;;
		*) lttng_session_start "$session" "$lttng" "$tmp/lttng" ;;
		esac
	fi
	[ "$case" != usdt-uprobe ] || echo 1 >"$instance/events/usertp_peers_usdt/bench_event/enable"
	# Under callgrind, usertp's recording threads take its rseq writer through the stand-in
	# (bench-common.h), as natively; peer-event fails when they did not.
	cg= standin=
	[ -z "${CG:-}" ] || [ -z "$events" ] || standin="USERTP_RSEQ=1 USERTP_BENCH_RSEQ_STANDIN=1"
	[ -z "${CG:-}" ] || cg="valgrind --tool=callgrind --smc-check=all --callgrind-out-file=$tmp/cg.out"
	rm -f "$tmp"/cg.out* "$dat"
	set +e
	# shellcheck disable=SC2086 # $cg is a command's words
	env -u USERTP_EVENTS -u USERTP_CLOCK -u USERTP_TSC ${events:+"USERTP_EVENTS=$events"} \
		${clock:+"USERTP_CLOCK=$clock"} ${tscoff:+USERTP_TSC=0} \
		USERTP_OUTPUT="$dat" USERTP_CONTROL=0 $standin \
		$cg "$prog" --threads "$threads" ${marker:+--marker "$marker"} ${CG:+--callgrind} "$n" \
		>"$out" 2>"$tmp/run.err"
	status=$?
	set -e
	[ "$case" != usdt-uprobe ] || echo 0 >"$instance/events/usertp_peers_usdt/bench_event/enable"
	if [ -n "$lttng" ]; then
		discarded=$(lttng_session_end "$session")
		[ "$discarded" -eq 0 ] || echo "$case, $threads thread(s): $discarded" >>"$keep/lttng.lost"
	fi
	if [ $status -ne 0 ]; then
		echo "run.sh: $case ($threads thread) failed:" >&2
		cat "$tmp/run.err" >&2
		exit 1
	fi
	fired=$(sed -n 's/^events //p' "$out")
	if [ -n "$events" ]; then
		# recorded + lost = fired, every usertp run
		got=$("$usertp" report --stat "$dat" | awk '$1 == "all" { print $2 + $3 }')
		[ "$got" = "$fired" ] || { echo "run.sh: $case: $got recorded + lost, $fired fired" >&2; exit 1; }
	fi
	if [ -n "${CG:-}" ]; then
		awk -v label=peer-bench -f "$here/../callgrind-per-event.awk" "$tmp"/cg.out.* |
			sed "s/^[^\t]*/$case/" >>"$counts"
	else
		awk -v c="$case" -v t="$threads" -v r="$round" '
			{ v[$1] = $2 } END { print c, t, v["ns_per_event"], v["aggregate_ns"], v["cpu_ns_per_event"], r }' \
			"$out" >>"$results"
	fi
}

# --- The cases -----------------------------------------------------------------------------
cases="loop usertp-disabled usertp-mono usertp-tsc usertp-filter"
[ "$(uname -m)" = x86_64 ] || cases=$(echo "$cases" | sed 's/ usertp-tsc//')
# Where the TSC is invariant the default counts it: the vDSO's CLOCK_MONOTONIC beside it.
! grep -q '^flags.* constant_tsc.* nonstop_tsc' /proc/cpuinfo || cases="$cases usertp-vdso"
[ -z "$have_lttng" ] || cases="$cases lttng-disabled lttng-consumer lttng-snapshot lttng-filter"
[ ! -x "$bin/peer-usdt" ] || cases="$cases usdt-disabled"
[ -z "$uprobe" ] || cases="$cases usdt-uprobe"
[ -z "$have_kernel" ] || [ ! -x "$bin/peer-marker" ] || cases="$cases trace-marker"
two="usertp-mono usertp-tsc lttng-consumer lttng-snapshot usdt-uprobe trace-marker"

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u '+%Y-%m-%d %H:%M UTC')

# Instructions: callgrind, one thread (valgrind runs threads one at a time anyway).
if command -v valgrind >/dev/null; then
	for c in $cases; do
		case $c in usdt-uprobe | trace-marker) continue ;; esac	# the kernel's work: not seen
		CG=1 run_case "$c" 1
	done
else
	note "valgrind not installed: no instruction counts"
fi

# Time: interleaved rounds, the order turned by one each round.
nr=$(echo $cases | wc -w)
round=0
while [ $round -lt "$rounds" ]; do
	round=$((round + 1))
	order=$(echo $cases | tr ' ' '\n' | awk -v k=$(( (round - 1) % nr )) -v n="$nr" \
		'{ c[NR - 1] = $0 } END { for (i = 0; i < n; i++) print c[(i + k) % n] }')
	for c in $order; do
		run_case "$c" 1
		if echo "$two" | grep -qw -- "$c"; then
			run_case "$c" 2
		fi
	done
done
remove_kernel_setup	# done with them

# --- The table, printed now ------------------------------------------------------------------
{
cpu=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)
echo "usertp and its peers, $started, $rounds round(s); $(nproc) CPUs, $cpu; kernel $(uname -r)"
echo "versions: usertp $(git -C "$top" describe --always --dirty 2>/dev/null || echo '?')," \
	"LTTng-UST $(dpkg-query -W -f='${Version}' liblttng-ust-dev 2>/dev/null || echo -)," \
	"lttng-tools $(dpkg-query -W -f='${Version}' lttng-tools 2>/dev/null || echo -)"
echo "load average (1, 5, 15 min) at the start: $load_start"
echo
awk -v counts="$counts" '
	BEGIN {
		while ((getline line < counts) > 0) { split(line, f, "\t"); ins[f[1]] = f[2] }
		what["loop"] = "empty loop (payload only)"
		what["usertp-disabled"] = "usertp, disabled"
		what["lttng-disabled"] = "LTTng-UST, disabled"
		what["usdt-disabled"] = "USDT, disabled"
		what["usertp-mono"] = "usertp, default clock (mono ns)"
		what["usertp-tsc"] = "usertp, x86-tsc clock"
		what["usertp-vdso"] = "usertp, mono read per event (USERTP_TSC=0)"
		what["lttng-consumer"] = "LTTng-UST, per-CPU + consumer"
		what["lttng-snapshot"] = "LTTng-UST, snapshot"
		what["usdt-uprobe"] = "USDT through a uprobe"
		what["trace-marker"] = "write to trace_marker"
		what["usertp-filter"] = "usertp, two-term filter"
		what["lttng-filter"] = "LTTng-UST, two-term filter"
		base["loop"] = "usertp-disabled"; base["lttng-disabled"] = "usertp-disabled"
		base["usdt-disabled"] = "usertp-disabled"; base["usertp-disabled"] = "usertp-disabled"
		base["lttng-filter"] = "usertp-filter"; base["usertp-filter"] = "usertp-filter"
	}
	# case threads ns aggregate cpu round
	{ k = $1 " " $2; ns[k, $6] = $3; agg[k, $6] = $4; rounds[$6] = 1
	  if (!(k in seen)) { seen[k] = 1; order[++m] = k } }
	# median of s[1..cnt], and lo, hi: its ends
	function median(s, cnt,   i, j, t) {
		for (i = 2; i <= cnt; i++)
			for (j = i; j > 1 && s[j - 1] > s[j]; j--) { t = s[j]; s[j] = s[j - 1]; s[j - 1] = t }
		lo = s[1]; hi = s[cnt]
		return cnt % 2 ? s[(cnt + 1) / 2] : (s[cnt / 2] + s[cnt / 2 + 1]) / 2
	}
	# the median over the rounds of A[k, round] / B[b, round]
	function ratio(A, k, B, b,   r, cnt, x) {
		cnt = 0
		for (r in rounds)
			if ((k, r) in A && (b, r) in B && B[b, r] > 0)
				x[++cnt] = A[k, r] / B[b, r]
		return cnt ? median(x, cnt) : -1
	}
	function row(label, A, k, b, instr,   r, cnt, x, med, q) {
		cnt = 0
		for (r in rounds) if ((k, r) in A) x[++cnt] = A[k, r]
		med = median(x, cnt)
		range = sprintf("%.2f..%.2f", lo, hi)
		q = b == "" ? -1 : ratio(A, k, A, b)
		printf "%-42s %8.2f %17s %9s %12s\n", label, med, range, q < 0 ? "-" : sprintf("%.2f", q),
			instr
	}
	END {
		printf "%-42s %8s %17s %9s %12s\n", "", "ns/event", "min..max", "x usertp", "instr/event"
		for (i = 1; i <= m; i++) {
			split(order[i], kt, " "); c = kt[1]; t = kt[2]
			b = ((c in base) ? base[c] : "usertp-mono") " " t
			if (t == 1) {
				row(what[c], ns, order[i], b == order[i] ? "" : b, (c in ins) ? ins[c] : "-")
				continue
			}
			row(what[c] ", 2 threads: per thread", ns, order[i], b == order[i] ? "" : b, "-")
			row(what[c] ", 2 threads: aggregate", agg, order[i], b == order[i] ? "" : b, "-")
			q = ratio(ns, c " 1", agg, order[i])
			if (q >= 0)
				printf "%-42s two threads fire %.2fx the events of one\n", "", q
		}
	}' "$results"
echo
echo "x usertp: the median over the rounds of the case's time over usertp's of the same round"
echo "(disabled sites against usertp disabled, filters against usertp's filter, the rest against"
echo "usertp with its default clock and as many threads).  Instructions: callgrind, one thread."
[ ! -s "$keep/lttng.lost" ] || { echo "LTTng discarded events (its channels' count) in:"; cat "$keep/lttng.lost"; }
echo
} | say

# summary FILE [FORMAT]: "median (min..max)" of the numbers in FILE, one per line, each
# printed with FORMAT (default %.1f)
summary() {
	sort -g "$1" | awk -v f="${2:-%.1f}" '{ v[++n] = $1 } END {
		if (!n) { print "-"; exit }
		m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		printf f " (" f ".." f ")\n", m, v[1], v[n] }'
}

# --- Recording: the highest rate kept with nothing lost, then the recorder's cost -------------
# bench-record.sh (one home for the rule): two paced producer threads, files on local disk.
# Its search (rates doubled, then bisected to 5 %; a rate is kept when 3 runs in a row at it
# lose nothing) runs for both tracers at once, interleaved run by run, so that the machine's
# bad moments (a hypervisor's steal stops every CPU for tens of milliseconds at times on these
# VMs) fall on both alike; then, in interleaved rounds at one rate both keep (80 % of the lower
# of the two highest: off the edge, where a run may lose events), each recorder's CPU time per
# event and the bytes per event.
record_secs=10
[ -z "$smoke" ] || record_secs=0.3
# usertp's buffers as large as LTTng's by default (4 sub-buffers of 512 KiB per CPU): the
# same memory to ride out the moments the recorder is not running (usertp record's own
# default is the kernel's 1408 KiB).  (-b means nothing to the LTTng runs.)
record_kb=2048
tracers=usertp
[ -z "$have_lttng" ] || tracers="usertp lttng"
common_rate=
if [ -z "$smoke" ]; then
	sh "$here/../bench-record.sh" --tracer "$(echo $tracers | tr ' ' ,)" --repeat 3 -b "$record_kb" \
		-t "$record_secs" "$build" >"$keep/search"
fi
for t in $tracers; do
	best=100000
	[ -n "$smoke" ] ||
		best=$(sed -n "s/^highest rate with no event lost by $t: \([0-9]*\) .*/\1/p" "$keep/search")
	echo "$t ${best:-0}" >>"$keep/best"
	if [ -z "$common_rate" ] || [ "${best:-0}" -lt "$common_rate" ]; then common_rate=${best:-0}; fi
done
[ -n "$smoke" ] || common_rate=$((common_rate * 8 / 10))
# usertp-zstd: usertp record --compression zstd, which compresses at the end (its highest
# rate is usertp's: the same recording until then); measured in the rounds only.
rounds_tracers=$(echo "$tracers" | sed 's/^usertp/usertp usertp-zstd/')
# record_once TRACER RATE: one run of bench-record.sh; its line of figures in $tmp/once
# (tracer asked reached fired recorded lost MB B/event MB/s late_us steal_ms event_ns rec_ns
# verdict)
record_once() {
	sh "$here/../bench-record.sh" --once --tracer "$1" -b "$record_kb" -r "$2" \
		-t "$record_secs" "$build" >"$tmp/once.out" ||
		{ echo "run.sh: bench-record.sh $1 failed" >&2; exit 1; }
	awk '$2 ~ /^[0-9]+$/' "$tmp/once.out" >"$tmp/once"
}
if [ "${common_rate:-0}" -gt 0 ]; then
	round=0
	while [ $round -lt "$rounds" ]; do
		round=$((round + 1))
		for t in $rounds_tracers; do
			record_once "$t" "$common_rate"
			awk -v t="$t" '{ print t, $6, $8, $13 }' "$tmp/once" >>"$keep/record.tsv"
		done
	done
fi
# The same fixed rates for both tracers, in interleaved rounds: how often each loses events,
# and how many, under the same moments of the machine (the search above stops at the first
# run that loses, so one such moment decides it); and the producers alone (tracer none: the
# event off, nothing recording), how late the machine itself makes them.
fixed_rates="2000000 4000000 6000000 8000000" fixed_rounds=3
[ -z "$smoke" ] || fixed_rates=100000 fixed_rounds=1
for rate in $fixed_rates; do
	round=0
	while [ $round -lt "$fixed_rounds" ]; do
		round=$((round + 1))
		for t in $tracers none; do
			record_once "$t" "$rate"
			awk -v t="$t" '{ print t, $2, ($6 == "-" ? 0 : $6), ($14 == "sustained"), $11, $10 }' \
				"$tmp/once" >>"$keep/fixed.tsv"
		done
	done
done
{
	echo "Recording: two paced producer threads, ${record_secs} s per run, files on local disk,"
	echo "buffers of $record_kb KiB per CPU (LTTng's default: 4 x 512 KiB)"
	while read -r t best; do
		printf '  %-8s highest rate with no event lost in 3 runs in a row: %s events/s\n' "$t" "$best"
	done <"$keep/best"
	if [ -s "$keep/record.tsv" ]; then
		echo "  at $common_rate events/s, $rounds round(s):"
		for t in $rounds_tracers; do
			awk -v t="$t" '$1 == t { print $4 }' "$keep/record.tsv" >"$tmp/v1"
			awk -v t="$t" '$1 == t { print $3 }' "$keep/record.tsv" >"$tmp/v2"
			awk -v t="$t" '$1 == t { n += $2 } END { print n + 0 }' "$keep/record.tsv" >"$tmp/v3"
			printf '  %-11s %s CPU ns per event, %s bytes per event, %s events lost in all\n' "$t" \
				"$(summary "$tmp/v1")" "$(summary "$tmp/v2")" "$(cat "$tmp/v3")"
		done
		echo "  (usertp: usertp record's CPU time less the producer's; LTTng: its consumer daemons';"
		echo "   usertp-zstd: usertp record --compression zstd, trace.dat version 7)"
	fi
	if [ -s "$keep/fixed.tsv" ]; then
		echo "  at fixed rates, $fixed_rounds interleaved round(s): runs that lost nothing, events lost in"
		echo "  all, the producers' worst lateness (ms), and the hypervisor's steal in the runs that"
		echo "  lost (ms); none: the producers alone, their event off and nothing recording"
		for rate in $fixed_rates; do
			for t in $tracers none; do
				awk -v t="$t" -v r="$rate" '$1 == t && $2 == r {
					n++; ok += $4; if ($3 == "?") unknown++; else lost += $3
					if ($6 > late) late = $6
					if (!$4) steal = steal (steal == "" ? "" : " ") $5 }
					END { printf "  %10s/s %-8s %d of %d, %d lost%s, late %.1f%s\n", r, t, ok, n,
						lost, unknown ? " (and " unknown " run(s) that could not count)" : "",
						late / 1000, steal == "" ? "" : " (steal " steal ")" }' \
					"$keep/fixed.tsv"
			done
		done
	fi
	echo
} | say

# --- What the machine allows: the disk, the producers alone, what a buffer rides out ---------
# The lossless rate is set by the longest moment the recorder is away while the producers
# fire: a stall of the machine (the producers alone show how late it makes them) and the
# burst they fire after it, which must fit the buffer.  A buffer of B bytes per CPU holds
# B / (bytes per event) events, that is, at R events/s in all over 2 CPUs, a stall of
# 2 B / (R x bytes per event) seconds.  stall-probe shows how the machine stalls: one CPU at a
# time or all at once, and for how long.  A stall of one CPU stops its producer, which then
# fires what it owes at once into that CPU's buffer; a recorder stalled with it leaves the
# other CPU's buffer to fill meanwhile; either way one buffer must hold a stall's events.
# The disk's own rates bound the rest: dd, 1 GiB each way (16 MiB with --smoke), in the
# results directory.
dd_mib=1024
[ -z "$smoke" ] || dd_mib=16
dd_rate() {
	dd if=/dev/zero of="$keep/dd.tmp" bs=1M count=$dd_mib "$@" 2>&1 |
		awk '/copied/ { for (i = 1; i < NF; i++) if ($i == "copied,") s = $(i + 1); b = $1 }
			END { if (s > 0) printf "%.0f", b / s / 1e6; else print "?" }'
	rm -f "$keep/dd.tmp"
}
disk_direct=$(dd_rate oflag=direct)
disk_buffered=$(dd_rate conv=fdatasync)
# The machine's own stalls: a busy thread on each CPU, nothing else running (stall-probe.c).
stall_s=20
[ -z "$smoke" ] || stall_s=1
"$build/bench/stall-probe" $stall_s >"$keep/stalls.tsv"
{
	echo "What the machine allows (bounds of the lossless rate):"
	echo "  the disk: $disk_direct MB/s with O_DIRECT, $disk_buffered MB/s through the page cache" \
		"(dd of $dd_mib MiB, the page cache's with fdatasync)"
	awk -v s=$stall_s '
		NR == 1 { print "  the machine'"'"'s stalls (stall-probe: " s " s, a busy thread on each CPU, gaps over 0.5 ms):" }
		$1 == "cpu" { printf "    CPU %s: %d stalls, %.1f ms in all, the longest %.2f ms\n", $2, $4, $6, $8 }
		$1 == "all_at_once_ms" { printf "    every CPU stalled at once: %.2f ms; some stalled while others ran: %.2f ms\n", $2, $4 }' \
		"$keep/stalls.tsv"
	if [ -s "$keep/fixed.tsv" ] && [ -s "$keep/record.tsv" ]; then
		awk -v kb="$record_kb" -v tracers="$tracers" -v bestf="$keep/best" '
			FILENAME ~ /fixed.tsv$/ { if ($1 == "none" && $6 > late) late = $6; next }
			FILENAME ~ /record.tsv$/ { bytes[$1] += $3; runs[$1]++; cpu[$1] += $4; next }
			END {
				while ((getline line < bestf) > 0) { split(line, f, " "); best[f[1]] = f[2] }
				printf "  the producers alone (their event off, nothing recording) were late by up to %.1f ms\n", late / 1000
				n = split(tracers, t, " ")
				for (i = 1; i <= n; i++) {
					if (!runs[t[i]])
						continue
					b = bytes[t[i]] / runs[t[i]]
					held[t[i]] = kb * 1024 / b
					ns = cpu[t[i]] / runs[t[i]]
					printf "  %-8s %.1f bytes per event: %.0f events per CPU in %d KiB;", t[i], b, held[t[i]], kb
					if (best[t[i]] > 0)
						printf " at its highest rate (%d/s) a stall of %.1f ms;", best[t[i]], held[t[i]] / (best[t[i]] / 2) * 1000
					if (ns > 0)
						printf " its recorder could take %.1f M events/s per CPU", 1000 / ns
					printf "\n"
				}
				if (best["lttng"] > 0)
					for (i = 1; i <= n; i++)
						if (t[i] in held)
							printf "  at twice LTTng-UST'"'"'s highest rate (%d/s), %s rides out a stall of %.1f ms\n", 2 * best["lttng"], t[i], held[t[i]] / best["lttng"] * 1000
			}' "$keep/fixed.tsv" "$keep/record.tsv"
	fi
	echo
} | say

# --- Reading: events turned into text per second, and peak memory ---------------------------
# The same events (the paced producer, under the highest rate found) recorded by usertp and by
# LTTng; usertp report and trace-cmd report read the one trace.dat, babeltrace2 LTTng's trace.
read_events=2000000
[ -z "$smoke" ] || read_events=20000
sh "$here/../bench-record.sh" --once -r 400000 -t "$(awk -v n=$read_events 'BEGIN { print n / 400000 }')" \
	--keep "$tmp/read.dat" "$build" >/dev/null
readers="usertp trace-cmd"
if [ -n "$have_lttng" ]; then
	sh "$here/../bench-record.sh" --once --tracer lttng -r 400000 \
		-t "$(awk -v n=$read_events 'BEGIN { print n / 400000 }')" --keep "$tmp/read.lttng" \
		"$build" >/dev/null
	readers="$readers babeltrace2"
fi
round=0
while [ $round -lt "$rounds" ]; do
	round=$((round + 1))
	for r in $readers; do
		case $r in
		usertp) set -- "$usertp" report -i "$tmp/read.dat" ;;
		trace-cmd) set -- trace-cmd report -i "$tmp/read.dat" ;;
		babeltrace2) set -- babeltrace2 "$tmp/read.lttng" ;;
		esac
		/usr/bin/time -f '%e %M' -o "$tmp/rtime" "$@" >"$tmp/text" 2>/dev/null
		lines=$(grep -c 'bench_event' "$tmp/text" || true)
		echo "$r $lines $(cat "$tmp/rtime")" >>"$keep/read.tsv"
	done
done
{
	echo "Reading: the same $read_events events as text, $rounds round(s)"
	for r in $readers; do
		awk -v r="$r" '$1 == r && $3 > 0 { printf "%.0f\n", $2 / $3 }' "$keep/read.tsv" >"$tmp/v1"
		awk -v r="$r" '$1 == r { print $4 / 1024 }' "$keep/read.tsv" >"$tmp/v2"
		printf '  %-12s %s events/s, peak memory %s MiB\n' "$r" "$(summary "$tmp/v1" %.0f)" \
			"$(summary "$tmp/v2")"
	done
	echo
} | say

# --- An untraced program: threads, resident memory, start-up --------------------------------
starts=200
[ -z "$smoke" ] || starts=5
progs="none usertp"
[ -z "$have_lttng" ] || progs="$progs lttng"
# start-time.c: posix_spawn() to main() and to the end, per program the mean of $starts starts,
# the programs in turn in each round.
set --
for p in $progs; do
	set -- "$@" "$bin/peer-$p"
done
"$bin/start-time" "$starts" "$rounds" "$@" >"$keep/start.tsv"
{
	echo "An untraced program (nothing enabled; LTTng's session daemon running, no session);"
	echo "the mean of $starts starts (posix_spawn), to main() and to the end, and what each adds to"
	echo "the plain program's in the same round"
	for p in $progs; do
		"$bin/peer-$p" --status >"$tmp/status"
		printf '  %-8s %s threads, %s KiB resident\n' \
			"$([ "$p" = none ] && echo plain || echo "$p")" \
			"$(sed -n 's/^threads //p' "$tmp/status")" "$(sed -n 's/^rss_kb //p' "$tmp/status")"
		for col in 3:main 4:end; do
			awk -v p="$bin/peer-$p" -v c="${col%%:*}" '$1 == p { print $c }' "$keep/start.tsv" >"$tmp/v1"
			awk -v p="$bin/peer-$p" -v none="$bin/peer-none" -v c="${col%%:*}" \
				'$1 == none { plain[$2] = $c } $1 == p { mine[$2] = $c }
				END { for (r in mine) print mine[r] - plain[r] }' "$keep/start.tsv" >"$tmp/v2"
			printf '           to %-4s %s us' "${col#*:}" "$(summary "$tmp/v1")"
			[ "$p" = none ] && echo || echo ", $(summary "$tmp/v2") us more than plain"
		done
	done
	echo
} | say

load_end=$(cut -d' ' -f1-3 /proc/loadavg)
{
	echo "load average (1, 5, 15 min) at the end: $load_end"
	cat "$keep/notes"
	echo "(this report and its raw figures: $keep)"
} | say
