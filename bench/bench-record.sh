#!/bin/sh
# SPDX-License-Identifier: MIT
#
# bench-record.sh - how many events per second `usertp record` keeps up with: the highest
# sustained rate at which no event is lost.  With --tracer lttng, the same for an LTTng-UST
# session with per-CPU buffers written by its consumer daemon (bench/peers/lttng.sh); with
# several tracers, their searches run interleaved, run by run, so that the machine's bad
# moments fall on all of them alike.
#
# usage: bench/bench-record.sh [options] [BUILD_DIR]
#
#	--tracer T[,T...]
#			usertp (default), usertp-zstd (usertp record --compression zstd: a
#			trace.dat version 7 with zstd, compressed when the recording ends),
#			lttng: peer-producer-lttng, the same producer
#			through LTTng-UST; recorded = fired - the events LTTng's channels
#			say they discarded; rec_ns is its consumer daemon's CPU time;
#			none: the producer alone, its event off (a nop) and nothing
#			recording: how late the machine itself makes the producers
#	-d DIR		where the trace.dat files (and usertp record's spool next to them) go;
#			default: a new directory under /var/tmp, or under BUILD_DIR when
#			/var/tmp is in memory (tmpfs), so that the data really go to disk
#	-b KIB		usertp record -b: buffer per CPU (default: usertp record's, 1408)
#	-s USECS	usertp record -s: how often the buffers are read (default: its, 10000)
#	-t SECONDS	length of each run (default 5)
#	-T THREADS	producer threads (default 2)
#	--stall MS	every producer thread sleeps MS milliseconds once a second, then fires
#			what it owes at once (bench-producer -s): the burst after a stall of
#			the machine, made on purpose, for the recorder to drain
#	-r RATE		the first rate tried, events per second in all (default 250000)
#	--repeat N	in the search, a rate counts as kept when N runs in a row at it lose
#			nothing and keep the rate (default 1; one lucky run is not a rate kept)
#	--once		one run at the first rate (-r) per tracer, no search: to compare
#			builds at one rate
#	--keep PATH	with --once and one tracer: the recording is moved to PATH (a trace.dat
#			file, or LTTng's trace directory), not deleted
#	--smoke		about a second per tracer: two short runs, one of them with a buffer
#			small enough to lose events, checked for fired = recorded + lost; no search
#
# BUILD_DIR (default: build-bench next to this directory) must hold bin/usertp and
# bench/bench-producer (bench/peer-producer-lttng for lttng); this script builds nothing.
#
# Each run is
#	usertp record -e usertp_bench:bench_event -o DIR/run.dat -- bench-producer RATE SECONDS
# bench-producer's threads fire the benchmark's event (an int, a long, an unsigned int and a
# 9-character string) at RATE events per second in all, evenly spaced (busy-waiting against
# CLOCK_MONOTONIC), from before their first event to the end: the recorder reads the buffers
# while they fill.  Per run one line: the tracer, the rate asked, the rate the producer
# reached, events fired (the producer's count), recorded (`usertp report --stat` on the file),
# lost (usertp record's summary), the size of the file, bytes per event fired and MB/s (file
# size / run time), how late the producer fired an event against its deadline at worst
# (late_us: a thread that was not running fires what it owes at once, a burst the buffers must
# hold), the time the hypervisor took from this machine's CPUs during the run (steal_ms,
# /proc/stat: every CPU stopped, recorder and programs alike), what one event cost its
# producer thread (event_ns: bench-producer's mean span of a call), and the recorder's own CPU
# time per event fired (rec_ns: the recording's CPU time, by /usr/bin/time, less the
# producer's, which busy-waits between events: it counts only its own).  Every run must
# satisfy fired = recorded + lost exactly, or the script says so and exits 1.
#
# Before each run the script waits for the machine to be quiet (settle(): 5 s in a row with
# no steal to speak of, 90 s at most), so that no run pays for the one before.
#
# The search doubles the rate while a run loses nothing, then bisects between the last rate
# that lost nothing and the first that did, down to 5 % apart.  A run counts as sustained
# when it lost no event and the producer kept the rate (reached at least 98 % of it: on a
# machine that the producers and the recorder share, the producers can fall behind first).
# The last lines give each tracer's highest sustained rate.  With several tracers, each
# round of the search runs every tracer still searching once, at its own next rate.
set -eu

