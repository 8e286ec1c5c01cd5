/* SPDX-License-Identifier: MIT */
/*
 * track.c - the events of <usertp/track.h> (usertp/track-events.h), defined here as a program
 * defines its own: their tracepoints, records and formats, registered by the constructor
 * <usertp/tracepoint.h> emits for every object that defines events.  Their tracepoints and
 * iterators are exported (libusertp.map), since the call sites are in the programs.
 */
#pragma GCC visibility push(default)
#define CREATE_TRACE_POINTS
#include <usertp/track-events.h>
#pragma GCC visibility pop
