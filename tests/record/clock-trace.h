/* SPDX-License-Identifier: MIT */
/* clock-trace.h - clock-prog's event: CLOCK_MONOTONIC as the program read it just before. */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM clock

#if !defined(CLOCK_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define CLOCK_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(clock_read,
	TP_PROTO(unsigned long long mono),
	TP_ARGS(mono),
	TP_STRUCT__entry(__field(unsigned long long, mono)),
	TP_fast_assign(__entry->mono = mono;),
	TP_printk("mono=%llu", __entry->mono)
);

#endif

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE clock-trace
#include <trace/define_trace.h>