smoke=
once=
repeat=1
keep=
tracers=usertp
dir=
kb=
interval=
seconds=5
threads=2
stall=0
first=250000
build=
while [ $# -gt 0 ]; do
	case $1 in
	--smoke) smoke=1 ;;
	--stall)
		case ${2:-} in
		[0-9] | [1-9][0-9] | [1-9][0-9][0-9]) stall=$2 ;;
		*) echo "bench-record.sh: --stall takes 0 to 999 (milliseconds)" >&2; exit 2 ;;
		esac
		shift
		;;
	--once) once=1 ;;
	--repeat)
		case ${2:-} in
		[1-9] | [1-9][0-9]) repeat=$2 ;;
		*) echo "bench-record.sh: --repeat takes 1 to 99" >&2; exit 2 ;;
		esac
		shift
		;;
	--keep)
		keep=${2:?bench-record.sh: --keep needs a path}
		shift
		;;
	--tracer)
		tracers=$(echo "${2:-}" | tr , ' ')
		for t in $tracers; do
			case $t in
			usertp | usertp-zstd | lttng | none) ;;
			*)
				echo "bench-record.sh: --tracer takes usertp, usertp-zstd, lttng or none" \
					"(several: T,T...), not $t" >&2
				exit 2
				;;
			esac
		done
		[ -n "$tracers" ] || { echo "bench-record.sh: --tracer needs a tracer" >&2; exit 2; }
		shift
		;;
	-d | -b | -s | -t | -T | -r)
		[ $# -ge 2 ] || { echo "bench-record.sh: $1 needs a value" >&2; exit 2; }
		case $1 in
		-d) dir=$2 ;;
		-b) kb=$2 ;;
		-s) interval=$2 ;;
		-t) seconds=$2 ;;
		-T) threads=$2 ;;
		-r) first=$2 ;;
		esac
		shift
		;;
	-h | --help)
		sed -n '4,/^set -eu/s/^# \{0,1\}//p' "$0" | sed '$d'
		exit 0
		;;
	-*)
		echo "bench-record.sh: unknown option $1" >&2
		exit 2
		;;
	*) build=$1 ;;
	esac
	shift
done

here=$(cd "$(dirname "$0")" && pwd)
[ -n "$build" ] || build=$here/../build-bench
usertp=$build/bin/usertp
case " $tracers " in *" lttng "*) with_lttng=1 ;; *) with_lttng= ;; esac
for f in "$usertp" "$build/bench/bench-producer" ${with_lttng:+"$build/bench/peer-producer-lttng"}; do
	[ -x "$f" ] || { echo "bench-record.sh: no $f (build it first)" >&2; exit 2; }
done
if [ -n "$keep" ] && [ "$(echo $tracers | wc -w)" -ne 1 ]; then
	echo "bench-record.sh: --keep takes one tracer" >&2
	exit 2
fi

# use_tracer T: the runs that follow are T's ($name; $tracer: usertp, lttng or none)
use_tracer() {
	name=$1 tracer=$1 usertp_opts=
	[ "$1" != usertp-zstd ] || tracer=usertp usertp_opts="--compression zstd"
	producer=$build/bench/bench-producer
	[ "$tracer" != lttng ] || producer=$build/bench/peer-producer-lttng
}

# fstype DIR: the file system type of DIR (stat -f's name for it)
fstype() {
	stat -f -c %T "$1" 2>/dev/null || echo unknown
}

in_memory() {
	case $(fstype "$1") in
	tmpfs | ramfs) return 0 ;;
	esac
	return 1
}

if [ -z "$dir" ]; then
	parent=/var/tmp
	in_memory "$parent" && parent=$build
	work=$(mktemp -d "$parent/bench-record.XXXXXX")
else
	work=$(mktemp -d "$dir/bench-record.XXXXXX")
fi
in_memory "$work" && [ -z "$smoke" ] &&
	echo "bench-record.sh: warning: $work is in memory ($(fstype "$work")), not on disk" >&2
