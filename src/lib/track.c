/* SPDX-License-Identifier: MIT */
/*
 * track.c - the events of <usertp/track.h> (usertp/track-events.h), defined here as a program
 * defines its own: their tracepoints, records and formats, registered by the constructor
 * <usertp/tracepoint.h> emits for every object that defines events.  Their tracepoints and
 * iterators are exported (libusertp.map), since the call sites are in the programs; and the
 * process id counters record.
 */
#include <pthread.h>
#include <unistd.h>

#pragma GCC visibility push(default)
#define CREATE_TRACE_POINTS
#include <usertp/track-events.h>
#pragma GCC visibility pop

/* usertp_counter's scope_tgid: the process, kept here rather than a getpid() per event. */
int usertp__track_tgid;

static void track_tgid_refresh(void)
{
	usertp__track_tgid = (int)getpid();
}

static void __attribute__((constructor)) track_init(void)
{
	track_tgid_refresh();
	pthread_atfork(NULL, NULL, track_tgid_refresh);
}
