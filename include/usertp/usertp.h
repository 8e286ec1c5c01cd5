/* SPDX-License-Identifier: MIT */
/*
 * usertp/usertp.h - the runtime API of libusertp: the events a program knows, their format
 * texts, printing their records, and in-process listeners that receive every record of the
 * events they select.
 *
 * Events are found without any call by the user: the executable's and every loaded shared
 * library's events are known from the start, and those of a library opened with dlopen()
 * appear then and are gone after its dlclose().  An event handle stays valid until the object
 * that defines it is unloaded.
 *
 * Int-returning calls return 0 (or a length) on success and a negative errno on failure.
 */
#ifndef USERTP_USERTP_H
#define USERTP_USERTP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <usertp/compiler.h>
#include <usertp/trace-event.h>
#include <usertp/tracepoint.h>

USERTP__C_BEGIN

/* Largest record an event can have (bytes, common header included): one ring-buffer page. */
#define USERTP_RECORD_MAX 4072

/**
 * usertp_event_find() - look an event up by system and name.
 * Return: the event, or NULL (errno is not set).
 */
USERTP_EXPORT const struct usertp_event *usertp_event_find(const char *system, const char *name);

/**
 * usertp_event_foreach() - call @fn for every known event, in registration order, until it
 * returns non-zero.  @fn may use the rest of the API.
 * Return: the last value @fn returned, or 0.
 */
USERTP_EXPORT int usertp_event_foreach(int (*fn)(const struct usertp_event *ev, void *arg),
				       void *arg);

USERTP_EXPORT const char *usertp_event_system(const struct usertp_event *ev);
USERTP_EXPORT const char *usertp_event_name(const struct usertp_event *ev);
/* The event's id: the common_type of its records and the ID: line of its format. */
USERTP_EXPORT int usertp_event_id(const struct usertp_event *ev);

/**
 * usertp_event_format() - the event's format text, as tracefs shows it in events/SYS/EV/format.
 * Writes at most @size bytes (always NUL-terminated when @size > 0), like snprintf().
 * Return: the full length of the text, or a negative errno.
 */
USERTP_EXPORT int usertp_event_format(const struct usertp_event *ev, char *buf, size_t size);

/**
 * usertp_event_print() - format a record with the event's compiled TP_printk.
 * The record is checked first (size, location words, string terminators): a record that
 * does not hold together gives -EINVAL and nothing is read outside it.
 * Return: the full length of the text (truncated to @size like snprintf()), or a negative
 * errno.
 */
USERTP_EXPORT int usertp_event_print(const struct usertp_event *ev, const void *record,
				     size_t record_size, char *buf, size_t size);

/*
 * Listeners: receive each record of the selected events in the thread that wrote it, right
 * after it was written.  @events is a list of set_event specs separated by commas or white
 * space ("sys:event", "sys:*", "*:event", "name", "!spec" to take events out again).  The
 * specs also apply to events of libraries loaded later.  The record is only valid during the
 * call.
 */
struct usertp_listener;
typedef void (*usertp_record_func)(const struct usertp_event *ev, const void *record,
				   unsigned int size, void *arg);

/**
 * usertp_listener_create() - start listening.
 * Return: 0 with *@out set; -EINVAL for a malformed spec (nothing is enabled then);
 * -ENOMEM.
 */
USERTP_EXPORT int usertp_listener_create(const char *events, usertp_record_func fn, void *arg,
					 struct usertp_listener **out);

/**
 * usertp_listener_destroy() - stop listening.  When it returns, @fn is not running and will
 * not run again.  Must not be called from inside @fn.  Accepts NULL.
 */
USERTP_EXPORT void usertp_listener_destroy(struct usertp_listener *listener);

/* Records the listener could not take (too big for USERTP_RECORD_MAX, or out of memory). */
USERTP_EXPORT unsigned long usertp_listener_lost(const struct usertp_listener *listener);

/**
 * usertp_listener_set_filter() - give the events @events selects (a set_event spec:
 * "sys:event", "sys:*"...) a filter in the kernel's grammar (tracefs's events/SYS/EV/filter:
 * "id > 5 && name ~ "job-*""), run in the thread that records, before @fn is called; "0"
 * or NULL removes it.  It replaces the filter those events had, takes effect at once while
 * other threads record, and applies to such events that appear later (a library loaded).
 * With several events (as tracefs's events/SYS/filter), each takes it where it compiles.
 * Return: 0, or the kernel's negative errno for the filter (-EINVAL, and its parser's
 * -ENOENT, -EPERM, -ESRCH) when no event takes it, with @err (may be NULL) holding the text,
 * a caret under the error and the kernel's message, as the filter file shows them.
 */
USERTP_EXPORT int usertp_listener_set_filter(struct usertp_listener *listener, const char *events,
					     const char *filter, char *err, size_t errlen);

/**
 * usertp_listener_set_pid_filter() - record only the events of the threads in @pids (when
 * @nr_pids is not 0), and none of those in @notrace: tracefs's set_event_pid and
 * set_event_notrace_pid.  A pid is a thread id (gettid(), common_pid), as in the kernel.
 * With @event_fork (tracefs's option of that name), a child process that a listed thread
 * forks is listed too, and so is a thread of a listed process (at its first event, however it
 * was made: threads are followed by process), and a listed thread that exits is taken off
 * once it has recorded an event.  It replaces the listener's pid filter at once, for the events it
 * records now and later; both lists empty: no pid filter.  The filter of each event
 * (usertp_listener_set_filter()) applies as well.
 * Return: 0, -EINVAL (a pid below 0 or above 2^30 - 1), -ENOMEM (nothing changes).
 */
USERTP_EXPORT int usertp_listener_set_pid_filter(struct usertp_listener *listener,
						 const pid_t *pids, size_t nr_pids,
						 const pid_t *notrace, size_t nr_notrace,
						 bool event_fork);

USERTP__C_END

#endif /* USERTP_USERTP_H */
