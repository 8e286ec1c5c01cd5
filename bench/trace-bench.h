/* SPDX-License-Identifier: MIT */
/*
 * trace-bench.h - the one event the benchmark fires: the payload of the original report,
 * an int, a long, an unsigned int and a short (9-character) string.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM usertp_bench

#if !defined(_TRACE_BENCH_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_BENCH_H

#include <linux/tracepoint.h>

TRACE_EVENT(bench_event,
	TP_PROTO(int a, long b, unsigned int c, const char *s),
	TP_ARGS(a, b, c, s),
	TP_STRUCT__entry(
		__field(int, a)
		__field(long, b)
		__field(unsigned int, c)
		__string(s, s)
	),
	TP_fast_assign(
		__entry->a = a;
		__entry->b = b;
		__entry->c = c;
		__assign_str(s);
	),
	TP_printk("a=%d b=%ld c=%u s=%s", __entry->a, __entry->b, __entry->c, __get_str(s))
);

#endif /* _TRACE_BENCH_H */

#undef TRACE_INCLUDE_PATH
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE trace-bench
#include <trace/define_trace.h>
