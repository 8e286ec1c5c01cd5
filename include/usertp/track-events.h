/* SPDX-License-Identifier: MIT */
/*
 * usertp/track-events.h - the events behind <usertp/track.h>: spans, instants, counters and
 * flows that a program records without a trace header of its own.  libusertp defines them
 * (src/lib/track.c); a program includes <usertp/track.h>, not this file.
 *
 * System "usertp" (enabled as any event: 'usertp:*', 'usertp:usertp_span', ...).  Their fields
 * follow Perfetto's convention for kernel track events, so that a tool that knows it shows
 * them as slices and counters with no mapping table:
 *   track_event_type  char: 'B' begins a slice, 'E' ends the last one begun on its track,
 *                     'I' an instant;
 *   slice_name        __string: the slice's or instant's name;
 *   track_name        __string: the track (default: the event's name);
 *   scope_*           an integer that groups events into tracks (default: the thread);
 *   counter_value     an integer: a counter's new value.
 * usertp_span's track is its thread; usertp_async's is its name and id (scope_span_id), so
 * that it may begin on one thread and end on another; usertp_counter's is its name in its
 * process (scope_tgid).  usertp_flow links a span that ends to one that begins (flow_phase
 * 's' then 'f', as the Chrome trace format's flow events, with the same flow_id).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM usertp

#if !defined(_USERTP_TRACK_EVENTS_H) || defined(TRACE_HEADER_MULTI_READ)
#define _USERTP_TRACK_EVENTS_H

#include <usertp/tracepoint.h>

/*
 * The type letter in the text ('B' 66, 'E' 69, 'I' 73): libtraceevent 1.7 prints no "%c",
 * and takes no character constant in __print_symbolic().
 */
/* The process's id, kept by libusertp (track.c: at start and in a fork's child): getpid() is a
 * system call. */
#ifndef USERTP__TRACK_TGID_DECLARED
#define USERTP__TRACK_TGID_DECLARED
USERTP__C_BEGIN
extern int usertp__track_tgid __attribute__((visibility("default")));
USERTP__C_END
#endif

#ifndef USERTP__TRACK_TYPE
#define USERTP__TRACK_TYPE(type) __print_symbolic(type, { 66, "B" }, { 69, "E" }, { 73, "I" })
#endif

TRACE_EVENT(usertp_span,

	TP_PROTO(char type, const char *name),

	TP_ARGS(type, name),

	TP_STRUCT__entry(
		__field(	char,		track_event_type	)
		__string(	slice_name,	name			)
	),

	TP_fast_assign(
		__entry->track_event_type = type;
		__assign_str(slice_name);
	),

	TP_printk("%s %s", USERTP__TRACK_TYPE(__entry->track_event_type), __get_str(slice_name))
);

TRACE_EVENT(usertp_async,

	TP_PROTO(char type, const char *name, unsigned long long id),

	TP_ARGS(type, name, id),

	TP_STRUCT__entry(
		__field(	char,			track_event_type	)
		__field(	unsigned long long,	scope_span_id		)
		__string(	slice_name,		name			)
		__string(	track_name,		name			)
	),

	TP_fast_assign(
		__entry->track_event_type = type;
		__entry->scope_span_id = id;
		__assign_str(slice_name);
		__assign_str(track_name);
	),

	TP_printk("%s %s id=%llu", USERTP__TRACK_TYPE(__entry->track_event_type),
		  __get_str(slice_name), __entry->scope_span_id)
);

TRACE_EVENT(usertp_counter,

	TP_PROTO(const char *name, long long value),

	TP_ARGS(name, value),

	TP_STRUCT__entry(
		__field(	long long,	counter_value	)
		__field(	int,		scope_tgid	)
		__string(	track_name,	name		)
	),

	TP_fast_assign(
		__entry->counter_value = value;
		__entry->scope_tgid = usertp__track_tgid;
		__assign_str(track_name);
	),

	TP_printk("%s=%lld", __get_str(track_name), __entry->counter_value)
);

TRACE_EVENT(usertp_flow,

	TP_PROTO(char phase, unsigned long long id),

	TP_ARGS(phase, id),

	TP_STRUCT__entry(
		__field(	unsigned long long,	flow_id		)
		__field(	char,			flow_phase	)
	),

	TP_fast_assign(
		__entry->flow_id = id;
		__entry->flow_phase = phase;
	),

	TP_printk("%s id=%llu", __print_symbolic(__entry->flow_phase, { 115, "s" }, { 102, "f" }),
		  __entry->flow_id)
);

#endif /* _USERTP_TRACK_EVENTS_H */

#undef TRACE_INCLUDE_PATH
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_PATH usertp
#define TRACE_INCLUDE_FILE track-events
#include <trace/define_trace.h>
