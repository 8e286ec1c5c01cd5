/* SPDX-License-Identifier: MIT */
/*
 * A trace header in a directory that is on no include path, named by a path relative to
 * <trace/define_trace.h> (as the kernel's drivers do with TRACE_INCLUDE_PATH ../../drivers/x),
 * whose file name (TRACE_INCLUDE_FILE) differs from its system, and whose system has a dash,
 * so it needs TRACE_SYSTEM_VAR for the identifiers TRACE_DEFINE_ENUM generates.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM ctest-outside
#undef TRACE_SYSTEM_VAR
#define TRACE_SYSTEM_VAR ctest_outside

#if !defined(_CTEST_OUTSIDE_EVENTS_H) || defined(TRACE_HEADER_MULTI_READ)
#define _CTEST_OUTSIDE_EVENTS_H

#include <linux/tracepoint.h>

#ifndef CTEST_OUTSIDE_HELPERS
#define CTEST_OUTSIDE_HELPERS
enum ctest_color { CTEST_RED = 1, CTEST_GREEN = 2, CTEST_BLUE = 40 };
#endif

TRACE_DEFINE_ENUM(CTEST_RED);
TRACE_DEFINE_ENUM(CTEST_GREEN);
TRACE_DEFINE_ENUM(CTEST_BLUE);

DECLARE_EVENT_CLASS(ctest_outside_class,
	TP_PROTO(int color, const char *what),
	TP_ARGS(color, what),
	TP_STRUCT__entry(
		__field(int, color)
		__rel_string(what, what)
	),
	TP_fast_assign(
		__entry->color = color;
		__assign_rel_str(what);
	),
	TP_printk("color=%s what=%s",
		  __print_symbolic(__entry->color, { CTEST_RED, "red" }, { CTEST_GREEN, "green" },
				   { CTEST_BLUE, "blue" }),
		  __get_rel_str(what))
);

DEFINE_EVENT(ctest_outside_class, ctest_outside_paint,
	TP_PROTO(int color, const char *what),
	TP_ARGS(color, what));

DEFINE_EVENT_PRINT(ctest_outside_class, ctest_outside_erase,
	TP_PROTO(int color, const char *what),
	TP_ARGS(color, what),
	TP_printk("erased %s", __get_rel_str(what)));

TRACE_EVENT(ctest_outside_count,
	TP_PROTO(unsigned int n),
	TP_ARGS(n),
	TP_STRUCT__entry(__field(unsigned int, n)),
	TP_fast_assign(__entry->n = n;),
	TP_printk("n=%u", __entry->n)
);

#endif /* _CTEST_OUTSIDE_EVENTS_H */

/* Relative to the directory of <trace/define_trace.h>: include/kernel/trace in the source tree. */
#undef TRACE_INCLUDE_PATH
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_PATH ../../../tests/compile/outside
#define TRACE_INCLUDE_FILE outside-events
#include <trace/define_trace.h>
