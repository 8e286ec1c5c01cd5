/* SPDX-License-Identifier: MIT */
/*
 * usertp/consumer.h - libusertp-consumer: record and read the events of other programs that
 * use libusertp, in private sessions whose settings change while the programs run.
 *
 *	pkg-config --cflags --libs usertp-consumer	(CMake: usertp::usertp-consumer)
 *
 * A session is what one tracefs instance is to the kernel: its programs (targets), its buffers
 * (a size per CPU and program, producer/consumer or overwrite mode, a clock), tracing on or
 * off, and the set of events it records.  Each program records a session's events into
 * buffers of that session alone, in shared memory the session maps; two sessions on one
 * program never see or change each other's events or settings.  The settings change while
 * the programs run: usertp_session_enable() and the others return once every program of the
 * session applies the change (docs/consumer-design.md says how), and a program that joins or
 * forks later starts with the session's settings of that moment.
 *
 * The records of all the session's programs are read merged in timestamp order, with
 * usertp_session_next(), or written to a trace.dat file (usertp_session_write_dat()).
 *
 * A session records the kernel's events too: a spec whose system is one of the
 * kernel's (sched:sched_process_fork, irq) goes to a tracefs instance of the session's own,
 * made at the first such spec, with the session's clock, buffer size, pid filter and tracing
 * on/off, and removed with the session; other users of tracefs (its global files, or their
 * own instances) never change it.  Its records come merged with the programs', pid 0 (the
 * kernel's), tid the task's; or they go into the session's file with the programs'
 * (usertp_session_write_dat() before the first such spec).  It needs tracefs: root, or
 * tracefs's group.
 *
 * One thread at a time per session.  Int-returning calls return 0 (or a count) on success and
 * a negative errno on failure; usertp_session_error() then says what went wrong, in words.
 */
#ifndef USERTP_CONSUMER_H
#define USERTP_CONSUMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define USERTP_CONSUMER_EXPORT __attribute__((visibility("default")))

struct usertp_session;
struct tep_handle;
struct tep_event;

/*
 * The structures a caller allocates begin with their size, so that a later version can grow
 * them without breaking programs built against this one: set struct_size to their sizeof,
 * once (USERTP_STRUCT_INIT(usertp_record) does), and keep it.  The library reads and writes
 * no byte past it, and refuses one smaller than this version's first (-EINVAL).
 */
#ifdef __cplusplus
#define USERTP_STRUCT_INIT(type) usertp_struct_init<struct type>()
#else
#define USERTP_STRUCT_INIT(type) { .struct_size = sizeof(struct type) }
#endif

/* Settings fixed for a session's life (zeroed beyond struct_size: the defaults). */
struct usertp_session_options {
	size_t struct_size;
	unsigned long buffer_kb; /* per CPU and program, 1..4194304 KiB; 0: 1408 (the kernel's) */
	bool overwrite;		 /* flight recorder: the oldest pages go (default: new events are
				  * dropped, and counted, while the buffer is full) */
	const char *clock;	 /* "mono" (NULL: CLOCK_MONOTONIC, the kernel's mono) or "x86-tsc" */
	bool tracing_off;	 /* start with tracing off (usertp_session_set_tracing()) */
};

/**
 * usertp_session_new() - a new session, with no programs and no events yet.
 * @opts: NULL for the defaults.
 * Return: 0, -EINVAL (an unknown clock), -ERANGE (a size out of range), -ENOMEM (buffers of
 * that size would take more than half the memory available).
 */
USERTP_CONSUMER_EXPORT int usertp_session_new(struct usertp_session **out,
					      const struct usertp_session_options *opts);
/* End the session: its programs stop recording for it and go on running.  NULL: nothing. */
USERTP_CONSUMER_EXPORT void usertp_session_free(struct usertp_session *s);

/* What the last failed call of @s said went wrong (empty if nothing). */
USERTP_CONSUMER_EXPORT const char *usertp_session_error(const struct usertp_session *s);
/*
 * Where the session reports what happens to its programs besides the calls' errors (a program
 * whose buffers stop holding together, one that stalls): @fn gets one line (no newline).
 * Default: nowhere.
 */
