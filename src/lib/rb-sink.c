/* SPDX-License-Identifier: MIT */
/*
 * rb-sink.c - recording an event into a consumer's ring buffers: the embedded recorder's and
 * those of recorders outside the process.  This is the hot path of an enabled event.
 */
#include "internal.h"

USERTP_STATIC_ASSERT(sizeof(struct usertp_rb_event) <= sizeof(((struct usertp_reservation *)0)->priv),
		     "a ring-buffer reservation fits in usertp_reservation.priv");

/* Whatever the inline fast paths leave: out of line, so that the fast path keeps little. */
static __attribute__((noinline)) void *rb_sink_reserve_slow(struct usertp_event_file *file,
							     struct usertp_reservation *res,
							     size_t size)
{
	struct usertp__rb_sink *sink = file->sink;
	void *ent = usertp_rb_reserve_slow(&sink->rb, usertp_rb_this_cpu(&sink->rb), size,
					   (struct usertp_rb_event *)res->priv);

	return ent ? usertp__entry_fill(file, ent) : NULL;
}

/*
 * The two writers' fast paths in functions of their own: the rseq one needs many registers
 * (saved and restored on entry and exit), the other few.  The commit needs only res->priv:
 * res->entry and res->size are left alone.
 */
static __attribute__((noinline)) void *rb_sink_reserve_rseq(struct usertp_event_file *file,
							     struct usertp_reservation *res,
							     size_t size)
{
	struct usertp__rb_sink *sink = file->sink;
	bool tsc = usertp_rb_clock_id == USERTP_RB_CLOCK_TSC;
	void *ent;

	/* The TSC is read inside the restartable sequence: no clock read here. */
	ent = usertp_rb_rseq_try_reserve(&sink->rb, size, tsc, tsc ? 0 : usertp_rb_clock(),
					 (struct usertp_rb_event *)res->priv);
	if (usertp_unlikely(!ent))
		return rb_sink_reserve_slow(file, res, size);
	return usertp__entry_fill(file, ent);
}

static void *rb_sink_reserve(struct usertp_event_file *file, struct usertp_reservation *res,
			     size_t size)
{
	struct usertp__rb_sink *sink = file->sink;
	uint64_t ts;
	void *ent;

	if (usertp_unlikely(!__atomic_load_n(&sink->active, __ATOMIC_RELAXED)))
		return NULL;
	if (usertp_likely(sink->rb.rseq))
		return rb_sink_reserve_rseq(file, res, size);
	ts = usertp_rb_clock();
	ent = usertp_rb_try_reserve(&sink->rb, usertp_rb_this_cpu(&sink->rb), size, ts,
				    (struct usertp_rb_event *)res->priv);
	if (usertp_unlikely(!ent))
		return rb_sink_reserve_slow(file, res, size);
	return usertp__entry_fill(file, ent);
}

static void rb_sink_commit(struct usertp_event_file *file, struct usertp_reservation *res)
{
	(void)file;
	usertp_rb_commit((struct usertp_rb_event *)res->priv);
}

const struct usertp__sink_ops usertp__rb_sink_ops = { rb_sink_reserve, rb_sink_commit };
