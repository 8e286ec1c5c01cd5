/* SPDX-License-Identifier: MIT */
/*
 * The trace header of the module that test-dlopen loads and unloads 1000 times: a plain
 * event, a class with two events, and a __string field.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM dlmod

#if !defined(_DLMOD_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _DLMOD_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(dlmod_value,
	TP_PROTO(int iter, unsigned long val),
	TP_ARGS(iter, val),
	TP_STRUCT__entry(
		__field(int, iter)
		__field(unsigned long, val)
	),
	TP_fast_assign(
		__entry->iter = iter;
		__entry->val = val;
	),
	TP_printk("iter=%d val=0x%lx", __entry->iter, __entry->val)
);

DECLARE_EVENT_CLASS(dlmod_class,
	TP_PROTO(int iter, const char *name),
	TP_ARGS(iter, name),
	TP_STRUCT__entry(
		__field(int, iter)
		__string(name, name)
	),
	TP_fast_assign(
		__entry->iter = iter;
		__assign_str(name);
	),
	TP_printk("iter=%d name=%s", __entry->iter, __get_str(name))
);

DEFINE_EVENT(dlmod_class, dlmod_name,
	TP_PROTO(int iter, const char *name),
	TP_ARGS(iter, name));

DEFINE_EVENT(dlmod_class, dlmod_done,
	TP_PROTO(int iter, const char *name),
	TP_ARGS(iter, name));

#endif /* _DLMOD_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE dlmod-trace
#include <trace/define_trace.h>