USERTP_CONSUMER_EXPORT void usertp_session_set_log(struct usertp_session *s,
						   void (*fn)(const char *line, void *arg),
						   void *arg);

/* --- targets ------------------------------------------------------------------------------ */

/**
 * usertp_session_attach_pid() - add the running program @pid.
 * Return: 0, -ESRCH (no such process), -ENOENT (not a program using libusertp, or one whose
 * control endpoint is off), -EACCES (another user's program: only root may), -EBUSY (it
 * serves as many consumers as it can), -EALREADY (in the session already), -ETIMEDOUT (it
 * did not answer), -EPROTO (it answered nonsense).
 */
USERTP_CONSUMER_EXPORT int usertp_session_attach_pid(struct usertp_session *s, pid_t pid);
/**
 * usertp_session_attach_all() - every program of this user: those running now, and those
 * that start later (they join before their main()).  Several sessions may do this at once
 * (a program that starts joins up to 16), each with its own settings and buffers.  As
 * root, every user's programs (others' that start join through the system directory,
 * /run/usertp or $USERTP_SYSTEM_DIR).
 * Return: 0, or the errno of the runtime directory (or, as root, of the system directory).
 */
USERTP_CONSUMER_EXPORT int usertp_session_attach_all(struct usertp_session *s);
/**
 * usertp_session_run() - start @argv (a command searched in PATH) as a program of the
 * session: it joins before its main(), as do the programs it execs and the children it forks.
 * When an event that the command's executable or a library it links defines does not take
 * the session's filter, the command is stopped (SIGKILL) before its main() runs, as trace-cmd
 * refuses such a filter before anything runs: usertp_session_process() then returns
 * -ECANCELED.  (Events of libraries loaded later with dlopen(), and of the other programs it
 * runs, are left out instead, each said in the log.)
 * The caller waits for it (waitpid).  Return: its pid, or a negative errno.
 */
USERTP_CONSUMER_EXPORT pid_t usertp_session_run(struct usertp_session *s, char *const argv[]);
/**
 * usertp_session_run_only() - usertp_session_run(), and the session records the command
 * alone: its pid filter becomes the command's pid, with @children the threads and processes
 * it creates too (event-fork), for its programs and the kernel's events, as `trace-cmd record
 * -F` (and -c) do.  The command starts at the session's next usertp_session_process() (or
 * usertp_session_next()), so that the settings given meanwhile (the kernel's events enabled,
 * filters) apply from its first instruction, and nothing of other processes is recorded.
 * (Freed before, the session ends the command unstarted: it exits 127.)
 * Return: its pid, or a negative errno.
 */
USERTP_CONSUMER_EXPORT pid_t usertp_session_run_only(struct usertp_session *s, char *const argv[],
						     bool children);

/**
 * usertp_session_run_also() - the command the next usertp_session_run() (or
 * usertp_session_run_only()) of @s starts joins @also as well, after @s, before its main():
 * a second session on the same command from its first event (a trigger's, say: usertp
 * record --snapshot-on).  @also takes its joins as any session does
 * (usertp_session_process()), and stops the command before its main() when a filter of
 * @also does not fit one of its events, as @s does (its usertp_session_process() then
 * returns -ECANCELED).  Return: 0, or -EINVAL (@also is @s).
 */
USERTP_CONSUMER_EXPORT int usertp_session_run_also(struct usertp_session *s,
						   struct usertp_session *also);

/**
 * usertp_session_detach_pid() - take program @pid out of the session: it stops recording for
 * the session at once (and frees those buffers), and goes on running; what it recorded until
 * then is still read.  A child it forks later is not added.
 * Return: 0, -ESRCH (not a program of the session).
 */
USERTP_CONSUMER_EXPORT int usertp_session_detach_pid(struct usertp_session *s, pid_t pid);

/* --- settings: all take effect in the running programs before the call returns ------------ */