. "$here/peers/lttng.sh"
trap 'lttng_daemon_stop; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM HUP PIPE
[ -z "$with_lttng" ] || lttng_daemon_start

# The producer must reach the recorder: no setting of the caller's may stand in the way.
unset USERTP_EVENTS USERTP_CONTROL USERTP_SESSION

status=0
best=0
best_mbs=0

# record_usertp RATE SECONDS [usertp record options...]: the producer under usertp record
record_usertp() {
	rate=$1 secs=$2
	shift 2
	timeout $((${secs%.*} * 4 + 60)) /usr/bin/time -f "%U %S" -o "$work/time" \
		"$usertp" record -e usertp_bench:bench_event $usertp_opts \
		-o "$work/run.dat" "$@" -- "$producer" -t "$threads" -s "$stall" "$rate" "$secs" \
		>"$work/out" 2>"$work/err"
}

# record_lttng RATE SECONDS: the producer through LTTng-UST into a session; sets $lost (the
# events LTTng discarded) and $consumer_s (its consumer daemons' CPU time meanwhile)
record_lttng() {
	lttng_session_start "bench-record-$$" consumer "$work/lttng" 2>"$work/err" || return 1
	before=$(lttng_consumer_cpu)
	timeout $((${2%.*} * 4 + 60)) "$producer" -t "$threads" -s "$stall" "$1" "$2" >"$work/out" 2>>"$work/err" ||
		{ lttng_session_end "bench-record-$$" >/dev/null; return 1; }
	lost=$(lttng_session_end "bench-record-$$")
	consumer_s=$(awk -v a="$before" -v b="$(lttng_consumer_cpu)" 'BEGIN { print b - a }')
}

# record_none RATE SECONDS: the producer alone, its event off
record_none() {
	timeout $((${2%.*} * 4 + 60)) "$producer" -t "$threads" -s "$stall" "$1" "$2" >"$work/out" 2>"$work/err"
}

# steal_ticks: the time the hypervisor has taken from this machine's CPUs since it booted, in
# clock ticks (/proc/stat's steal, all CPUs)
steal_ticks() {
	awk '$1 == "cpu" { print $9 + 0 }' /proc/stat
}
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)

# run RATE SECONDS [usertp record options...]: one recording; sets $fired $recorded $lost
# $reached $mbs and $ok (1: lost nothing at the rate asked)
# settle: before a run, wait until the machine is quiet: 5 seconds in a row in which every
# CPU, kept busy, loses at most 10 ms to the hypervisor (steal counts only while a CPU wants
# to run: an idle wait shows nothing); 90 s at most.  Deleting the gigabytes a run wrote
# makes the host work for seconds after it (the file system is mounted with discard: a
# virtual disk's freed blocks are given back), and the hypervisor then takes this machine's
# CPUs for tens of milliseconds at a time, on and off, for about 10 s: the next run, whatever
# its tracer, paid for the one before (1 s of steal in 10 s, the producers 40 ms late, where
# they are 9 ms late with the file kept, or 30 s later).
settle() {
	[ -z "$smoke" ] || return 0
	sync
	quiet=0 waited=0
	while [ "$quiet" -lt 5 ] && [ "$waited" -lt 90 ]; do
		s0=$(steal_ticks)
		for c in $(seq "$(nproc)"); do
			timeout 1 sh -c 'while :; do :; done' &
		done
		wait
		waited=$((waited + 1))
		if [ $((($(steal_ticks) - s0) * 1000 / hz)) -gt 10 ]; then quiet=0; else quiet=$((quiet + 1)); fi
	done
}

