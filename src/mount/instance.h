/* SPDX-License-Identifier: MIT */
/*
 * instance.h - one tracefs instance of usertp mount (instance.c): the top level or one of
 * instances/NAME.  It is a consumer session recording every program of the user, with the
 * instance's settings (the events set_event and the enable files select, tracing_on), and
 * the records it read from the programs, held per CPU up to buffer_size_kb as the kernel's
 * buffer holds them: `trace` shows them, `trace_pipe` consumes them.
 *
 * A thread of the instance reads the session (its pump); the settings calls wait for the
 * programs to apply them, and never hold what the files read: reading a file never waits on
 * a program.  Thread-safe.
 */
#ifndef USERTP_INSTANCE_H
#define USERTP_INSTANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tracefs-text.h"

struct usertp__instance;

/* The most CPUs whose losses an instance counts apart (more are counted with the last). */
#define USERTP__INSTANCE_CPUS 512

/*
 * A new instance (@name NULL: the top level), recording every program of the user.  When a
 * file blocked in poll() may read, @notify is called with what usertp__instance_poll() was
 * given (libfuse's poll handle), once.  @event_id gives the mount's id of an event (its
 * events/SYS/EV/id), for trace_pipe_raw's records.  Return: 0, or a negative errno with the
 * reason in @err.
 */
int usertp__instance_new(const char *name, void (*notify)(void *handle),
			 unsigned int (*event_id)(const char *system, const char *name),
			 struct usertp__instance **out, char *err, size_t errlen);
void usertp__instance_free(struct usertp__instance *in);

/*
 * Take in what the programs committed until now, unless a setting is being applied (then
 * the instance's thread does, within milliseconds): a file opened after a program recorded
 * shows it, and the triggers it fired, as the kernel's would.  Never waits on a program.
 */
void usertp__instance_sync(struct usertp__instance *in);

/* --- events: what set_event and the enable files select ----------------------------------- */

/* Does the instance record @system:@name (or arm it for a trigger)? */
bool usertp__instance_enabled(struct usertp__instance *in, const char *system, const char *name);
/* events/@system/@name/enable: "0", "1", and in soft mode (triggers) "0*", "1*". */
const char *usertp__instance_enable_text(struct usertp__instance *in, const char *system,
					 const char *name);
/*
 * Enable (or, with spec->disable, disable) what @spec selects, after disabling everything
 * when @reset; @spec NULL: only that.  Specs are kept as rules, in order, the last that
 * selects an event deciding: an event that a program starting later defines is recorded
 * when they select it.  The caller has checked that @spec selects an event defined now.
 * Return: 0, or a negative errno (nothing changes).
 */
int usertp__instance_set_events(struct usertp__instance *in, const struct usertp__spec *spec,
				bool reset);

/* --- filters (docs/tracefs.md §4) and error_log (§13) ----------------------------------------- */

/* The text of events/@system/@name/filter: "none", the filter, or what refused it (to free()). */
char *usertp__instance_filter_file(struct usertp__instance *in, const char *system, const char *name);
/*
 * A write of @text (@len bytes) to events/@system/@name/filter, the event's format text being
 * @format: the filter, compiled against it, for the event in every program ("0" removes
 * it).  A refused one leaves the event without a filter, the filter file saying why, and an
 * entry in error_log.  Return: 0, or the kernel's errno for it (negative).
 */
int usertp__instance_set_filter(struct usertp__instance *in, const char *system, const char *name,
				const char *format, const char *text, size_t len);
/* An event of a system, with its format text, for usertp__instance_set_system_filter(). */
struct usertp__instance_event {
	const char *name, *format;
};
/*
 * A write to events/@system/filter: the filter of each of @events (all of the system's) where
 * it compiles; the others lose theirs (one error_log entry each, up to 8).  Return: 0, or
 * -EINVAL (4096 bytes or more), -ENOMEM.
 */
int usertp__instance_set_system_filter(struct usertp__instance *in, const char *system,
				       const struct usertp__instance_event *events, size_t nr,
				       const char *text, size_t len);
/* error_log's text (to free()); and its clearing (O_TRUNC). */
char *usertp__instance_error_log(struct usertp__instance *in);
void usertp__instance_clear_error_log(struct usertp__instance *in);