/**
 * usertp_session_enable() - record the events @specs selects: a comma-separated list of
 * set_event specs (sys:event, sys:*, *:event, event, sys, globs such as sys:io_*).  They are
 * patterns: events that appear later (a library loaded, a program started) that match are
 * recorded too.  A spec of a kernel system is the kernel's (see above).
 * Return: 0, -EINVAL (not a spec), -ENOENT (the session has programs and none has a
 * matching event, or the kernel has none: nothing changes); for a kernel spec -EACCES (no
 * tracefs, or not ours to write).
 */
USERTP_CONSUMER_EXPORT int usertp_session_enable(struct usertp_session *s, const char *specs);
/*
 * usertp_session_set_specs() - the whole list of specs at once (as `echo SPECS > set_event`):
 * the session records what @specs selects from now on, and nothing else; NULL or "" records
 * nothing.  Events that stay selected are not interrupted.  Return: as enable; on an error
 * the list before stays, in every program.
 */
USERTP_CONSUMER_EXPORT int usertp_session_set_specs(struct usertp_session *s, const char *specs);
/* Stop recording what @specs selects (as `echo '!spec' >> set_event`).  Return: as enable. */
USERTP_CONSUMER_EXPORT int usertp_session_disable(struct usertp_session *s, const char *specs);
/* Tracing on or off (the kernel's tracing_on): off, events are neither recorded nor counted. */
USERTP_CONSUMER_EXPORT int usertp_session_set_tracing(struct usertp_session *s, bool on);
/**
 * usertp_session_set_filter() - the filter of the events @events selects (a spec such as
 * "jobs:job_done" or "jobs:*"), in the kernel's grammar (tracefs's events/SYS/EV/filter):
 * "id > 5 && worker ~ \"w*\"".  It runs in the programs, before a record is stored: what it
 * refuses leaves nothing in their buffers.  NULL or "0" removes it.  Live, as the settings
 * above; a program that comes later has it from its first record.
 * Return: 0, -EINVAL (not a spec), or the kernel's errno for the filter (-EINVAL, and its
 * parser's -ENOENT, -EPERM, -ESRCH) when a program refuses it: @err (may be NULL) then holds
 * the expression, a caret under the error and the kernel's message, and nothing changes.
 */
USERTP_CONSUMER_EXPORT int usertp_session_set_filter(struct usertp_session *s, const char *events,
						     const char *filter, char *err, size_t errlen);
/**
 * usertp_session_set_pid_filter() - record only the events of the threads in @pids (when
 * @nr_pids is not 0) and none of those in @notrace: tracefs's set_event_pid and
 * set_event_notrace_pid, in the programs, per session.  A pid is a thread id (common_pid), as
 * in the kernel.  With @event_fork (tracefs's option), threads and child processes that a
 * listed thread creates are listed too (in each program, from then on; a program that a
 * listed process starts through exec is listed when it joins), and listed threads that exit
 * are taken off.  Replaces the session's pid filter, live, as the settings above; both lists
 * empty: none.  usertp_list(1) -v shows each program's lists.
 * Return: 0, -EINVAL (a pid below 0 or above 2^30 - 1: nothing changes), -ENOMEM.
 */
USERTP_CONSUMER_EXPORT int usertp_session_set_pid_filter(struct usertp_session *s,
							 const pid_t *pids, size_t nr_pids,
							 const pid_t *notrace, size_t nr_notrace,
							 bool event_fork);
/* The session's event specs of the programs, in the order given ("!" before those disabled
 * after); the kernel's are in its instance's set_event. */
USERTP_CONSUMER_EXPORT unsigned int usertp_session_specs(const struct usertp_session *s,
							 const char *const **specs);

/* --- running ------------------------------------------------------------------------------ */

/*
 * A descriptor that is readable when the session has something to do (a program joined or
 * sent something, a buffer is a quarter full, where the kernel wakes trace_pipe_raw's readers
 * at half); then call usertp_session_process().  A single record does not make it readable:
 * usertp_session_next() looks at the pages being written every 10 ms.
 */