run() {
	rate=$1 secs=$2
	shift 2
	rm -rf "$work/run.dat" "$work/lttng"
	settle
	steal_before=$(steal_ticks)
	if [ "$tracer" = lttng ]; then
		record_lttng "$rate" "$secs"
	elif [ "$tracer" = none ]; then
		record_none "$rate" "$secs"
	else
		record_usertp "$rate" "$secs" "$@"
	fi || {
		echo "bench-record.sh: the recording failed at $rate events/s:" >&2
		cat "$work/err" >&2
		status=1
		ok=0
		return
	}
	fired=$(sed -n 's/^fired \([0-9]*\).*/\1/p' "$work/out")
	reached=$(sed -n 's/.*	rate \([0-9]*\).*/\1/p' "$work/out")
	late=$(sed -n 's/.*	late_us \([0-9]*\).*/\1/p' "$work/out")
	steal_ms=$((($(steal_ticks) - steal_before) * 1000 / hz))
	took=$(sed -n 's/.*	seconds \([0-9.]*\).*/\1/p' "$work/out")
	event_ns=$(sed -n 's/.*	event_ns \([0-9.]*\).*/\1/p' "$work/out")
	if [ "$tracer" = lttng ]; then
		rec_ns=$(awk -v c="$consumer_s" -v f="${fired:-0}" \
			'BEGIN { if (f > 0) printf "%.1f", c * 1e9 / f; else print "?" }')
		case $lost in
		*[!0-9]* | "") recorded=? ;;	# LTTng could not count what it discarded
		*) recorded=$((fired - lost)) ;;
		esac
		# Its count checked once, by reading the trace (short runs only: babeltrace2 is slow)
		if [ -n "$smoke" ] && [ -n "$fired" ]; then
			recorded=$(babeltrace2 "$work/lttng" 2>/dev/null | grep -c ' usertp_bench:bench_event: ')
		fi
		size=$(du -sb "$work/lttng" | cut -f1)
	elif [ "$tracer" = none ]; then
		recorded=$fired lost=0 size=0 rec_ns=-
	else
		producer_cpu=$(sed -n 's/.*	cpu_s \([0-9.]*\).*/\1/p' "$work/out")
		# The recorder's own CPU time: the recording's (its waited-for child included)
		# less the producer's, per event fired.
		rec_ns=$(awk -v p="${producer_cpu:-0}" -v f="${fired:-0}" \
			'{ if (f > 0) printf "%.1f", ($1 + $2 - p) * 1e9 / f; else print "?" }' "$work/time")
		lost=$(sed -n 's/^usertp record: .* events, \([0-9]*\) lost,.*/\1/p' "$work/err")
		recorded=$("$usertp" report --stat "$work/run.dat" | awk '$1 == "all" { print $2 }')
		size=$(wc -c <"$work/run.dat")
	fi
	if [ -n "$keep" ] && [ "$tracer" != none ]; then
		if [ "$tracer" = lttng ]; then mv "$work/lttng" "$keep"; else mv "$work/run.dat" "$keep"; fi
	fi
	rm -rf "$work/run.dat" "$work/lttng"
	mbs=$(awk -v s="$size" -v t="$took" 'BEGIN { printf "%.1f", s / 1e6 / t }')
	if [ "$recorded" = "?" ]; then
		ok=0	# LTTng's losses unknown: not a run that lost nothing
	elif [ -z "$fired" ] || [ -z "$lost" ] || [ -z "$recorded" ] ||
		[ "$fired" -ne $((recorded + lost)) ]; then
		echo "bench-record.sh: at $rate events/s: fired ${fired:-?}," \
			"recorded ${recorded:-?} + lost ${lost:-?} do not add up" >&2
		cat "$work/err" >&2
		status=1
		ok=0
	else
		ok=$(awk -v l="$lost" -v r="$reached" -v t="$rate" \
			'BEGIN { print (l == 0 && r >= 0.98 * t) ? 1 : 0 }')
	fi
	if [ "$tracer" = none ]; then
		mb=- bpe=- mbs=- recorded=- lost=-
	else
		mb=$(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1e6 }')
		bpe=$(awk -v s="$size" -v f="${fired:-0}" 'BEGIN { if (f > 0) printf "%.1f", s / f; else print "?" }')
	fi
	printf '%-11s %10s %10s %11s %11s %10s %8s %7s %7s %8s %8s %8s %8s  %s\n' "$name" "$rate" \
		"$reached" "$fired" "$recorded" "$lost" "$mb" "$bpe" "$mbs" "$late" "$steal_ms" \
		"${event_ns:-?}" "${rec_ns:-?}" "$([ "$ok" = 1 ] && echo sustained || echo no)"
}

