/* SPDX-License-Identifier: MIT */
/*
 * dupsys:dup_ev, compiled with CREATE_TRACE_POINTS into several libraries of
 * test-duplicate-events (dup-lib.c), which therefore all define the same event.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM dupsys

#if !defined(_DUP_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _DUP_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(dup_ev,
	TP_PROTO(int lib, int seq, const char *who),
	TP_ARGS(lib, seq, who),
	TP_STRUCT__entry(
		__field(int, lib)
		__field(int, seq)
		__string(who, who)
	),
	TP_fast_assign(
		__entry->lib = lib;
		__entry->seq = seq;
		__assign_str(who);
	),
	TP_printk("lib=%d seq=%d who=%s", __entry->lib, __entry->seq, __get_str(who))
);

#endif /* _DUP_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE dup-trace
#include <trace/define_trace.h>
