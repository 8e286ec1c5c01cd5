/* SPDX-License-Identifier: MIT */
/* cons-prog-trace.h - the events of cons-prog, the program the consumer API tests trace. */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM cons

#if !defined(_CONS_PROG_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _CONS_PROG_TRACE_H

#include <usertp/tracepoint.h>

/* Two events of one layout, so that a session can record one and not the other. */
DECLARE_EVENT_CLASS(cons_class,
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
DEFINE_EVENT(cons_class, cons_a, TP_PROTO(int seq), TP_ARGS(seq));
DEFINE_EVENT(cons_class, cons_b, TP_PROTO(int seq), TP_ARGS(seq));
/*
 * Never fired: a third event of the system, of another layout (test-conformance: its enable
 * file reads X with two on; a system filter on seq does not compile for it).
 */
TRACE_EVENT(cons_c,
	TP_PROTO(int val),
	TP_ARGS(val),
	TP_STRUCT__entry(
		__field(int, val)
	),
	TP_fast_assign(
		__entry->val = val;
	),
	TP_printk("val=%d", __entry->val)
);

#endif

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE cons-prog-trace
#include <trace/define_trace.h>
