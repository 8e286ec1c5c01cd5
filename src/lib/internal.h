/* SPDX-License-Identifier: MIT */
/*
 * internal.h - private to libusertp: the shared state of the registry, tracepoints, jump
 * labels and event files.
 *
 * One mutex, usertp__lock (object-table.c), serialises every change: probe registration,
 * site patching, objects coming and going, event files.  The hot path (a probe running) takes
 * no lock; it is protected by RCU (liburcu-bp).
 *
 * The files are layered (CONTRIBUTING.md draws them): each calls only those below it.  What
 * a lower one must tell a higher one, it tells through functions the higher one gives it:
 * the registry's watcher (events coming and going: the listeners), thread.c's followers
 * (threads and processes coming and going: the listeners that follow), and objects.c's
 * answer to register.c (events came: the control endpoint).  What threads, listeners, the
 * scratch records and the ring-buffer sinks give is in thread.h, listener.h, scratch.h and
 * rb-sink.h.
 */
#ifndef USERTP_INTERNAL_H
#define USERTP_INTERNAL_H

#define USERTP__BUILDING_LIBRARY 1

#include <pthread.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>

#include <usertp/trace-event.h>
#include <usertp/tracepoint.h>
#include <usertp/usertp.h>

#include "filter.h"
#include "grow.h"
#include "pid-list.h"
#include "ring-buffer.h"

#ifndef USERTP_HIDDEN
#define USERTP_HIDDEN __attribute__((visibility("hidden")))
#endif

extern pthread_mutex_t usertp__lock USERTP_HIDDEN;

/* One-time set-up of the library (RCU, fork handlers); safe to call from anywhere. */
USERTP_HIDDEN void usertp__init(void);

/* Set once exit() has started: objects then stay registered (other threads may still run). */
extern bool usertp__exiting USERTP_HIDDEN;
/* The embedded recorder's set-up (a constructor; named so that a static link keeps it). */
USERTP_HIDDEN void usertp__recorder_init(void);
/*
 * objects.c: an object comes (and its tracepoints, events and printk sites with it; return:
 * whether it brought events or printk formats the process had not: news for recorders), or
 * goes.  register.c's public entries call them.
 */
USERTP_HIDDEN bool usertp__objects_register(struct usertp__object *obj);
USERTP_HIDDEN void usertp__objects_unregister(struct usertp__object *obj);
/*
 * Is this copy of libusertp's code a second one in the process (the static library linked
 * twice)?  Then it stays off, said once on stderr (objects.c).
 */
USERTP_HIDDEN bool usertp__runtime_later(void);
/* control.c: events came (an object registered): recorders hear of them before they fire. */
USERTP_HIDDEN void usertp__control_events_changed(void);
/*
 * Sessions started with at_start=1 (usertp record -- CMD: the command itself): while there is
 * one, each object that registers is asked whether it was loaded with the program, and
 * usertp__registering_at_start says so to whatever its registration calls (a filter that
 * does not fit one of its events then stops the program's start: session.c).
 */
extern unsigned int usertp__at_start_sessions USERTP_HIDDEN;
extern __thread bool usertp__registering_at_start USERTP_HIDDEN;

/*
 * Set by the recorder: objects registered afterwards are never unloaded, and their events keep
 * their format text (see registry.c).
 */
extern bool usertp__keep_objects USERTP_HIDDEN;
/*
 * Write the format text of every event registered so far that has none: those registered
 * before usertp__keep_objects was set (in a static link, the program's own objects register
 * before libusertp's constructors run).  Events registered later get theirs as they come.
 */
USERTP_HIDDEN void usertp__keep_formats(void);
/*
 * registry.c, for objects.c: an object's event arrives, or goes (under usertp__lock); and
 * growing an array to @need elements of @elem bytes (*@cap of them now).
 */
USERTP_HIDDEN void usertp__event_add_locked(struct usertp_event *ev);
USERTP_HIDDEN void usertp__event_remove_locked(struct usertp_event *ev);
/*
 * Call @fn on every event with its id, under the registry's lock: for libusertp's own threads
 * (the control thread), which must not hold an event's pointer past the lock while another
 * thread may unregister its object (usertp_event_foreach() is for the program's code, whose
 * handles stay valid until it closes their library).  @fn must not call the locked API.
 */
USERTP_HIDDEN void usertp__event_foreach_locked(void (*fn)(const struct usertp_event *ev, int id,
							   void *arg),
						void *arg);

