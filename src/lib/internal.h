/* SPDX-License-Identifier: MIT */
/*
 * internal.h - private to libusertp: the shared state of the registry, tracepoints, jump
 * labels and event files.
 *
 * One mutex, usertp__lock, serialises every change: probe registration, site patching,
 * objects coming and going, event files.  The hot path (a probe running) takes no lock; it
 * is protected by RCU (liburcu-bp).
 */
#ifndef USERTP_INTERNAL_H
#define USERTP_INTERNAL_H

#define USERTP__BUILDING_LIBRARY 1

#include <pthread.h>
#include <stdio.h>
#include <stdbool.h>

#include <usertp/trace-event.h>
#include <usertp/tracepoint.h>
#include <usertp/usertp.h>

#include "filter.h"
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
USERTP_HIDDEN bool usertp__grow(void **array, unsigned int *cap, unsigned int need, size_t elem);
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

/* registry.c: the registered objects. */
USERTP_HIDDEN unsigned int usertp__objects_count_locked(void);
USERTP_HIDDEN struct usertp__object *usertp__object_at_locked(unsigned int i);

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

/*
 * Pid filters (pid-filter.c): tracefs's set_event_pid (@trace: only these threads, when not
 * empty) and set_event_notrace_pid (@notrace: not these), compiled for the hot path; with
 * @follow (event-fork), the thread that finds itself listed watches its exit.
 */
struct usertp__pid_filter {
	uint64_t serial; /* unique, never 0 */
	bool follow;
	size_t nr_trace, nr_notrace;
	int pids[]; /* trace then notrace, each ascending */
};
/* A new pid filter into *out (NULL when both lists are empty).  Return: 0 or -ENOMEM. */
USERTP_HIDDEN int usertp__pid_filter_new(const struct usertp__pid_list *trace,
					 const struct usertp__pid_list *notrace, bool follow,
					 struct usertp__pid_filter **out);
/* A thread's answers: whether it passes the filter of each serial (pid-filter.c). */
#define USERTP__PID_VERDICTS 4
struct usertp__pid_verdicts {
	uint64_t serial[USERTP__PID_VERDICTS];
	bool pass[USERTP__PID_VERDICTS];
};
extern __thread struct usertp__pid_verdicts usertp__pid_verdicts
	__attribute__((tls_model("initial-exec"))) USERTP_HIDDEN;
USERTP_HIDDEN bool usertp__pid_filter_verdict(const struct usertp__pid_filter *f);
/* Does the calling thread pass @f?  One compare on the hot path. */
static inline bool usertp__pid_filter_passes(const struct usertp__pid_filter *f)
{
	unsigned int i = f->serial & (USERTP__PID_VERDICTS - 1);

	if (usertp_likely(usertp__pid_verdicts.serial[i] == f->serial))
		return usertp__pid_verdicts.pass[i];
	return usertp__pid_filter_verdict(f);
}
/* Set by a thread of libusertp's own (the control thread): pid filters never list it. */
USERTP_HIDDEN extern __thread bool usertp__thread_is_own;
/* A thread's first event (from usertp__gettid_slow()): what its start left to do. */
USERTP_HIDDEN void usertp__thread_first_event(void);
/* In a forked child: its answers were its parent's thread's. */
USERTP_HIDDEN void usertp__pid_verdicts_reset(void);
/* Listeners whose pid filter follows (event-fork); the fork and thread hooks look at it. */
extern unsigned int usertp__pid_following USERTP_HIDDEN;
/*
 * A program that starts with a session that follows: listed (in @trace, @notrace) where its
 * nearest listed ancestor process is.  Return: 0 or -ENOMEM.
 */
USERTP_HIDDEN int usertp__pid_lists_inherit(struct usertp__pid_list *trace,
					    struct usertp__pid_list *notrace);
/*
 * Following (listener.c): @child (a thread, or a forked process's pid) is listed where
 * @parent is, by the listeners that follow; return whether it was listed somewhere.
 * A listed thread @tid that exits is taken off.  Under usertp__lock.
 */
USERTP_HIDDEN bool usertp__listeners_pid_follow_locked(int parent, int child);
USERTP_HIDDEN void usertp__listeners_pid_exit_locked(int tid);
/*
 * The pid filter of @l (a copy of @trace and @notrace is kept), from its next record on, for
 * the events it records now and later.  Return: 0 or -ENOMEM (nothing changes).
 */
USERTP_HIDDEN int usertp__listener_set_pid_lists(struct usertp_listener *l,
						 const struct usertp__pid_list *trace,
						 const struct usertp__pid_list *notrace, bool follow);

/*
 * Records being written by a thread (up to USERTP__SCRATCH_NEST nested): a listener's, or one
 * a filter must pass before it goes into a ring buffer (rb-sink.c).  Inline: they are on the
 * path of every filtered event.  The thread's area is made by its first record
 * (usertp__scratch_new(), listener.c) and freed when the thread ends.
 */
#define USERTP__SCRATCH_NEST 4
struct usertp__scratch {
	unsigned int depth;
	unsigned int size[USERTP__SCRATCH_NEST]; /* of each record being written */
	const void *aux[USERTP__SCRATCH_NEST];	  /* the filter it is to pass, or NULL */
	unsigned char buf[USERTP__SCRATCH_NEST][USERTP_RECORD_MAX] __attribute__((aligned(8)));
};
extern __thread struct usertp__scratch *usertp__thread_scratch
	__attribute__((tls_model("initial-exec"))) USERTP_HIDDEN;
