/* SPDX-License-Identifier: MIT */
/* rec-mod-trace.h - the event of rec-mod, a module rec-prog opens and closes. */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM recmod

#if !defined(_REC_MOD_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _REC_MOD_TRACE_H

#include <usertp/tracepoint.h>

TRACE_EVENT(mod_event,
	TP_PROTO(int n),
	TP_ARGS(n),
	TP_STRUCT__entry(
		__field(int, n)
	),
	TP_fast_assign(
		__entry->n = n;
	),
	TP_printk("n=%d (printed by rec-mod)", __entry->n)
);

#endif /* _REC_MOD_TRACE_H */

#undef TRACE_INCLUDE_PATH
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE rec-mod-trace
#include <trace/define_trace.h>