/* tracepoint.c */
USERTP_HIDDEN int usertp__probe_register_locked(struct usertp_tracepoint *tp,
						usertp_probe_func probe, void *data, int prio);
USERTP_HIDDEN int usertp__probe_unregister_locked(struct usertp_tracepoint *tp,
						  usertp_probe_func probe, void *data);
/* Drop every probe of a tracepoint whose object goes away. */
USERTP_HIDDEN void usertp__probes_clear_locked(struct usertp_tracepoint *tp);
/* Free @ptr once no RCU reader can hold it any more. */
USERTP_HIDDEN void usertp__defer_free_locked(void *ptr);
/* Wait for a grace period and free the probe arrays retired before it.  Call unlocked. */
USERTP_HIDDEN void usertp__synchronize(void);

/*
 * jump-label.c: make every call site of @tp agree with tp->enabled.  Return 0, or the first
 * error (-EACCES and the like when code pages may not be written).
 */
USERTP_HIDDEN int usertp__jump_sync_tracepoint_locked(struct usertp_tracepoint *tp);
/* Get ready to patch while the process may still be single-threaded (cheaper then). */
USERTP_HIDDEN void usertp__jump_label_prepare(void);
/* Make the call sites of one object agree with their tracepoints. */
USERTP_HIDDEN int usertp__jump_sync_object_locked(struct usertp__object *obj);

/* object-table.c: the registered objects (under usertp__lock). */
USERTP_HIDDEN unsigned int usertp__objects_count_locked(void);
USERTP_HIDDEN struct usertp__object *usertp__object_at_locked(unsigned int i);
/* Return: false when there is no memory for it. */
USERTP_HIDDEN bool usertp__objects_add_locked(struct usertp__object *obj);
USERTP_HIDDEN void usertp__objects_remove_locked(struct usertp__object *obj);

/*
 * The library's view of one event name.  Several objects may define the same event
 * (an "instance" each); with the same format they are one event, with one id, and enabling
 * it enables every instance.  An instance whose format differs is left out (and never
 * enabled).
 */
struct usertp__event_node {
	struct usertp__event_node *next;
	const struct usertp_event **instances; /* [0] is the one that describes the event */
	unsigned int nr_instances;
	int id;
	char *print_fmt; /* the class's or DEFINE_EVENT_PRINT's, with enum names replaced */
	char *format;	 /* the format text, while the embedded recorder runs (no malloc there) */
	const struct usertp_event_field *fields;
	unsigned int nr_fields;
	struct usertp_event_file *files; /* consumers that enabled it */
};

/* One consumer's enablement of one event (the kernel's trace_event_file). */
struct usertp_event_file {
	/* First: what generated probes call (a copy of *ops, set on enabling). */
	struct usertp_event_file_head head;
	struct usertp_event_file *next_in_node; /* node->files */
	struct usertp_event_file *next_in_owner;
	struct usertp__event_node *node;
	const struct usertp_event_file_head *ops;
	void *owner;
	void *sink; /* what ops record into: the listener's arg (a struct usertp__rb_sink...) */
	const struct usertp_event *event; /* node->instances[0], for the hot path */
	int id;				  /* node->id, for the hot path */
	struct usertp__filter *filter;	  /* records must pass it (RCU: freed after a grace period) */
	struct usertp__pid_filter *pids;  /* the owner's pid filter, or NULL (the same) */
	char *filter_text;		  /* as set */
	uint64_t filtered;		  /* records it refused */
};

/*
 * Filters (event-filter.c).  Set (@text NULL or "0": none) on an event file under
 * usertp__lock; the old one is freed after a grace period.  Return: 0, or the compiler's
 * negative errno with *err (may be NULL) saying why; the file's filter is then unchanged.
 */
USERTP_HIDDEN int usertp__event_file_set_filter_locked(struct usertp_event_file *file,
						       const char *text,
						       struct usertp__filter_error *err);
/* The calling thread's name (comm.c), for a filter's COMM. */
extern __thread char usertp__thread_comm[16] __attribute__((tls_model("initial-exec"))) USERTP_HIDDEN;

/*
 * Does the record (@size bytes) pass @filter?  Counts it in file->filtered when not.  Inline:
 * on the path of every filtered event.
 */
