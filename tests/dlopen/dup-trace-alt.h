/* SPDX-License-Identifier: MIT */
/*
 * A different definition of dupsys:dup_ev (other fields, other print format), and one more
 * event of the same system that nobody else defines.  Compiled into dup-alt.c.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM dupsys

#if !defined(_DUP_TRACE_ALT_H) || defined(TRACE_HEADER_MULTI_READ)
#define _DUP_TRACE_ALT_H

#include <linux/tracepoint.h>

TRACE_EVENT(dup_ev,
	TP_PROTO(long value),
	TP_ARGS(value),
	TP_STRUCT__entry(
		__field(long, value)
	),
	TP_fast_assign(
		__entry->value = value;
	),
	TP_printk("value=%ld", __entry->value)
);

TRACE_EVENT(dup_alt_only,
	TP_PROTO(int seq),
	TP_ARGS(seq),
	TP_STRUCT__entry(
		__field(int, seq)
	),
	TP_fast_assign(
		__entry->seq = seq;
	),
	TP_printk("seq=%d", __entry->seq)
);

#endif /* _DUP_TRACE_ALT_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE dup-trace-alt
#include <trace/define_trace.h>
