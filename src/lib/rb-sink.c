/* SPDX-License-Identifier: MIT */
/*
 * rb-sink.c - recording an event into a consumer's ring buffers: the embedded recorder's and
 * those of recorders outside the process.  This is the hot path of an enabled event: the
 * generated probe calls one of these reserves and commits directly (the event file's head).
 */
#include <string.h>

#include "internal.h"
#include "rb-sink.h"
#include "scratch.h"
#include "thread.h"

static inline struct usertp__rb *active_rb(const struct usertp_event_file *file)
{
	struct usertp__rb_sink *sink = file->sink;

	return usertp_likely(__atomic_load_n(&sink->active, __ATOMIC_RELAXED)) ? &sink->rb : NULL;
}

/* CAS mode (and the writers' general path): the writer in C, then the common header. */
static void *rb_sink_reserve(struct usertp_event_file *file, size_t size)
{
	struct usertp__rb *rb = active_rb(file);
	void *ent;

	if (!rb)
		return NULL;
	ent = usertp__rb_reserve(rb, usertp__rb_this_cpu(rb), size);
	return ent ? usertp__entry_fill(file, ent) : NULL;
}

static void rb_sink_commit(struct usertp_event_file *file, void *record)
{
	usertp__rb_commit(&((struct usertp__rb_sink *)file->sink)->rb, record);
}

static const struct usertp_event_file_head rb_sink_ops = { rb_sink_reserve, rb_sink_commit };

#if USERTP_RB_HAVE_RSEQ
/* A thread's first record: learn its id, out of line, then record it as any other. */
static __attribute__((noinline)) void *reserve_new_thread(struct usertp_event_file *file,
							  size_t size)
{
	usertp__gettid_slow();
	return file->head.reserve(file, size);
}

/*
 * rseq mode: straight into the assembly writer (a tail call), which writes the common header
 * too.  The x86-tsc clock is read inside its sequence; the mono clock here, before it.
 */
static void *rb_sink_reserve_rseq_tsc(struct usertp_event_file *file, size_t size)
{
	struct usertp__rb *rb = active_rb(file);

	if (usertp_unlikely(!rb || !usertp__tid))
		return rb ? reserve_new_thread(file, size) : NULL;
	return usertp__rb_rseq_reserve_tsc(rb, size, usertp__entry_word(file));
}

static void *rb_sink_reserve_rseq_mono(struct usertp_event_file *file, size_t size)
{
	struct usertp__rb *rb = active_rb(file);
	uint64_t word;

	if (usertp_unlikely(!rb || !usertp__tid))
		return rb ? reserve_new_thread(file, size) : NULL;
	word = usertp__entry_word(file);
	return usertp__rb_rseq_reserve_at(rb, size, word, usertp__rb_clock_mono());
}

/* rseq mode's commit: no counting, no need of the buffers. */
static void rb_sink_commit_rseq(struct usertp_event_file *file, void *record)
{
	(void)file;
	usertp__rb_commit_entry(record);
}

static const struct usertp_event_file_head rb_sink_ops_rseq_tsc = { rb_sink_reserve_rseq_tsc,
								     rb_sink_commit_rseq };
static const struct usertp_event_file_head rb_sink_ops_rseq_mono = { rb_sink_reserve_rseq_mono,
								      rb_sink_commit_rseq };
#endif

/*
 * With a filter (event-filter.c): the record goes to the thread's scratch first, with the
 * filter it must pass; at commit, one that passes is copied into the buffers.  The commit
 * takes records reserved in the buffers too (reserved before the filter was set, or with
 * only a pid filter).  A thread the pid filter (thread.c) leaves out records nothing.
 */
static void *rb_sink_reserve_filtered(struct usertp_event_file *file, size_t size)
{
	const struct usertp__filter *filter;
	void *record;

	if (!usertp__event_file_pid_passes(file))
		return NULL;
	filter = __atomic_load_n(&file->filter, __ATOMIC_ACQUIRE);
	if (!filter)
		return file->ops->reserve(file, size);
	if (!active_rb(file))
		return NULL;
	record = usertp__scratch_push(size, filter);
	if (!record) {
		/* Too big or nested too deep to filter: dropped, and counted as the buffers count. */
		struct usertp__rb *rb = &((struct usertp__rb_sink *)file->sink)->rb;

		usertp__rb_drop(rb->cpus[usertp__rb_this_cpu(rb)]);
		return NULL;
	}
	return usertp__entry_fill(file, record);
}

static void rb_sink_commit_filtered(struct usertp_event_file *file, void *record)
{
	struct usertp__rb *rb = &((struct usertp__rb_sink *)file->sink)->rb;
	const void *filter;
	size_t size;
	void *ent;

	if (!usertp__scratch_pop(record, &size, &filter)) {
		usertp__rb_commit(rb, record); /* reserved in the buffers */
		return;
	}
	if (!usertp__event_file_passes(file, filter, record, size))
		return;
	/* Through the writer the event has unfiltered (rseq mode: the assembly one). */
	ent = file->ops->reserve(file, size);
	if (!ent)
		return; /* dropped, and counted by the buffers */
	memcpy(ent, record, size);
	file->ops->commit(file, ent);
}

bool usertp__rb_sink_filter_heads(const struct usertp_event_file_head *plain,
				  struct usertp_event_file_head *filtered)
{
	if (plain != &rb_sink_ops
#if USERTP_RB_HAVE_RSEQ
	    && plain != &rb_sink_ops_rseq_tsc && plain != &rb_sink_ops_rseq_mono
#endif
	)
		return false;
	*filtered = (struct usertp_event_file_head){ rb_sink_reserve_filtered, rb_sink_commit_filtered };
	return true;
}

const struct usertp_event_file_head *usertp__rb_sink_ops(const struct usertp__rb *rb)
{
#if USERTP_RB_HAVE_RSEQ
	if (rb->rseq)
		return usertp__rb_clock_id == USERTP_RB_CLOCK_TSC ? &rb_sink_ops_rseq_tsc
								  : &rb_sink_ops_rseq_mono;
#endif
	(void)rb;
	return &rb_sink_ops;
}
