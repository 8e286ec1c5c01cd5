/* SPDX-License-Identifier: MIT */
/* Tracepoints for the stress test: a raw DECLARE_TRACE one and a TRACE_EVENT. */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM stress

#if !defined(_STRESS_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _STRESS_TRACE_H

#include <linux/tracepoint.h>

DECLARE_TRACE(stress_raw,
	TP_PROTO(int thread, unsigned long seq),
	TP_ARGS(thread, seq));

TRACE_EVENT(stress_event,
	TP_PROTO(int thread, unsigned long seq, const char *tag),
	TP_ARGS(thread, seq, tag),
	TP_STRUCT__entry(
		__field(int, thread)
		__field(unsigned long, seq)
		__string(tag, tag)
	),
	TP_fast_assign(
		__entry->thread = thread;
		__entry->seq = seq;
		__assign_str(tag);
	),
	TP_printk("thread=%d seq=%lu tag=%s", __entry->thread, __entry->seq, __get_str(tag))
);

#endif

#undef TRACE_INCLUDE_PATH
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE stress-trace
#include <trace/define_trace.h>
