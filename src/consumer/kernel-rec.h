/* SPDX-License-Identifier: MIT */
/*
 * kernel-rec.h - private to libusertp-consumer: the kernel's events of a session, in a
 * tracefs instance of its own (kernel-rec.c; session-kernel.c drives it).
 *
 * The kernel's events of a recording (usertp record's, or a session's) are recorded by the
 * kernel itself in a tracefs instance of the recording's own (libtracefs), so that the global
 * tracefs settings, and other users of tracefs, are never touched.
 *
 * The instance is "usertp-record-PID" (a session's: "usertp-record-PID-N"), made at the start
 * with the recording's trace clock (mono, or x86-tsc: the clock of the programs' records) and
 * buffer size, its events enabled through its set_event (any of the kernel's forms) and its
 * filters written by event (the kernel applies them), the formats of its events taken.  For
 * a file, while it runs, each CPU's full pages are spliced from trace_pipe_raw into a spool
 * file of the recording's spool directory (so that --recover of a recorder killed has them);
 * at the end the last pages are flushed, its counts taken, and the instance removed.  The
 * spools are then one more source of the merge (dat-merge.h): the kernel's records, ids and
 * formats as they are.  For a reading session, its pages are read as they come, whole or not.
 */
#ifndef USERTP_CONSUMER_KERNEL_REC_H
#define USERTP_CONSUMER_KERNEL_REC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dat-merge.h"
#include "private/usertp-consumer-private.h"

#define USERTP__KERNEL_INSTANCE_PREFIX "usertp-record-"

struct usertp__kernel_rec;

/* Which threads the kernel records: set_event_pid, set_event_notrace_pid, event-fork. */
struct usertp__kernel_pids {
	const int *pids, *notrace; /* none: every thread */
	size_t nr_pids, nr_notrace;
	bool event_fork;
};

/*
 * Start recording @specs (with @filters, NULL entries for none) in a new instance: @kb KiB per
 * CPU, @clock "mono" or "x86-tsc", the threads @pids says, spool files kernel.cpuC in the
 * recording's spool directory @spool_dir (spool.h).  Return: 0 with *@out, or -1 with a message in @err.
 */
int usertp__kernel_start(struct usertp__kernel_rec **out, const char *const *specs,
			 const char *const *filters, unsigned int nr_specs, unsigned long kb,
			 const char *clock, const struct usertp__kernel_pids *pids,
			 const char *spool_dir, char *err, size_t errlen);

/* Move the pages the kernel has filled to the spools (never waits).  Return: 0 or -errno. */
int usertp__kernel_drain(struct usertp__kernel_rec *k);

/*
 * Stop: the last pages and the counts.  *@src describes the spools and formats for the
 * merge (valid until usertp__kernel_free()); @fired and @overrun (per CPU, up to @nr_cpus) get
 * the kernel's counts added.
 */
void usertp__kernel_stop(struct usertp__kernel_rec *k, struct usertp__merge_source *src,
			 uint64_t *fired, uint64_t *overrun, unsigned int nr_cpus);

/* The formats of the events recorded (taken at the start) and the CPUs: kept in @k. */
void usertp__kernel_formats(const struct usertp__kernel_rec *k,
			    const struct usertp__merge_event **events, unsigned int *nr_events,
			    unsigned int *nr_cpus);

/*
 * What a trace.dat file with kernel events holds besides them, as trace-cmd's: the "pid
 * comm" lines of saved_cmdlines, /proc/kallsyms (kernel addresses to names) and printk_formats
 * (the formats of trace_printk()), each NULL when it cannot be read.  Kept in @k.
 */
struct usertp__kernel_texts {
	const char *cmdlines, *kallsyms, *printk_formats;
	size_t kallsyms_len, printk_formats_len;
};
void usertp__kernel_texts(struct usertp__kernel_rec *k, struct usertp__kernel_texts *t);

/*
 * A reading session's kernel events: started by usertp__kernel_start() with no @spool_dir,
 * its pages read as they come.
 *
 * usertp__kernel_set_events(): enable @specs (each may be "!SPEC": disable), after emptying
 * the list with @replace; the formats of the events enabled now are added to those
 * usertp__kernel_formats() gives.  Return: 0, -ENOENT (a spec selects no event of the
 * kernel: @err says which, with close matches) or another negative errno (@err says it).
 */
int usertp__kernel_set_events(struct usertp__kernel_rec *k, const char *const *specs,
			      unsigned int nr_specs, bool replace, char *err, size_t errlen);
/* The filter of the enabled events of @spec (NULL: none).  Return: 0 or -EINVAL (@err: the
 * kernel's message, its caret under the error). */
int usertp__kernel_set_filter(struct usertp__kernel_rec *k, const char *spec, const char *filter,
			      char *err, size_t errlen);
/* The instance's set_event_pid, set_event_notrace_pid and event-fork.  Return: 0 or -errno. */
int usertp__kernel_set_pids(struct usertp__kernel_rec *k, const struct usertp__kernel_pids *pids,
			    char *err, size_t errlen);
int usertp__kernel_set_tracing(struct usertp__kernel_rec *k, bool on);
/*
 * The next page of @cpu into @page, full or not (never waits).  Return: 1, 0 when there is
 * none now, or a negative errno.
 */
int usertp__kernel_read_page(struct usertp__kernel_rec *k, unsigned int cpu,
			     unsigned char page[4096]);
/* What the kernel lost on @cpu so far: dropped (its buffer full) and overwritten. */
void usertp__kernel_lost(struct usertp__kernel_rec *k, unsigned int cpu, uint64_t *dropped,
			 uint64_t *overrun);
/* The instance's name, under tracefs's instances/. */
const char *usertp__kernel_name(const struct usertp__kernel_rec *k);

/* Everything freed, the spools closed, the instance removed if it is still there. */
void usertp__kernel_free(struct usertp__kernel_rec *k);

#endif