/* --- set_event_pid, set_event_notrace_pid (§12) ------------------------------------------ */

/*
 * The list as the file reads (a pid a line; to free()); with event-fork, the programs are
 * asked (the caller holds no lock that the pump may want: fs.c's).
 */
char *usertp__instance_pids_text(struct usertp__instance *in, bool notrace);
/*
 * A write to the file: every pid of @text added (@clear: to an empty list, as O_TRUNC).
 * Return: 0, or -EINVAL / -EPERM (a bad token: nothing added), -ENOMEM.
 */
int usertp__instance_add_pids(struct usertp__instance *in, bool notrace, const char *text,
			      size_t len, bool clear);

/* --- options/ and trace_options (§11) ------------------------------------------------------ */

/* @in's options, in trace_options's order: NULL after the last. */
const char *usertp__instance_option_name(const struct usertp__instance *in, unsigned int index);
/* Option @name's value: 0, 1, or -EINVAL (no such option). */
int usertp__instance_option(struct usertp__instance *in, const char *name);
/* Set it.  Return: 0, -EINVAL (no such option), or the session's errno. */
int usertp__instance_set_option(struct usertp__instance *in, const char *name, bool on);

/* --- triggers (§5) ------------------------------------------------------------------------ */

/* events/@system/@name/trigger: the help text, or the triggers, newest first (to free()). */
char *usertp__instance_trigger_file(struct usertp__instance *in, const char *system, const char *name);
/*
 * A trigger written to @system:@name (@format: its format text, for the "if" filter), its
 * target (enable_event, disable_event) checked by the caller.  The event and the target are
 * armed in the programs (soft mode: their enable files read "0*" or "1*"); the triggers run
 * in the mount on each record of the event: traceon and traceoff set tracing_on,
 * enable_event and disable_event keep or leave out the target's records from then on.
 * Return: 0, -EEXIST (traceon or traceoff there already, or a trigger on that target),
 * -EINVAL (a bad filter: an error_log entry says why), -ENOMEM.
 */
int usertp__instance_set_trigger(struct usertp__instance *in, const char *system, const char *name,
				 const char *format, const struct usertp__tfs_trigger *t);

/* --- tracing_on --------------------------------------------------------------------------- */

bool usertp__instance_tracing(struct usertp__instance *in);
int usertp__instance_set_tracing(struct usertp__instance *in, bool on);

/*
 * `trace` opened for reading: with pause-on-trace, recording stops until the last such file
 * is closed (usertp__instance_resume()); tracing_on reads as it was.  Return: whether it
 * paused (then resume it).
 */
bool usertp__instance_pause(struct usertp__instance *in);
void usertp__instance_resume(struct usertp__instance *in);

/* trace_clock's text: the clocks the instance can print, the one it prints in brackets. */
void usertp__instance_clock_text(struct usertp__instance *in, FILE *out);
/*
 * Print the records on clock @name from now (what is held goes, as the kernel's clears its
 * buffer).  Return: 0 or -EINVAL (not a clock it can print).
 */
int usertp__instance_set_clock(struct usertp__instance *in, const char *name);

/* --- the records -------------------------------------------------------------------------- */

/*
 * `trace`: the header and every record held, in timestamp order; @cpu >= 0: of that CPU
 * (per_cpu/cpuN/trace).  Return: 0 or -ENOMEM.
 */
int usertp__instance_trace_text(struct usertp__instance *in, int cpu, char **text, size_t *len);
/* `echo > trace`: the records go, and the counts start again (@cpu >= 0: of that CPU). */
void usertp__instance_clear(struct usertp__instance *in, int cpu);

/* One open trace_pipe: the text of a record that did not fit in a read. */
struct usertp__pipe_reader {
	int cpu; /* per_cpu/cpuN/trace_pipe: N; trace_pipe: -1 */
	char *pending;
	size_t len, off;
	bool gave; /* it returned data once (then tracing off and nothing held: end of file) */
};
void usertp__pipe_reader_init(struct usertp__pipe_reader *r, int cpu);

/*
 * A read of trace_pipe: consume records (the oldest of all CPUs first) into @buf, at least
 * one, waiting for one unless @nonblock; @interrupted is asked every 100 ms while waiting.
 * Return: the bytes, 0 (end of file), -EAGAIN (@nonblock and nothing held), -EINTR.
 */
