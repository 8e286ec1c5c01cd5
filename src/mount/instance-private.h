/* SPDX-License-Identifier: MIT */
/*
 * instance-private.h - inside one tracefs instance of usertp mount (instance.h): its state,
 * shared by the files it is cut into along its parts:
 *
 *	instance.c		its life, and the pump that reads its session
 *	instance-rules.c	set_event and the enable files, filters and error_log, the pid
 *				lists, options, triggers, tracing_on
 *	instance-buffer.c	the records held per CPU: trace, trace_pipe, trace_pipe_raw,
 *				buffer sizes, per-CPU stats, trace_marker
 *	instance-comms.c	thread names and tgids: saved_cmdlines, saved_tgids
 *
 * Two locks: `apply` is held while the session is called (the pump reading it, a setting
 * waiting for the programs), `lock` guards what the files read (the rules, tracing_on, the
 * records, thread names) and is never held across a call to the session.  Order: apply, then
 * lock.
 */
#ifndef USERTP_INSTANCE_PRIVATE_H
#define USERTP_INSTANCE_PRIVATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <usertp/consumer.h>

#include "filter.h"
#include "instance.h"
#include "tsc2nsec.h"
#include "pid-list.h"

/* A session's pages being written are looked at this often (usertp_session_next()). */
#define PUMP_POLL_MS 10
/* A trace_pipe read waiting for records asks whether it was interrupted this often. */
#define PIPE_WAIT_MS 100
/* The kernel's default buffer_size_kb (1408 asked, 1410 read back). */
#define DEFAULT_BUFFER_KB 1410
/* error_log keeps the last 8 errors, as the kernel's. */
#define ERROR_LOG_MAX 8
#define SYSTEM_FILTER_ERROR "Couldn't find or set field in one of a subsystem's events"

/* The options (options/, trace_options), in trace_options's order, and their defaults. */
enum option {
	OPT_RECORD_TGID,
	OPT_OVERWRITE,
	OPT_IRQ_INFO,
	OPT_MARKERS,
	OPT_EVENT_FORK,
	OPT_PAUSE_ON_TRACE,
	OPT_FUNCTION_TRACE,
	OPT_TRACE_PRINTK, /* the top level's alone (last: the others' lists end before it) */
	NR_OPTIONS
};
/* Their names and defaults (instance-rules.c). */
struct usertp__instance_option {
	const char *name;
	bool initial;
	bool top_only; /* not in instances/NAME, as the kernel's global-only options */
};
extern const struct usertp__instance_option usertp__instance_options[NR_OPTIONS];

/* One record held, with its text after the event's name. */
struct held {
	struct held *prev, *next;
	uint64_t ts;
	pid_t tid, pid; /* the thread, and its program (its tgid) */
	unsigned int cpu, bytes;
	const char *flags; /* irq-info's five; NULL: "....." (static) */
	void *raw;	   /* the record, common_type the mount's id (trace_pipe_raw), or NULL */
	unsigned int raw_size;
	uint16_t sid;	   /* its event's id in the session (for its text) */
	/*
	 * "name: payload": made when it is first read (usertp__inst_held_text()), from raw and
	 * the session's format; set at once where there is no raw (a marker, no format)
	 */
	char *text;
};

/* The records of one CPU, oldest first, and its counts (per_cpu/cpuN/stats). */
struct cpu_records {
	struct held *head, *tail;
	uint64_t kb;	       /* buffer_size_kb */
	uint64_t bytes, entries;
	uint64_t overrun;      /* overwritten (overwrite on): in entries-written */
	uint64_t dropped;      /* not held: the buffer full (overwrite off), or a program's full */
	uint64_t lost_pending; /* overwritten or lost since trace_pipe last gave a record */
	uint64_t read;	       /* given by trace_pipe */
};

struct comm_entry {
	pid_t tid, tgid; /* (tgid 0: not known) */
	char comm[17];	 /* ("": not known) */
};

/* What an event's filter file reads, when it is not "none". */
struct filter_file {
	char *system, *name;
	char *text; /* the filter and "\n", or the refused text, its caret and the message */
};

/* One trigger of an event (docs/tracefs.md §5). */
struct trigger {
	struct usertp__tfs_trigger t; /* (t.filter unused: filter_text) */
	char *filter_text;
	struct usertp__filter *filter;
};


/*
 * An event in soft mode (it has triggers, or is the target of one): armed in the programs
 * whether enabled or not, its records kept as `state` says.
 */
