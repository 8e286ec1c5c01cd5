/* SPDX-License-Identifier: MIT */
/*
 * worker-pool-trace.h - the trace events of the worker-pool example, as a tutorial.
 *
 * This file has the shape of a kernel trace header (see the kernel's
 * samples/trace_events/trace-events-sample.h), and everything written for the kernel works
 * the same here.  It is included in two ways:
 *
 *   - by any .c file that calls trace_job_*(): it declares the tracepoints;
 *   - by exactly one .c file after "#define CREATE_TRACE_POINTS": <trace/define_trace.h> at
 *     the bottom then re-reads this file several times to generate, for each event, the
 *     record layout, the code that fills a record, the printer and the format description.
 *     A second file with CREATE_TRACE_POINTS fails at link time, as in the kernel.
 */

/*
 * TRACE_SYSTEM names the group of these events: they are "jobs:job_queued" and so on.  It is
 * outside the include guard because define_trace.h reads this file again.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM jobs

/* TRACE_HEADER_MULTI_READ lets define_trace.h through the guard on its re-reads. */
#if !defined(_WORKER_POOL_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _WORKER_POOL_TRACE_H

/* <linux/tracepoint.h> also works: `pkg-config --cflags usertp` provides both names. */
#include <usertp/tracepoint.h>

/*
 * Helpers the events use must survive being read several times, hence their own guard.
 */
#ifndef WORKER_POOL_TRACE_HELPERS
#define WORKER_POOL_TRACE_HELPERS
enum job_kind { JOB_RESIZE, JOB_COMPRESS, JOB_CHECKSUM };
#endif

/*
 * TRACE_DEFINE_ENUM tells the tools the numeric values of enum names used in TP_printk, so
 * that the format file says { 1, "compress" } rather than { JOB_COMPRESS, "compress" }.
 */
TRACE_DEFINE_ENUM(JOB_RESIZE);
TRACE_DEFINE_ENUM(JOB_COMPRESS);
TRACE_DEFINE_ENUM(JOB_CHECKSUM);

/*
 * An event class: the record layout, the assignment and the output shared by several events
 * that take the same arguments.  It defines no event by itself...
 */
DECLARE_EVENT_CLASS(job_class,

	/* The prototype of trace_job_queued() and trace_job_started(). */
	TP_PROTO(int id, enum job_kind kind, const char *name),

	TP_ARGS(id, kind, name),

	/*
	 * The record: __field for scalars, __string for a copied C string (stored after the
	 * fixed fields, located by a 32-bit "__data_loc" word, as in the kernel).
	 */
	TP_STRUCT__entry(
		__field(	int,		id	)
		__field(	int,		kind	)
		__string(	name,		name	)
	),

	/* Filling the record: plain C, __entry is the record being written. */
	TP_fast_assign(
		__entry->id = id;
		__entry->kind = kind;
		__assign_str(name);
	),

	/*
	 * How the record reads as text.  __print_symbolic maps values to names; the tools
	 * (trace-cmd, KernelShark, libtraceevent) interpret the same expression.
	 */
	TP_printk("id=%d kind=%s name=%s", __entry->id,
		  __print_symbolic(__entry->kind,
				   { JOB_RESIZE, "resize" },
				   { JOB_COMPRESS, "compress" },
				   { JOB_CHECKSUM, "checksum" }),
		  __get_str(name))
);

/* ...these do: two events with the class's layout and output, each its own tracepoint. */
DEFINE_EVENT(job_class, job_queued,
	TP_PROTO(int id, enum job_kind kind, const char *name),
	TP_ARGS(id, kind, name));

DEFINE_EVENT(job_class, job_started,
	TP_PROTO(int id, enum job_kind kind, const char *name),
	TP_ARGS(id, kind, name));

/*
 * TRACE_EVENT is a class and an event in one.  This one also stores a fixed array (the
 * worker's name), a variable-length array (per-chunk costs) and flags printed by name.
 */
#define JOB_FLAG_RETRIED	0x1
#define JOB_FLAG_CACHED		0x2
#define JOB_FLAG_LARGE		0x4

TRACE_EVENT(job_done,

	TP_PROTO(int id, const char *worker, unsigned long ns, unsigned int flags,
		 const unsigned int *chunk_us, int nr_chunks),

	TP_ARGS(id, worker, ns, flags, chunk_us, nr_chunks),

	TP_STRUCT__entry(
		__field(	int,		id			)
		__array(	char,		worker,	16		)
		__field(	unsigned long,	ns			)
		__field(	unsigned int,	flags			)
		__dynamic_array(unsigned int,	chunk_us, nr_chunks	)
	),

	TP_fast_assign(
		__entry->id = id;
		strncpy(__entry->worker, worker, sizeof(__entry->worker) - 1);
		__entry->worker[sizeof(__entry->worker) - 1] = '\0';
		__entry->ns = ns;
		__entry->flags = flags;
		memcpy(__get_dynamic_array(chunk_us), chunk_us,
		       nr_chunks * sizeof(unsigned int));
	),

	TP_printk("id=%d worker=%s ns=%lu flags=%s chunks_us=%s", __entry->id, __entry->worker,
		  __entry->ns,
		  __print_flags(__entry->flags, "|",
				{ JOB_FLAG_RETRIED, "RETRIED" },
				{ JOB_FLAG_CACHED, "CACHED" },
				{ JOB_FLAG_LARGE, "LARGE" }),
		  __print_array(__get_dynamic_array(chunk_us),
				__get_dynamic_array_len(chunk_us) / sizeof(unsigned int),
				sizeof(unsigned int)))
);

/*
 * TRACE_EVENT_CONDITION records only when the condition holds; the test runs only once the
 * event is enabled, so a disabled event still costs just the patched nop.
 */
TRACE_EVENT_CONDITION(job_slow,

	TP_PROTO(int id, unsigned long ns),

	TP_ARGS(id, ns),

	TP_CONDITION(ns > 200000),

	TP_STRUCT__entry(
		__field(	int,		id	)
		__field(	unsigned long,	ns	)
	),

	TP_fast_assign(
		__entry->id = id;
		__entry->ns = ns;
	),

	TP_printk("id=%d took %lu us", __entry->id, __entry->ns / 1000)
);

#endif /* _WORKER_POOL_TRACE_H */

/*
 * This part must be outside the guard.  The header is not in a system include directory, so
 * tell define_trace.h where to find it: TRACE_INCLUDE_PATH "." means "search the include
 * path" (the build adds this directory with -I), TRACE_INCLUDE_FILE is the file name
 * without ".h".
 */
#undef TRACE_INCLUDE_PATH
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE worker-pool-trace
#include <trace/define_trace.h>