header() {
	printf '%-11s %10s %10s %11s %11s %10s %8s %7s %7s %8s %8s %8s %8s  %s\n' "tracer" "asked/s" \
		"reached/s" "fired" "recorded" "lost" "MB" "B/event" "MB/s" "late_us" "steal_ms" \
		"event_ns" "rec_ns" "verdict"
}

if [ -n "$smoke" ]; then
	# Counts only: whatever the machine does, every event fired is recorded or counted lost.
	header
	for t in $tracers; do
		use_tracer "$t"
		run 100000 0.3
		# 4 KiB per CPU read every 0.2 s: most events are dropped.
		run 400000 0.3 -b 4 -s 200000
		[ "$tracer" != usertp ] || [ "${lost:-0}" -gt 0 ] ||
			echo "bench-record.sh: (the small buffer lost nothing this time)" >&2
	done
	exit $status
fi

for t in $tracers; do
	use_tracer "$t"
	case $tracer in
	lttng)
		echo "# lttng: an LTTng session (per-CPU buffers, its consumer writing $work/lttng) with" \
			"peer-producer-lttng -t $threads -s $stall RATE $seconds"
		;;
	none) echo "# none: bench-producer -t $threads -s $stall RATE $seconds, its event off" ;;
	*)
		echo "# $name: usertp record -e usertp_bench:bench_event $usertp_opts${kb:+ -b $kb}" \
			"${interval:+-s $interval }-o $work/run.dat -- bench-producer -t $threads -s $stall" \
			"RATE $seconds"
		;;
	esac
done
device=$(df -P "$work" | awk 'NR == 2 { print $1 }')
echo "# output on $(fstype "$work") ($device), $(nproc) CPUs," \
	"load average $(cut -d' ' -f1-3 /proc/loadavg)"
set --
[ -z "$kb" ] || set -- "$@" -b "$kb"
[ -z "$interval" ] || set -- "$@" -s "$interval"
header
if [ -n "$once" ]; then
	for t in $tracers; do
		use_tracer "$t"
		run "$first" "$seconds" "$@"
	done
	exit $status
fi

# Each tracer's search, by its number i: rate_i (the next to run), lo_i (the highest kept),
# hi_i (the lowest that lost; 0: none yet, still doubling), streak_i (runs in a row that lost
# nothing at rate_i), mbs_i (MB/s at lo_i), done_i.
i=0
for t in $tracers; do
	i=$((i + 1))
	eval "rate_$i=$first lo_$i=0 hi_$i=0 streak_$i=0 mbs_$i=0 done_$i=0"
done
# Up by doubling until a run fails (or the rates get absurd), then bisect between the last
# rate kept and the first that lost, down to 5 % apart; one run per tracer and round.
searching=1
while [ "$searching" = 1 ] && [ "$status" -eq 0 ]; do
	searching=0 i=0
	for t in $tracers; do
		i=$((i + 1))
		eval "d=\$done_$i r=\$rate_$i"
		[ "$d" = 0 ] || continue
		searching=1
		use_tracer "$t"
		run "$r" "$seconds" "$@"
		[ "$status" -eq 0 ] || break
		if [ "$ok" = 1 ]; then
			eval "s=\$((streak_$i + 1))"
			eval "streak_$i=$s"
			[ "$s" -ge "$repeat" ] || continue
			eval "lo_$i=$r mbs_$i=$mbs"
		else
			eval "hi_$i=$r"
		fi
		eval "streak_$i=0 lo=\$lo_$i hi=\$hi_$i"
		if [ "$hi" = 0 ]; then
			next=$((r * 2))
			[ "$next" -le 256000000 ] || eval "done_$i=1"
		elif [ $((hi - lo)) -gt $((hi / 20)) ]; then
			next=$(((lo + hi) / 2))
		else
			eval "done_$i=1"
		fi
		eval "rate_$i=\${next:-0}"
	done
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
i=0
for t in $tracers; do
	i=$((i + 1))
	eval "lo=\$lo_$i mbs=\$mbs_$i"
	if [ "$lo" -gt 0 ]; then
		echo "highest rate with no event lost by $t: $lo events/s ($mbs MB/s written;" \
			"$repeat run(s) in a row at it)"
	else
		echo "no rate tried lost nothing for $t"
	fi
done
exit $status