struct soft_event {
	char *system, *name;
	struct trigger *triggers; /* in the order written (the file lists the newest first) */
	size_t nr_triggers;
	unsigned int targeted;    /* enable_event/disable_event triggers aiming at it */
	int state;		  /* 1: soft-enabled, -1: soft-disabled (a trigger fired), 0: neither */
};

struct usertp__instance {
	char *name;
	pthread_mutex_t apply, lock;
	/*
	 * The session's libtraceevent handle: every call that may parse a format into it (the
	 * pump's, the settings') and the making of a held record's text, which reads it, take
	 * this, alone or inside lock, never around lock.
	 */
	pthread_mutex_t tep_lock;
	pthread_cond_t more; /* records came, or tracing changed */
	struct usertp_session *session;
	enum usertp__live_clock clock; /* trace_clock: what the session's records are read on */
	pthread_t pump;
	atomic_bool stop;
	atomic_bool pumping; /* the pump holds apply (not a setting) */

	/* under lock */
	struct usertp__spec *rules;
	size_t nr_rules;
	bool tracing;
	unsigned int paused; /* `trace` files open with pause-on-trace (under apply) */
	bool option[NR_OPTIONS];
	struct usertp__pid_list pids[2]; /* set_event_pid, set_event_notrace_pid */
	unsigned int nr_cpus;
	struct cpu_records *cpus;
	struct comm_entry *comms; /* open addressing by tid; 0: free */
	size_t comms_cap, nr_comms;
	/*
	 * Names the session told while tep_lock was held (its calls may learn them), queued here
	 * under comm_lock and put into comms under lock by usertp__inst_comms_take(): never lock
	 * inside tep_lock, since readers make a record's text (tep_lock) inside lock.
	 */
	pthread_mutex_t comm_lock;
	struct comm_entry *told;
	size_t nr_told, told_cap;
	void (*notify)(void *handle);
	unsigned int (*event_id)(const char *system, const char *name);
	/* the pump's: events each program dropped on each CPU, as last counted */
	uint64_t (*seen_dropped)[USERTP__INSTANCE_CPUS];
	unsigned int nr_seen;
	/* poll() handles and parked reads (fs-loop.c), each given to notify once */
	void **pollers;
	size_t nr_pollers, cap_pollers;
	struct filter_file *filters;
	size_t nr_filters;
	struct soft_event *soft; /* (under lock; changed under apply too) */
	size_t nr_soft;
	char *error_log[ERROR_LOG_MAX]; /* oldest first */
	size_t nr_errors;
};

/* --- what the parts give each other ------------------------------------------------------- */

/*
 * Is @rec to be held?  Its event's triggers run first.  Only records the instance armed for
 * its triggers are left out here (their event not kept, or tracing off while triggers keep
 * the programs recording): others were recorded because the instance asked for them.
 */
bool usertp__inst_keep_record(struct usertp__instance *in, const struct usertp_record *rec);
/* What a trigger holds. */
void usertp__inst_trigger_free(struct trigger *tr);
/* Wake what waits on the records (under lock). */
void usertp__inst_wake(struct usertp__instance *in);
/*
 * What the programs could not record (their buffers full: the pump was behind), from their
 * counters, per CPU: dropped, and said by trace_pipe as lost (in the pump, under apply).
 * Counted here rather than from the records that follow a loss: a loss at the end has none.
 * Return: whether there were any.
 */
bool usertp__inst_count_dropped(struct usertp__instance *in);
/* @rec as held, its text made with the session's formats (in the pump, under apply). */
struct held *usertp__inst_held_new(struct usertp__instance *in, const struct usertp_record *rec);
/* Put the names the session told since into the table (under lock). */
void usertp__inst_comms_take(struct usertp__instance *in);
/* The text of @h, made now if it is not yet (under lock; NULL never: "" without memory). */
const char *usertp__inst_held_text(struct usertp__instance *in, struct held *h);
/* Hold @h (under lock): after the records of its CPU that are not newer. */
void usertp__inst_hold(struct usertp__instance *in, struct held *h);
/* The name of thread @tid as the kernel prints it: "<idle>" for 0, "<...>" if unknown. */
const char *usertp__inst_comm_get(const struct usertp__instance *in, pid_t tid);
/* Thread @tid of process @tgid has a record (under lock): its tgid, and its name if not known. */
void usertp__inst_thread_put(struct usertp__instance *in, pid_t tid, pid_t tgid);
/* A thread's name as the session learns it (its on_comm callback; @arg: the instance). */
void usertp__inst_on_comm(pid_t tid, const char *comm, void *arg);

#endif /* USERTP_INSTANCE_PRIVATE_H */
