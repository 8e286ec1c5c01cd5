/* SPDX-License-Identifier: MIT */
/*
 * usertp/track.h - spans, instants, counters and flows, with no trace header to write.
 *
 *	usertp_span_begin("parse");  ...  usertp_span_end("parse");	on this thread, nested
 *	usertp_instant("cache-miss");					a point in time
 *	usertp_async_begin("request", id); ... usertp_async_end("request", id);
 *					keyed by id: may end on another thread, need not nest
 *	usertp_counter("queue-depth", n);				a value over time
 *	usertp_flow_begin(id); ... usertp_flow_end(id);	an arrow from where one span ends
 *							to where another begins
 *
 * Each is a tracepoint site of its own: a patched nop while its event is off, its arguments
 * not even evaluated.  The events are libusertp's, in system "usertp" (usertp/track-events.h:
 * their fields follow Perfetto's kernel track event convention), enabled as any other:
 * USERTP_EVENTS='usertp:*', usertp record -e 'usertp:*', or one of usertp_span, usertp_async,
 * usertp_counter, usertp_flow.  usertp report --spans sums them up: the durations of each
 * span's name (count, percentiles, histogram) and each counter's last, min, max and mean.
 *
 * Names are copied into the record (a string of any length, as __string()).  A span ends the
 * last span begun on its thread; usertp_span_end()'s name is recorded too, so that a report
 * can say when the two differ.
 */
#ifndef USERTP_TRACK_H
#define USERTP_TRACK_H

/*
 * The declarations only: libusertp defines these events.  A file that includes this one
 * after "#define CREATE_TRACE_POINTS" for its own trace header must not define them again.
 */
#ifdef CREATE_TRACE_POINTS
#define USERTP__TRACK_CREATE_TRACE_POINTS
#undef CREATE_TRACE_POINTS
#endif
#include <usertp/track-events.h>
#ifdef USERTP__TRACK_CREATE_TRACE_POINTS
#define CREATE_TRACE_POINTS
#undef USERTP__TRACK_CREATE_TRACE_POINTS
#endif

#define usertp_span_begin(name) usertp_trace(usertp_span, 'B', (name))
#define usertp_span_end(name) usertp_trace(usertp_span, 'E', (name))
#define usertp_instant(name) usertp_trace(usertp_span, 'I', (name))
#define usertp_async_begin(name, id) usertp_trace(usertp_async, 'B', (name), (id))
#define usertp_async_end(name, id) usertp_trace(usertp_async, 'E', (name), (id))
#define usertp_counter(name, value) usertp_trace(usertp_counter, (name), (value))
#define usertp_flow_begin(id) usertp_trace(usertp_flow, 's', (id))
#define usertp_flow_end(id) usertp_trace(usertp_flow, 'f', (id))

#endif /* USERTP_TRACK_H */
