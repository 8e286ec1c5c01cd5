/* SPDX-License-Identifier: MIT */
/* The trace header of the install test's consumer program, found with TRACE_INCLUDE_PATH . */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM consumer

#if !defined(_CONSUMER_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _CONSUMER_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(consumer_hello,
	TP_PROTO(int n, const char *who),
	TP_ARGS(n, who),
	TP_STRUCT__entry(
		__field(int, n)
		__string(who, who)
	),
	TP_fast_assign(
		__entry->n = n;
		__assign_str(who);
	),
	TP_printk("n=%d who=%s", __entry->n, __get_str(who))
);

#endif /* _CONSUMER_TRACE_H */

#undef TRACE_INCLUDE_PATH
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE consumer-trace
#include <trace/define_trace.h>
