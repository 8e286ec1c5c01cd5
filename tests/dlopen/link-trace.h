/* SPDX-License-Identifier: MIT */
/* The trace header of link-test.sh: defined in one .c file of a program, used in another. */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM linktest

#if !defined(_LINK_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _LINK_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(link_ev,
	TP_PROTO(int a, const char *s),
	TP_ARGS(a, s),
	TP_STRUCT__entry(
		__field(int, a)
		__string(s, s)
	),
	TP_fast_assign(
		__entry->a = a;
		__assign_str(s);
	),
	TP_printk("a=%d s=%s", __entry->a, __get_str(s))
);

#endif /* _LINK_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE link-trace
#include <trace/define_trace.h>
