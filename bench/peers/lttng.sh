# SPDX-License-Identifier: MIT
# lttng.sh - LTTng sessions for the benchmarks (sourced by run.sh and bench-record.sh): one
# home for how usertp's peer is set up, so that every figure measures the same LTTng.
#
#   lttng_daemon_start		a session daemon (no kernel tracer) if none answers; the one
#				it started is in $lttng_daemon, for lttng_daemon_stop
#   lttng_session_start NAME MODE DIR [FILTER]
#				MODE consumer: per-CPU buffers (LTTng's default, per user) that
#				its consumer daemon writes to DIR; snapshot: buffers in memory,
#				nothing written (the embedded recorder's counterpart); FILTER: a
#				filter expression of LTTng's (--filter)
#   lttng_session_end NAME	stops it (waiting for the consumer to have written
#				everything), prints the events its channels discarded ("?" when
#				LTTng could not count them), destroys it
#   lttng_consumer_cpu		the CPU time of the consumer daemons so far, in seconds
#
# The channel keeps LTTng's defaults (discard mode; sub-buffers as lttng-tools sizes them).

lttng_daemon=
lttng_daemon_start() {
	lttng list >/dev/null 2>&1 && return 0
	lttng-sessiond --no-kernel --quiet &
	lttng_daemon=$!
	i=0
	until lttng list >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 100 ] || { echo "lttng-sessiond did not start" >&2; return 1; }
		sleep 0.1
	done
}

lttng_daemon_stop() {
	[ -n "$lttng_daemon" ] || return 0
	kill -TERM "$lttng_daemon" 2>/dev/null || true
	wait "$lttng_daemon" 2>/dev/null || true
	lttng_daemon=
}

lttng_session_start() {
	if [ "$2" = snapshot ]; then
		lttng create "$1" --snapshot --output="$3" >/dev/null
	else
		lttng create "$1" --output="$3" >/dev/null
	fi
	lttng enable-channel -u -s "$1" c0 >/dev/null
	lttng enable-event -u -s "$1" -c c0 usertp_bench:bench_event ${4:+--filter "$4"} >/dev/null
	lttng start "$1" >/dev/null
}

lttng_session_end() {
	lttng stop "$1" >/dev/null 2>&1 || true
	# (lttng-tools prints 2^64 - 1 where it could not get the count: "?")
	lttng list "$1" 2>/dev/null | awk '/Discarded events:/ { if (length($3) > 15) unknown = 1; n += $3 }
		END { if (unknown) print "?"; else printf "%d\n", n }'
	lttng destroy "$1" >/dev/null 2>&1 || true
}

lttng_consumer_cpu() {
	ticks=$(getconf CLK_TCK)
	for p in $(pgrep -x lttng-consumerd); do
		cat "/proc/$p/stat" 2>/dev/null
	done | awk -v hz="$ticks" '{ sub(/.*\) /, ""); t += $12 + $13 } END { printf "%.3f\n", t / hz }'
}
