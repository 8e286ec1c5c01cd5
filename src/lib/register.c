/* SPDX-License-Identifier: MIT */
/*
 * register.c - the top of libusertp: what an instrumented object's constructor and destructor
 * call (usertp__object_register(), usertp/tracepoint.h).  The object table, its tracepoints
 * and events are objects.c's; once an object's events have come, the control endpoint tells
 * the recorders outside the process (control.c) before any of them can fire.
 *
 * Every program that uses tracepoints links this file; its reference to the embedded
 * recorder makes a static link keep that too, whose constructor nothing else calls.
 */
#define _GNU_SOURCE

#include "internal.h"

static void (*const keep_recorder)(void) __attribute__((used)) = usertp__recorder_init;

void usertp__object_register(struct usertp__object *obj)
{
	if (usertp__objects_register(obj))
		usertp__control_events_changed();
	usertp__registering_at_start = false;
}

void usertp__object_unregister(struct usertp__object *obj)
{
	usertp__objects_unregister(obj);
}