ssize_t usertp__instance_pipe_read(struct usertp__instance *in, struct usertp__pipe_reader *r,
				   char *buf, size_t size, bool nonblock, bool (*interrupted)(void));
void usertp__pipe_reader_free(struct usertp__pipe_reader *r);
/*
 * A read of per_cpu/cpuN/trace_pipe_raw (@r->cpu): the oldest records of the CPU as whole
 * pages of the kernel's format (a page a time, given across reads if @size is smaller),
 * common_type the mount's id of each event, lost events marked as the kernel marks them;
 * waits for records as usertp__instance_pipe_read().  Return: the bytes, -EAGAIN, -EINTR.
 */
ssize_t usertp__instance_raw_read(struct usertp__instance *in, struct usertp__pipe_reader *r,
				  char *buf, size_t size, bool nonblock, bool (*interrupted)(void));
/*
 * poll() on trace_pipe: whether it can be read now; if not and @handle is not NULL, @handle
 * is kept and given to the instance's notify() when it can.
 */
bool usertp__instance_poll(struct usertp__instance *in, const struct usertp__pipe_reader *r,
			   void *handle);
/*
 * A read of trace_pipe or trace_pipe_raw that would wait (no record for it, and not the end
 * of a trace_pipe): @handle is kept, given to notify() once when records come, tracing
 * changes or the instance goes, and true returned.  False: it would not wait (or no memory).
 */
bool usertp__instance_pipe_park(struct usertp__instance *in, const struct usertp__pipe_reader *r,
				void *handle);

/* --- buffer_size_kb (§9), per_cpu/cpuN/stats, trace_marker (§15) --------------------------- */

#define USERTP__INSTANCE_MAX_KB (1ull << 24) /* 16 GiB a CPU: more is refused (EINVAL) */
#define USERTP__INSTANCE_MARKER_MAX 4054     /* a trace_marker write takes this much at most */
#define USERTP__INSTANCE_RAW_MARKER_MAX 4064 /* a trace_marker_raw write: more is refused */

unsigned int usertp__instance_nr_cpus(const struct usertp__instance *in);
/*
 * buffer_size_kb (@cpu >= 0: per_cpu/cpuN's; "X" where the CPUs differ), or with @total
 * buffer_total_size_kb (to free()).
 */
char *usertp__instance_buffer_kb_text(struct usertp__instance *in, int cpu, bool total);
/*
 * A size written (KiB, rounded up to whole pages as the kernel's): every CPU's, or @cpu's.
 * Smaller, the oldest records go (counted as overwritten).  Return: 0, -EINVAL (0 or above
 * USERTP__INSTANCE_MAX_KB).
 */
int usertp__instance_set_buffer_kb(struct usertp__instance *in, int cpu, uint64_t kb);
/* per_cpu/cpuN/stats (to free()), or NULL. */
char *usertp__instance_stats_text(struct usertp__instance *in, unsigned int cpu);
/*
 * A write to trace_marker by thread @tid: a tracing_mark_write record held now.
 * Return: the bytes taken (at most USERTP__INSTANCE_MARKER_MAX), -EBADF (tracing off),
 * -EINVAL (options/markers off).
 */
ssize_t usertp__instance_mark(struct usertp__instance *in, pid_t tid, const char *buf, size_t len);
/*
 * A write to trace_marker_raw by thread @tid: an id (4 bytes, the host's order) and data, an
 * ftrace:raw_data record held now.  Return: @len, -EBADF (tracing off), -EINVAL (fewer than
 * 4 bytes, more than USERTP__INSTANCE_RAW_MARKER_MAX, or options/markers off).
 */
ssize_t usertp__instance_mark_raw(struct usertp__instance *in, pid_t tid, const char *buf,
				  size_t len);

/* saved_cmdlines ("TID COMM" lines), or with @tgids saved_tgids ("TID TGID"); to free(). */
char *usertp__instance_saved(struct usertp__instance *in, bool tgids);
/* printk_formats: the usertp_printk() formats of the programs it recorded (to free()). */
char *usertp__instance_printk_formats(struct usertp__instance *in);

#endif