USERTP_CONSUMER_EXPORT int usertp_session_fd(const struct usertp_session *s);
/**
 * usertp_session_process() - wait up to @timeout_ms (0: not at all, -1: no limit) for
 * something to do, and do it: take programs that joined or forked, what they told, and the
 * pages their buffers filled (read ahead of usertp_session_next(), or written to the file).
 * Return: 0, -ECANCELED (once) when the command usertp_session_run() started was
 * stopped before its main() because one of its events does not take its filter (the log
 * says which, with the filter's error), or another negative errno.
 */
USERTP_CONSUMER_EXPORT int usertp_session_process(struct usertp_session *s, int timeout_ms);

/* One record of one program. */
struct usertp_record {
	size_t struct_size;
	pid_t pid;		/* the program (its process id); 0: the kernel's event */
	pid_t tid;		/* the thread (common_pid) */
	unsigned int cpu;
	uint64_t ts;		/* on the session's clock */
	int id;			/* the event's id in the session (tep_find_event()) */
	struct tep_event *event; /* NULL if the program never said what it is */
	const void *data;	/* the raw record (common header first), as tep_record's data */
	unsigned int size;
	uint64_t lost_before;	/* events this program lost on this CPU just before it */
};

/**
 * usertp_session_next() - the next record of the session in timestamp order, waiting up to
 * @timeout_ms for one (-1: no limit).  @rec's pointers stay valid until the next call.
 * Return: 1 with *rec filled, 0 when none came in time, -ENODATA when there is none and
 * none can come (every program attached by pid has ended, and nothing else can join),
 * -EINVAL (@rec's struct_size).
 */
USERTP_CONSUMER_EXPORT int usertp_session_next(struct usertp_session *s, struct usertp_record *rec,
					       int timeout_ms);
/* One page of one program's CPU, as the kernel's trace_pipe_raw gives them. */
struct usertp_page {
	size_t struct_size;
	pid_t pid;		/* the program */
	unsigned int cpu;
	const void *data;	/* 4096 bytes: u64 timestamp, u64 commit (the size of the entries,
				 * bit 31: events were lost before the page, bit 30: their count
				 * follows the entries), the entries; common_type of every record
				 * is the session's id, as usertp_session_tep() knows it */
	unsigned int size;	/* 4096 */
	uint64_t events;	/* records on it */
};

/**
 * usertp_session_next_page() - the next page of the session (the oldest of all programs and
 * CPUs by its timestamp), for writers of trace.dat: complete pages while the programs run,
 * and the last, partial one of a program once it has ended.  Waits up to @timeout_ms.  A
 * session is read with this or with usertp_session_next(), not both.  @page's data stays
 * valid until the next call.
 * Return: 1, 0 when none came in time, -ENODATA as usertp_session_next().
 */
USERTP_CONSUMER_EXPORT int usertp_session_next_page(struct usertp_session *s,
						    struct usertp_page *page, int timeout_ms);

/*
 * The libtraceevent handle that knows the formats of every event of every program of the
 * session, under the session's ids (the same event of several programs has one id).
 */
USERTP_CONSUMER_EXPORT struct tep_handle *usertp_session_tep(struct usertp_session *s);

/* --- programs and counts ------------------------------------------------------------------ */

struct usertp_program_info {
	size_t struct_size;
	pid_t pid;
	char comm[17];
	bool running;		/* still recording for the session */
	int forked_from;	/* pid of the program it was forked from, or 0 */
	unsigned int nr_cpus;	/* of its buffers */
};

/* Per CPU of one program: read + dropped + overrun = the events it fired for the session. */
struct usertp_cpu_stats {
	size_t struct_size;
	uint64_t read;		/* records taken from its buffers */
	uint64_t dropped;	/* not recorded: the buffer was full (or the record too big) */
	uint64_t overrun;	/* overwritten before they were read (overwrite mode) */
};

/* How many programs the session has had (running or not).  Index them from 0. */
USERTP_CONSUMER_EXPORT unsigned int usertp_session_nr_programs(const struct usertp_session *s);
USERTP_CONSUMER_EXPORT int usertp_session_program(const struct usertp_session *s, unsigned int index,
						  struct usertp_program_info *info);
