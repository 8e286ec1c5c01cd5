/* SPDX-License-Identifier: MIT */
/*
 * Set-up shared by every stage of <trace/trace_events.h>: the event macros that are
 * spelled in terms of others, and the system name.  Private to usertp's headers.
 */
#ifndef TRACE_SYSTEM_VAR
#define TRACE_SYSTEM_VAR TRACE_SYSTEM
#endif
#define USERTP__SYSTEM_STRING USERTP_STRINGIFY(TRACE_SYSTEM)

/* TRACE_EVENT is an event class with one event of the same name. */
#undef TRACE_EVENT
#define TRACE_EVENT(name, proto, args, tstruct, assign, print)                                     \
	DECLARE_EVENT_CLASS(name, PARAMS(proto), PARAMS(args), PARAMS(tstruct), PARAMS(assign),    \
			    PARAMS(print))                                                         \
	DEFINE_EVENT(name, name, PARAMS(proto), PARAMS(args))

/* Conditions are tested at the call site and reg/unreg live in the tracepoint: to the
 * stages these are plain events. */
#undef TRACE_EVENT_CONDITION
#define TRACE_EVENT_CONDITION(name, proto, args, cond, tstruct, assign, print)                     \
	TRACE_EVENT(name, PARAMS(proto), PARAMS(args), PARAMS(tstruct), PARAMS(assign), PARAMS(print))
#undef TRACE_EVENT_FN
#define TRACE_EVENT_FN(name, proto, args, tstruct, assign, print, reg, unreg)                      \
	TRACE_EVENT(name, PARAMS(proto), PARAMS(args), PARAMS(tstruct), PARAMS(assign), PARAMS(print))
#undef TRACE_EVENT_FN_COND
#define TRACE_EVENT_FN_COND(name, proto, args, cond, tstruct, assign, print, reg, unreg)           \
	TRACE_EVENT(name, PARAMS(proto), PARAMS(args), PARAMS(tstruct), PARAMS(assign), PARAMS(print))
#undef DEFINE_EVENT_FN
#define DEFINE_EVENT_FN(template, name, proto, args, reg, unreg)                                   \
	DEFINE_EVENT(template, name, PARAMS(proto), PARAMS(args))
#undef DEFINE_EVENT_CONDITION
#define DEFINE_EVENT_CONDITION(template, name, proto, args, cond)                                  \
	DEFINE_EVENT(template, name, PARAMS(proto), PARAMS(args))
/* Raw tracepoints in a trace header have no event. */
#undef DECLARE_TRACE
#define DECLARE_TRACE(name, proto, args)
#undef DECLARE_TRACE_CONDITION
#define DECLARE_TRACE_CONDITION(name, proto, args, cond)

/* Helpers usable in TP_fast_assign and TP_printk of every stage that compiles code. */
#define USERTP__BITS_TO_LONGS(nr) (((nr) + 8 * sizeof(unsigned long) - 1) / (8 * sizeof(unsigned long)))
