/* SPDX-License-Identifier: MIT */
/*
 * kernel-rec.h - private to the usertp command: the kernel's events of a `usertp record`,
 * recorded by the kernel itself in a tracefs instance of the recording's own (libtracefs), so
 * that the global tracefs settings, and other users of tracefs, are never touched.
 *
 * The instance is "usertp-record-PID", made at the start with the recording's trace clock
 * (mono, or x86-tsc: the clock of the programs' records) and buffer size, its events enabled
 * through its set_event (any of the kernel's forms) and its filters written by event (the
 * kernel applies them), the formats of its events taken.  While it runs, each CPU's full pages
 * are spliced from trace_pipe_raw into a spool file of the recording's spool directory (so
 * that --recover of a recorder killed has them); at the end the last pages are flushed, its
 * counts taken, and the instance removed.  The spools are then one more
 * source of the merge (dat-merge.h): the kernel's records, ids and formats as they are.
 */
#ifndef USERTP_KERNEL_REC_H
#define USERTP_KERNEL_REC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "private/usertp-consumer-private.h"

#define USERTP__KERNEL_INSTANCE_PREFIX "usertp-record-"
/* A pid no task has, that set_event_pid takes (docs/tracefs.md: up to 2^30 - 1). */
#define USERTP__KERNEL_NO_TASK 1073741823

struct usertp__kernel_rec;

/*
 * Does @spec name kernel events: is its system (or the whole spec, set_event's "SYSTEM"
 * form) a system of this kernel's tracefs?  False where tracefs cannot be read.
 */
bool usertp__kernel_spec(const char *spec);

/*
 * Can kernel events be recorded here (tracefs found, its instances writable)?  Return: 0,
 * or -1 with one line in @why saying what is missing and how to get it.
 */
int usertp__kernel_check(char *why, size_t whylen);

/*
 * Remove the instances that recorders which died left ("usertp-record-PID" of no running
 * PID), each @say(name) first.
 */
void usertp__kernel_remove_leftovers(void (*say)(const char *name));

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

/*
 * The threads recorded from now: @pid too (a command, before it runs), its threads and
 * children with @event_fork.  Return: 0 or a negative errno.
 */
int usertp__kernel_only(struct usertp__kernel_rec *k, pid_t pid, bool event_fork);

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
 * The kernel's events, "sys:event" lines (available_events; to free()), or NULL with why in
 * @why (tracefs not mounted, or not readable).
 */
char *usertp__kernel_events(char *why, size_t whylen);
/* The format text of the kernel's event "sys:event" (to free()), or NULL. */
char *usertp__kernel_format(const char *sysname);

/* Everything freed, the spools closed, the instance removed if it is still there. */
void usertp__kernel_free(struct usertp__kernel_rec *k);

#endif
