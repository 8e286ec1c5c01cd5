/* SPDX-License-Identifier: MIT */
/*
 * <trace/define_trace.h> - included at the end of every trace header, outside its guard.
 *
 * Without CREATE_TRACE_POINTS it does nothing: the header only declared trace_<name>() and
 * friends.  In the one translation unit that defines CREATE_TRACE_POINTS it re-reads the trace
 * header several times (TRACE_HEADER_MULTI_READ lets it through its guard), first to define
 * the tracepoints, then once per stage of <trace/trace_events.h> to generate each event's
 * record struct, field table, probe, printer and format text.
 *
 * The trace header is found as <trace/events/TRACE_INCLUDE_FILE.h>, or, when the header sets
 * TRACE_INCLUDE_PATH, as "TRACE_INCLUDE_PATH/TRACE_INCLUDE_FILE.h" (searched like any quoted
 * include, so TRACE_INCLUDE_PATH "." works with -I for the header's directory).
 * TRACE_INCLUDE_FILE defaults to TRACE_SYSTEM.
 */
#ifdef CREATE_TRACE_POINTS

/* The re-reads below must not recurse into this file. */
#undef CREATE_TRACE_POINTS

#include <usertp/compiler.h>

#undef TRACE_EVENT
#define TRACE_EVENT(name, proto, args, tstruct, assign, print)                                     \
	DEFINE_TRACE(name, PARAMS(proto), PARAMS(args))
#undef TRACE_EVENT_CONDITION
#define TRACE_EVENT_CONDITION(name, proto, args, cond, tstruct, assign, print)                     \
	DEFINE_TRACE(name, PARAMS(proto), PARAMS(args))
#undef TRACE_EVENT_FN
#define TRACE_EVENT_FN(name, proto, args, tstruct, assign, print, reg, unreg)                      \
	DEFINE_TRACE_FN(name, reg, unreg, PARAMS(proto), PARAMS(args))
#undef TRACE_EVENT_FN_COND
#define TRACE_EVENT_FN_COND(name, proto, args, cond, tstruct, assign, print, reg, unreg)           \
	DEFINE_TRACE_FN(name, reg, unreg, PARAMS(proto), PARAMS(args))
#undef DEFINE_EVENT
#define DEFINE_EVENT(template, name, proto, args) DEFINE_TRACE(name, PARAMS(proto), PARAMS(args))
#undef DEFINE_EVENT_FN
#define DEFINE_EVENT_FN(template, name, proto, args, reg, unreg)                                   \
	DEFINE_TRACE_FN(name, reg, unreg, PARAMS(proto), PARAMS(args))
#undef DEFINE_EVENT_PRINT
#define DEFINE_EVENT_PRINT(template, name, proto, args, print)                                     \
	DEFINE_TRACE(name, PARAMS(proto), PARAMS(args))
#undef DEFINE_EVENT_CONDITION
#define DEFINE_EVENT_CONDITION(template, name, proto, args, cond)                                  \
	DEFINE_TRACE(name, PARAMS(proto), PARAMS(args))
#undef DECLARE_TRACE
#define DECLARE_TRACE(name, proto, args) DEFINE_TRACE(name, PARAMS(proto), PARAMS(args))
#undef DECLARE_TRACE_CONDITION
#define DECLARE_TRACE_CONDITION(name, proto, args, cond)                                           \
	DEFINE_TRACE(name, PARAMS(proto), PARAMS(args))

#ifndef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE TRACE_SYSTEM
#define USERTP__UNDEF_TRACE_INCLUDE_FILE
#endif

#ifndef TRACE_INCLUDE_PATH
#define __TRACE_INCLUDE(system) <trace/events/system.h>
#define USERTP__UNDEF_TRACE_INCLUDE_PATH
#else
#define __TRACE_INCLUDE(system) USERTP_STRINGIFY(TRACE_INCLUDE_PATH/system.h)
#endif

#define TRACE_INCLUDE(system) __TRACE_INCLUDE(system)

/* Let the trace header be read again. */
#define TRACE_HEADER_MULTI_READ

#include TRACE_INCLUDE(TRACE_INCLUDE_FILE)

#include <trace/trace_events.h>

#undef TRACE_EVENT
#undef TRACE_EVENT_FN
#undef TRACE_EVENT_FN_COND
#undef TRACE_EVENT_CONDITION
#undef DECLARE_EVENT_CLASS
#undef DEFINE_EVENT
#undef DEFINE_EVENT_FN
#undef DEFINE_EVENT_PRINT
#undef DEFINE_EVENT_CONDITION
#undef TRACE_DEFINE_ENUM
#undef TRACE_DEFINE_SIZEOF
#undef TRACE_HEADER_MULTI_READ
#undef DECLARE_TRACE
#undef DECLARE_TRACE_CONDITION

/* Only undo what this file defined. */
#ifdef USERTP__UNDEF_TRACE_INCLUDE_FILE
#undef TRACE_INCLUDE_FILE
#undef USERTP__UNDEF_TRACE_INCLUDE_FILE
#endif
#ifdef USERTP__UNDEF_TRACE_INCLUDE_PATH
#undef TRACE_INCLUDE_PATH
#undef USERTP__UNDEF_TRACE_INCLUDE_PATH
#endif
#undef TRACE_INCLUDE
#undef __TRACE_INCLUDE

/* Another trace header may follow in this translation unit. */
#define CREATE_TRACE_POINTS

#endif /* CREATE_TRACE_POINTS */