/*
 * Program @index, and its counts on @cpu so far.  Return: 0, -ERANGE (no such program or CPU),
 * -EINVAL (struct_size).
 */
USERTP_CONSUMER_EXPORT int usertp_session_cpu_stats(const struct usertp_session *s,
						    unsigned int index, unsigned int cpu,
						    struct usertp_cpu_stats *stats);

/* The session at a glance (a status line). */
struct usertp_session_status {
	size_t struct_size;
	unsigned int programs;	/* it has had */
	unsigned int running;	/* still recording for it */
	unsigned int untraced;	/* joined, and could not be recorded (their buffers, a reply) */
	unsigned int refused;	/* events that came later and refused their filter: not recorded
				 * (each said in the session's log) */
	uint64_t events;	/* read from the buffers so far */
	uint64_t dropped;	/* dropped by the programs' buffers (and the kernel's) so far */
	uint64_t bytes;		/* file mode: written so far */
	int write_error;	/* file mode: the first failed write (a negative errno) or 0; the
				 * buffers are no longer read (what they drop is counted) */
};
/* Return: 0, -EINVAL (struct_size). */
USERTP_CONSUMER_EXPORT int usertp_session_status(const struct usertp_session *s,
						 struct usertp_session_status *st);

/**
 * usertp_session_spec_seen() - does @spec select an event that one of the session's programs
 * has told of (loaded libraries included)?  When not, @close (if not NULL) gets the closest
 * event names, separated by ", " (empty if none).
 * Return: 1, 0, or -EINVAL (not a spec).
 */
USERTP_CONSUMER_EXPORT int usertp_session_spec_seen(const struct usertp_session *s, const char *spec,
						    char *close, size_t size);

/* --- trace.dat ---------------------------------------------------------------------------- */

/**
 * usertp_session_write_dat() - write what the session records to the trace.dat file @path
 * (version 6 unless usertp_session_set_dat_format() says otherwise) instead of handing it to usertp_session_next(): call
 * it before the first target.  Pages go to disk as they fill, into a spool directory next to
 * @path (@path.spool-XXXXXX); usertp_session_finish() merges them into @path.
 * Return: 0, -EISDIR or -EINVAL (@path is not a regular file), or the errno of creating it.
 */
USERTP_CONSUMER_EXPORT int usertp_session_write_dat(struct usertp_session *s, const char *path);

/**
 * usertp_session_set_dat_format() - the format of the file usertp_session_finish() writes:
 * @version 6 (the default, which every reader of trace.dat opens) or 7 (what trace-cmd 3
 * writes), @compression NULL or "none", or "zstd" (version 7 only: the events and the texts
 * compressed, as `trace-cmd record` does by default).  Call it before
 * usertp_session_write_dat(); a recovery (usertp_dat_recover()) writes the same format.
 * Return: 0, -EINVAL (another version or compression, or zstd with version 6), -ENOTSUP (zstd:
 * libzstd.so.1 cannot be loaded), -EBUSY (after usertp_session_write_dat()).
 */
USERTP_CONSUMER_EXPORT int usertp_session_set_dat_format(struct usertp_session *s,
							 unsigned int version,
							 const char *compression);

/**
 * usertp_session_set_dat_date() - with @date, the file's times are printed as wall-clock
 * time, as with `trace-cmd record --date`: the file carries a DATE option, the difference
 * between CLOCK_REALTIME and its clock when usertp_session_write_dat() starts it, which
 * readers add.  Call it before usertp_session_write_dat().
 * Return: 0, -EINVAL (the session's clock is x86-tsc: ticks, not nanoseconds), -EBUSY (after
 * usertp_session_write_dat()).
 */
USERTP_CONSUMER_EXPORT int usertp_session_set_dat_date(struct usertp_session *s, bool date);

