/* SPDX-License-Identifier: MIT */
/* rec-prog-trace.h - the events of rec-prog, the program the recorder tests trace. */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rec

#if !defined(_REC_PROG_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _REC_PROG_TRACE_H

#include <usertp/tracepoint.h>

/* The events a test counts: one per call, numbered by the thread that fires them. */
TRACE_EVENT(rec_event,
	TP_PROTO(int thread, int seq),
	TP_ARGS(thread, seq),
	TP_STRUCT__entry(
		__field(int, thread)
		__field(int, seq)
	),
	TP_fast_assign(
		__entry->thread = thread;
		__entry->seq = seq;
	),
	TP_printk("thread=%d seq=%d", __entry->thread, __entry->seq)
);

/* Background traffic: threads that fire while the process ends or forks. */
TRACE_EVENT(rec_spin,
	TP_PROTO(int thread, unsigned long seq),
	TP_ARGS(thread, seq),
	TP_STRUCT__entry(
		__field(int, thread)
		__field(unsigned long, seq)
	),
	TP_fast_assign(
		__entry->thread = thread;
		__entry->seq = seq;
	),
	TP_printk("thread=%d seq=%lu", __entry->thread, __entry->seq)
);

/* A named point of the program's life ("atexit", "handled", ...). */
TRACE_EVENT(rec_mark,
	TP_PROTO(const char *what),
	TP_ARGS(what),
	TP_STRUCT__entry(
		__string(what, what)
	),
	TP_fast_assign(
		__assign_str(what);
	),
	TP_printk("what=%s", __get_str(what))
);

#endif /* _REC_PROG_TRACE_H */

#undef TRACE_INCLUDE_PATH
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE rec-prog-trace
#include <trace/define_trace.h>
