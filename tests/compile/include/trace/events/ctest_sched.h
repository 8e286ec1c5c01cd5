/* SPDX-License-Identifier: MIT */
/*
 * A trace header written the way the kernel's include/trace/events/ headers are: found as
 * <trace/events/ctest_sched.h> (no TRACE_INCLUDE_PATH, the default include form), includes
 * <linux/tracepoint.h> and a uapi header, and uses the macros trace-all.h does not: raw
 * DECLARE_TRACE/DECLARE_TRACE_CONDITION tracepoints, TRACE_EVENT_FN_COND,
 * TRACE_DEFINE_SIZEOF, __print_dynamic_array, __u32/__u64 fields.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM ctest_sched

#if !defined(_TRACE_CTEST_SCHED_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_CTEST_SCHED_H

#include <linux/types.h>
#include <linux/tracepoint.h>

#ifndef CTEST_SCHED_HELPERS
#define CTEST_SCHED_HELPERS
#define CTEST_COMM_LEN 16
enum ctest_task_state { CTEST_RUNNING = 0, CTEST_SLEEPING = 1, CTEST_STOPPED = 4 };
typedef struct ctest_task {
	char comm[CTEST_COMM_LEN];
	int pid;
	int prio;
} ctest_task_t;
int ctest_sched_stat_reg(void);
void ctest_sched_stat_unreg(void);
#endif

TRACE_DEFINE_ENUM(CTEST_RUNNING);
TRACE_DEFINE_ENUM(CTEST_SLEEPING);
TRACE_DEFINE_ENUM(CTEST_STOPPED);
TRACE_DEFINE_SIZEOF(ctest_task_t);

DECLARE_EVENT_CLASS(ctest_sched_wakeup_template,

	TP_PROTO(const struct ctest_task *p, __u32 target_cpu),

	TP_ARGS(p, target_cpu),

	TP_STRUCT__entry(
		__array(	char,	comm,	CTEST_COMM_LEN	)
		__field(	int,	pid			)
		__field(	int,	prio			)
		__field(	__u32,	target_cpu		)
	),

	TP_fast_assign(
		memcpy(__entry->comm, p->comm, CTEST_COMM_LEN);
		__entry->pid		= p->pid;
		__entry->prio		= p->prio;
		__entry->target_cpu	= target_cpu;
	),

	TP_printk("comm=%s pid=%d prio=%d target_cpu=%03u",
		  __entry->comm, __entry->pid, __entry->prio,
		  __entry->target_cpu)
);

DEFINE_EVENT(ctest_sched_wakeup_template, ctest_sched_waking,
	     TP_PROTO(const struct ctest_task *p, __u32 target_cpu),
	     TP_ARGS(p, target_cpu));

DEFINE_EVENT(ctest_sched_wakeup_template, ctest_sched_wakeup,
	     TP_PROTO(const struct ctest_task *p, __u32 target_cpu),
	     TP_ARGS(p, target_cpu));

TRACE_EVENT(ctest_sched_switch,

	TP_PROTO(bool preempt, const struct ctest_task *prev, const struct ctest_task *next,
		 unsigned int prev_state),

	TP_ARGS(preempt, prev, next, prev_state),

	TP_STRUCT__entry(
		__array(	char,	prev_comm,	CTEST_COMM_LEN	)
		__field(	int,	prev_pid			)
		__field(	int,	prev_prio			)
		__field(	long,	prev_state			)
		__array(	char,	next_comm,	CTEST_COMM_LEN	)
		__field(	int,	next_pid			)
		__field(	int,	next_prio			)
	),

	TP_fast_assign(
		memcpy(__entry->next_comm, next->comm, CTEST_COMM_LEN);
		__entry->prev_pid	= prev->pid;
		__entry->prev_prio	= prev->prio;
		__entry->prev_state	= preempt ? (long)CTEST_RUNNING : (long)prev_state;
		memcpy(__entry->prev_comm, prev->comm, CTEST_COMM_LEN);
		__entry->next_pid	= next->pid;
		__entry->next_prio	= next->prio;
	),

	TP_printk("prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s ==> next_comm=%s next_pid=%d next_prio=%d",
		__entry->prev_comm, __entry->prev_pid, __entry->prev_prio,
		__entry->prev_state ?
		  __print_flags(__entry->prev_state, "|",
				{ CTEST_SLEEPING, "S" }, { CTEST_STOPPED, "T" }) : "R",
		__entry->next_comm, __entry->next_pid, __entry->next_prio)
);

TRACE_EVENT_FN_COND(ctest_sched_stat_runtime,

	TP_PROTO(const struct ctest_task *tsk, __u64 runtime),

	TP_ARGS(tsk, runtime),

	TP_CONDITION(runtime != 0),

	TP_STRUCT__entry(
		__string(	comm,		tsk->comm	)
		__field(	int,		pid		)
		__field(	__u64,		runtime		)
	),

	TP_fast_assign(
		__assign_str(comm);
		__entry->pid		= tsk->pid;
		__entry->runtime	= runtime;
	),

	TP_printk("comm=%s pid=%d runtime=%llu [ns]",
		  __get_str(comm), __entry->pid, (unsigned long long)__entry->runtime),

	ctest_sched_stat_reg, ctest_sched_stat_unreg
);

TRACE_EVENT(ctest_sched_process_exec,

	TP_PROTO(const char *filename, int pid, const __u32 *ids, int nr_ids),

	TP_ARGS(filename, pid, ids, nr_ids),

	TP_STRUCT__entry(
		__string(	filename,	filename	)
		__field(	int,		pid		)
		__dynamic_array(__u32,		ids,	nr_ids	)
	),

	TP_fast_assign(
		__assign_str(filename, filename);
		__entry->pid = pid;
		memcpy(__get_dynamic_array(ids), ids, nr_ids * sizeof(__u32));
	),

	TP_printk("filename=%s pid=%d ids=%s", __get_str(filename), __entry->pid,
		  __print_dynamic_array(ids, sizeof(__u32)))
);

/* Raw tracepoints, as sched.h has for pelt_*: no event, probes only. */
DECLARE_TRACE(ctest_sched_raw_tp,
	TP_PROTO(int cpu, unsigned long util),
	TP_ARGS(cpu, util));

DECLARE_TRACE_CONDITION(ctest_sched_raw_cond_tp,
	TP_PROTO(int cpu),
	TP_ARGS(cpu),
	TP_CONDITION(cpu >= 0));

#endif /* _TRACE_CTEST_SCHED_H */

/* This part must be outside protection */
#include <trace/define_trace.h>