/**
 * usertp_session_set_dat_limit() - keep at most about @bytes (64 KiB or more; 0: no limit) of
 * each program's events per CPU, as trace-cmd record -m keeps its per-CPU files: the oldest
 * pages beyond it are given back to the file system as the recording goes on (the disk holds
 * about that much per program and CPU however long it runs), and their events are counted
 * lost in the file.  Any time; what was given back stays lost.
 * Return: 0, or -EINVAL (under 64 KiB).
 */
USERTP_CONSUMER_EXPORT int usertp_session_set_dat_limit(struct usertp_session *s,
							uint64_t bytes);

/*
 * What the file holds, summed over programs: in all, and per CPU in the caller's arrays
 * (cpu_events and cpu_lost, max_cpus entries each, either may be NULL; CPUs past max_cpus are
 * in the totals alone).
 */
struct usertp_dat_summary {
	size_t struct_size;
	unsigned int nr_cpus;	/* of the file */
	uint64_t events;	/* records in the file */
	uint64_t lost;		/* fired and not in the file */
	uint64_t *cpu_events, *cpu_lost; /* per CPU, given by the caller (or NULL) */
	unsigned int max_cpus;	/* their entries */
	uint64_t bytes;		/* of the file */
	unsigned int programs;	/* whose records it holds */
	char output[4096];	/* its path */
};

/**
 * usertp_session_finish() - stop recording (the programs go on), read what is left in every
 * buffer, and write the file.  @sum (may be NULL) gets its counts.
 * Return: 0, or the negative errno of writing it (usertp_session_error() says more).
 */
USERTP_CONSUMER_EXPORT int usertp_session_finish(struct usertp_session *s,
						 struct usertp_dat_summary *sum);

/**
 * usertp_session_rotate() - close the file being written and go on into @next: what the
 * session recorded since usertp_session_write_dat() or the last rotation (the complete pages
 * read so far) is written to the current file, complete and readable on its own, with its own
 * counts (its records plus those lost meanwhile are what the programs fired meanwhile); the
 * recording goes on into @next, which usertp_session_finish() (or the next rotation) writes.
 * @sum (may be NULL) gets the closed file's counts.  Not in overwrite mode, nor with the
 * kernel's events (-EOPNOTSUPP).
 * Return: 0, or a negative errno (usertp_session_error() says more): -EINVAL without a file,
 * @next not a file that can be written (nothing changed), or the errno of writing it.
 */
USERTP_CONSUMER_EXPORT int usertp_session_rotate(struct usertp_session *s, const char *next,
						 struct usertp_dat_summary *sum);

/**
 * usertp_session_snapshot() - a flight recorder's snapshot: what the session's programs hold
 * in their buffers now (overwrite mode: the latest pages), written to @path as the file
 * usertp_session_finish() would write if the recording ended now (its counts: every event
 * fired so far, in the file or lost); the recording goes on, and what a later snapshot or the
 * end writes may hold the same events again.  @sum (may be NULL) gets the file's counts.
 * Return: 0, or a negative errno (usertp_session_error() says more): -EINVAL without a file,
 * -EOPNOTSUPP not in overwrite mode or with the kernel's events, or the errno of writing it.
 */
USERTP_CONSUMER_EXPORT int usertp_session_snapshot(struct usertp_session *s, const char *path,
						   struct usertp_dat_summary *sum);

/**
 * usertp_dat_recover() - the spool directory @dir left by a session in file mode whose process
 * was killed, merged into a trace.dat: @output, or (NULL) the file it was writing.  The
 * directory is removed once the file is written.  Lost events are those the pages mark.
 * Return: 0, or a negative errno with the reason in @err.
 */
USERTP_CONSUMER_EXPORT int usertp_dat_recover(const char *dir, const char *output,
					      struct usertp_dat_summary *sum, char *err,
					      size_t errlen);

#ifdef __cplusplus
}

/* USERTP_STRUCT_INIT() in C++: the structure zeroed, its struct_size set. */
template <typename T> static inline T usertp_struct_init()
{
	T t{};

	t.struct_size = sizeof(T);
	return t;
}
#endif

#endif /* USERTP_CONSUMER_H */