USERTP_HIDDEN struct usertp__scratch *usertp__scratch_new(void);

/*
 * @size bytes to write a record into, with @aux (the filter it must pass) kept beside it;
 * NULL when nested too deep or too big.
 */
static inline void *usertp__scratch_push(size_t size, const void *aux)
{
	struct usertp__scratch *s = usertp__thread_scratch;

	if (usertp_unlikely(!s) && !(s = usertp__scratch_new()))
		return NULL;
	if (usertp_unlikely(size > USERTP_RECORD_MAX || s->depth >= USERTP__SCRATCH_NEST))
		return NULL;
	s->size[s->depth] = (unsigned int)size;
	s->aux[s->depth] = aux;
	return s->buf[s->depth++];
}

/* If @record is the innermost scratch record, take it off (true) with its size and aux. */
static inline bool usertp__scratch_pop(void *record, size_t *size, const void **aux)
{
	struct usertp__scratch *s = usertp__thread_scratch;

	if (!s || !s->depth || record != s->buf[s->depth - 1])
		return false;
	s->depth--;
	*size = s->size[s->depth];
	*aux = s->aux[s->depth];
	return true;
}

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

/* The ring-buffer sinks' heads that let a filter run before a record is stored (rb-sink.c). */
USERTP_HIDDEN bool usertp__rb_sink_filter_heads(const struct usertp_event_file_head *plain,
						struct usertp_event_file_head *filtered);

USERTP_HIDDEN struct usertp__event_node *usertp__events_first_locked(void);
USERTP_HIDDEN int usertp__event_file_enable_locked(struct usertp_event_file *file);
USERTP_HIDDEN void usertp__event_file_disable_locked(struct usertp_event_file *file);

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
/*
 * A consumer that records into ring buffers: the embedded recorder, and each session of a
 * recorder outside the process.  Its listener's files record with usertp__rb_sink_ops(), the
 * reserve and commit for the buffers' writer mode and the process's clock.
 */
struct usertp__rb_sink {
	bool active; /* false: events are not recorded (the buffers are being written out) */
	struct usertp__rb rb;
	struct usertp_listener *listener;
};
USERTP_HIDDEN const struct usertp_event_file_head *usertp__rb_sink_ops(const struct usertp__rb *rb);
/* How many ring-buffer sinks exist (they share usertp__rb_clock_id: one clock per process). */
extern unsigned int usertp__rb_sinks USERTP_HIDDEN;

/* Call @fn for each event file of @l (no lock taken: for the recorder's output). */
USERTP_HIDDEN void usertp__listener_files(const struct usertp_listener *l,
					  void (*fn)(const struct usertp_event_file *file, void *arg),
					  void *arg);

/* The thread names the recorder saw, for its output. */
USERTP_HIDDEN void usertp__comm_note(int tid);
USERTP_HIDDEN const char *usertp__comm_find(int tid, char *buf, size_t size);
/* All noted threads as saved_cmdlines text ("pid comm" lines); returns the length. */
USERTP_HIDDEN size_t usertp__comm_lines(char *buf, size_t size);

/* Called by the registry for every event that appears, so that listeners pick it up. */
USERTP_HIDDEN void usertp__listeners_event_added_locked(struct usertp__event_node *node);
/* Called when an event goes: its files are disabled and freed by their owners. */
USERTP_HIDDEN void usertp__listeners_event_removed_locked(struct usertp__event_node *node);

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

/*
 * The writer's thread id, cached per thread (reset in a forked child) in initial-exec TLS,
 * read inline: one load on the hot path.
 */
extern __thread int usertp__tid __attribute__((tls_model("initial-exec"))) USERTP_HIDDEN;
USERTP_HIDDEN int usertp__gettid_slow(void);

static inline int usertp__gettid(void)
{
	int tid = usertp__tid;

	return usertp_likely(tid) ? tid : usertp__gettid_slow();
}

/* Does the calling thread pass the pid filter of @file (none: yes)?  For the reserve heads. */
static inline bool usertp__event_file_pid_passes(const struct usertp_event_file *file)
{
	const struct usertp__pid_filter *pids;

	usertp__gettid(); /* (a thread's first event may list it: before its filter is read) */
	pids = __atomic_load_n(&file->pids, __ATOMIC_ACQUIRE);
	return !pids || usertp__pid_filter_passes(pids);
}

/*
 * The common header of a record of @file (type, flags, preempt_count and pid) as the 8 bytes
 * one store writes, and that store.
 */
static inline uint64_t usertp__entry_word(const struct usertp_event_file *file)
{
	struct usertp_trace_entry ent = { (unsigned short)file->id, 0, 0, usertp__gettid() };
	uint64_t word;

	USERTP_STATIC_ASSERT(sizeof(ent) == 8, "the common header is 8 bytes");
	memcpy(&word, &ent, 8);
	return word;
}

static inline void *usertp__entry_fill(const struct usertp_event_file *file, void *entry)
{
	uint64_t word = usertp__entry_word(file);

	memcpy(entry, &word, 8);
	return entry;
}

/* write(2) all of @buf, through EINTR and short writes; 0 or an errno (async-signal-safe). */
USERTP_HIDDEN void usertp__tid_reset(void);

#endif /* USERTP_INTERNAL_H */
