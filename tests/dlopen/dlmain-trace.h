/* SPDX-License-Identifier: MIT */
/* The main program's own tracepoint in test-dlopen, hit by a second thread all the time. */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM dlmain

#if !defined(_DLMAIN_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _DLMAIN_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(dlmain_tick,
	TP_PROTO(unsigned long n, unsigned long check),
	TP_ARGS(n, check),
	TP_STRUCT__entry(
		__field(unsigned long, n)
		__field(unsigned long, check)
	),
	TP_fast_assign(
		__entry->n = n;
		__entry->check = check;
	),
	TP_printk("n=%lu check=%lu", __entry->n, __entry->check)
);

#endif /* _DLMAIN_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE dlmain-trace
#include <trace/define_trace.h>
