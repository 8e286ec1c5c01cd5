/* SPDX-License-Identifier: MIT */
/* rec-symbol-trace.h - an event that prints code addresses as the kernel's do (%pS, %ps). */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rec_symbol

#if !defined(_REC_SYMBOL_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _REC_SYMBOL_TRACE_H

#include <usertp/tracepoint.h>

/* A callback run, as the kernel's timer and workqueue events print theirs. */
TRACE_EVENT(callback_run,
	TP_PROTO(const void *fn, int arg, const char *who),
	TP_ARGS(fn, arg, who),
	TP_STRUCT__entry(
		__field(const void *, fn)
		__field(int, arg)
		__string(who, who)
	),
	TP_fast_assign(
		__entry->fn = fn;
		__entry->arg = arg;
		__assign_str(who);
	),
	TP_printk("fn=%pS name=%ps arg=%d who=%s width=%5d%%", __entry->fn, __entry->fn,
		  __entry->arg, __get_str(who), __entry->arg)
);

#endif

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE rec-symbol-trace
#include <trace/define_trace.h>
