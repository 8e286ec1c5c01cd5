/* SPDX-License-Identifier: MIT */
/*
 * listener.h - private to libusertp: listener.c's, the listeners (the public ones, the
 * embedded recorder's, the outside sessions'): their specs, filters and pid lists, and the
 * events they record (listener.c).
 */
#ifndef USERTP_LIB_LISTENER_H
#define USERTP_LIB_LISTENER_H

#include "internal.h"

/*
 * The pid filter of @l (a copy of @trace and @notrace is kept), from its next record on, for
 * the events it records now and later.  Return: 0 or -ENOMEM (nothing changes).
 */
USERTP_HIDDEN int usertp__listener_set_pid_lists(struct usertp_listener *l,
						 const struct usertp__pid_list *trace,
						 const struct usertp__pid_list *notrace, bool follow);


/*
 * For a listener whose events come later (the embedded recorder's): @fn (with the listener's
 * arg) is told of an event
 * whose filter (set for @events) does not compile for it; that event is then not recorded.
 * Without it, such an event records unfiltered (as tracefs's subsystem filters do).
 */
typedef void (*usertp__filter_refused_func)(void *arg, const char *events,
					    const struct usertp_event *ev, const char *text,
					    const struct usertp__filter_error *e);
USERTP_HIDDEN void usertp__listener_on_filter_refused(struct usertp_listener *l,
						      usertp__filter_refused_func fn);
/* "events=SPECS" and "filter SPEC TEXT" lines of @l, into @f (usertp list -v). */
USERTP_HIDDEN void usertp__listener_describe(const struct usertp_listener *l, FILE *f);

/* A listener with its own sink (the recorder's ring buffers); fn may be NULL. */
USERTP_HIDDEN int usertp__listener_create_ops(const char *events, unsigned int spec_flags,
					      const struct usertp_event_file_head *ops,
					      usertp_record_func fn, void *arg,
					      struct usertp_listener **out);
/*
 * Replace the specs of @l: events they no longer select stop being recorded, those they
 * select now start, the others go on untouched.  Return: 0, -EINVAL (a bad spec: nothing
 * changes) or -ENOMEM.
 */
USERTP_HIDDEN int usertp__listener_set_specs(struct usertp_listener *l, const char *events,
					     unsigned int spec_flags);

/* Call @fn for each event file of @l (no lock taken: for the recorder's output). */
USERTP_HIDDEN void usertp__listener_files(const struct usertp_listener *l,
					  void (*fn)(const struct usertp_event_file *file, void *arg),
					  void *arg);

#endif /* USERTP_LIB_LISTENER_H */
