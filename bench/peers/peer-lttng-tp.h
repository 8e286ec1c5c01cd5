/* SPDX-License-Identifier: MIT */
/*
 * peer-lttng-tp.h - the benchmark's event for LTTng-UST, with the fields of trace-bench.h's:
 * provider usertp_bench, event bench_event (int a, long b, unsigned int c, string s).
 */
#undef TRACEPOINT_PROVIDER
#define TRACEPOINT_PROVIDER usertp_bench

#undef TRACEPOINT_INCLUDE
#define TRACEPOINT_INCLUDE "./peer-lttng-tp.h"

#if !defined(PEER_LTTNG_TP_H) || defined(TRACEPOINT_HEADER_MULTI_READ)
#define PEER_LTTNG_TP_H

#include <lttng/tracepoint.h>

TRACEPOINT_EVENT(usertp_bench, bench_event,
	TP_ARGS(int, a, long, b, unsigned int, c, const char *, s),
	TP_FIELDS(
		ctf_integer(int, a, a)
		ctf_integer(long, b, b)
		ctf_integer(unsigned int, c, c)
		ctf_string(s, s)
	)
)

#endif /* PEER_LTTNG_TP_H */

#include <lttng/tracepoint-event.h>
