/* SPDX-License-Identifier: MIT */
/*
 * trace-lines.h - the kernel's `trace` text (docs/tracefs.md §6), one home for the embedded
 * recorder's .txt output and the mount's trace and trace_pipe: the header with its legend, one
 * line per record, and the "CPU:N [LOST M EVENTS]" lines.
 *
 *	# tracer: nop
 *	#
 *	# entries-in-buffer/entries-written: E/W   #P:N
 *	#
 *	#                                _-----=> irqs-off/BH-disabled	(irq-info: the flags'
 *	...								 legend and column)
 *	#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
 *	#              | |         |   |||||     |         |
 *	     worker-pool-4242    [001] ..... 12345.678901: job_done: id=3 ...
 *
 * with record-tgid, a "(TGID)" column after TASK-PID.  No malloc and no stdio: the embedded
 * recorder writes it in fatal-signal handlers.  What is written goes to a callback.
 */
#ifndef USERTP_TRACE_LINES_H
#define USERTP_TRACE_LINES_H

#include <stdbool.h>
#include <string.h>
#include <stddef.h>
#include <stdint.h>

struct usertp__tlines {
	void (*write)(void *arg, const char *text, size_t len);
	void *arg;
	bool tgid;     /* options/record-tgid: the TGID column */
	bool irq_info; /* options/irq-info: the flags' column and legend */
};

/* The header: the counts of records held and written, the CPUs online, the legend. */
void usertp__tlines_header(const struct usertp__tlines *o, uint64_t entries, uint64_t written,
			   int nr_online);

/*
 * One record's line: @comm-@tid [(@tgid)] [@cpu] [@flags ("....." if NULL)] TIME: @name:
 * @text (without @name, @text alone), with a line break unless @text ends with one and
 * @keep_break.  TIME is seconds.microseconds, or with @raw_clock the counter's ticks.
 */
void usertp__tlines_line(const struct usertp__tlines *o, const char *comm, int tid, int tgid,
			 unsigned int cpu, const char *flags, uint64_t ts, bool raw_clock,
			 const char *name, const char *text, bool keep_break);

/*
 * Is an event of @system shown with its name?  Not ftrace's own (bprint, bputs, print): the
 * kernel's trace file gives their text alone ("function: text").
 */
static inline bool usertp__tlines_named(const char *system)
{
	return strcmp(system, "ftrace") != 0;
}

/* "CPU:@cpu [LOST @n EVENTS]". */
void usertp__tlines_lost(const struct usertp__tlines *o, unsigned int cpu, uint64_t n);

#endif /* USERTP_TRACE_LINES_H */