static inline bool usertp__event_file_passes(struct usertp_event_file *file, const void *filter,
					     const void *record, size_t size)
{
	/* The CPU costs a system call where there is no rseq area: only when it is asked. */
	struct usertp__filter_record r = { record, size,
					   usertp__filter_uses_cpu(filter) ? (unsigned int)usertp__rb_getcpu() : 0,
					   usertp__thread_comm };

	if (usertp__filter_match(filter, &r))
		return true;
	__atomic_fetch_add(&file->filtered, 1, __ATOMIC_RELAXED);
	return false;
}
/*
 * The heads of @file for its filter and pid filter as they are now: those that let them run
 * (rb-sink.c), or its ops' reserve when it has neither.  Under usertp__lock.
 */
USERTP_HIDDEN void usertp__event_file_heads_locked(struct usertp_event_file *file);



/* The ring-buffer sinks' heads that let a filter run before a record is stored (rb-sink.c). */
USERTP_HIDDEN bool usertp__rb_sink_filter_heads(const struct usertp_event_file_head *plain,
						struct usertp_event_file_head *filtered);

USERTP_HIDDEN struct usertp__event_node *usertp__events_first_locked(void);
USERTP_HIDDEN int usertp__event_file_enable_locked(struct usertp_event_file *file);
USERTP_HIDDEN void usertp__event_file_disable_locked(struct usertp_event_file *file);



/* The thread names the recorder saw, for its output. */
USERTP_HIDDEN void usertp__comm_note(int tid);
USERTP_HIDDEN const char *usertp__comm_find(int tid, char *buf, size_t size);
/*
 * The noted threads the ring holds, from note @since on (0: all), as saved_cmdlines text
 * ("pid comm" lines) into @buf; *@next (if not NULL): where the next call goes on from.
 * Returns the length.
 */
USERTP_HIDDEN size_t usertp__comm_lines(char *buf, size_t size, uint64_t since, uint64_t *next);
/* How many threads were noted so far. */
USERTP_HIDDEN uint64_t usertp__comm_noted(void);
/*
 * The control thread tells each session the threads noted since it last told it when this
 * many more were noted (comm.c wakes it then): a recorder that asks once a second then hears
 * of every thread of a process that makes thousands a second, before the ring drops them.
 */
#define USERTP__COMM_TELL_EVERY 2048

/*
 * The registry publishes every event that appears or goes; the listeners subscribe with the
 * first listener made (listener.c: an event that appears is picked up by the listeners whose
 * specs select it; one that goes has its files disabled and freed by their owners).  Under
 * usertp__lock.
 */
struct usertp__registry_watcher {
	void (*added_locked)(struct usertp__event_node *node);
	void (*removed_locked)(struct usertp__event_node *node);
};
USERTP_HIDDEN void usertp__registry_watch_locked(const struct usertp__registry_watcher *w);

#include "spec.h"

/* format.c */
USERTP_HIDDEN int usertp__format_write(const struct usertp__event_node *node, char *buf,
				       size_t size);
USERTP_HIDDEN char *usertp__print_fmt_eval(const char *fmt, const char *system);

/* print.c */
USERTP_HIDDEN void usertp__seq_init(struct usertp_seq *s, char *buf, unsigned int size);
/* usertp_event_print() into a buffer that is big enough or cut: no allocation. */
USERTP_HIDDEN int usertp__event_print_buf(const struct usertp_event *ev, const void *record,
					  size_t record_size, char *buf, size_t size,
					  bool *truncated);
/* The size of the record being printed, for printers that need it (printk.c's). */
extern __thread size_t usertp__printing_size USERTP_HIDDEN;

/*
 * printk.c: usertp_printk()'s call sites and the process's table of their formats.
 * A site of a loading object is checked (a format refused is said on stderr) and its format
 * added to the table (under usertp__lock; return: whether the table grew).
 */
struct usertp_printk_site;
USERTP_HIDDEN bool usertp__printk_site_add_locked(struct usertp_printk_site *site);
/* Entries in the table (it only grows). */
USERTP_HIDDEN unsigned int usertp__printk_count(void);
/*
 * The table's entries @skip to @upto (oldest first; fewer if it has fewer) as printk_formats
 * lines, or with @kallsyms as kallsyms lines (bprint.h), into @buf of @size bytes,
 * snprintf()'s way, not NUL-terminated.  No lock, no allocation.  Return: the length of the
 * whole text.
 */
USERTP_HIDDEN size_t usertp__printk_lines(unsigned int skip, unsigned int upto, bool kallsyms,
					  char *buf, size_t size);


#endif /* USERTP_INTERNAL_H */
