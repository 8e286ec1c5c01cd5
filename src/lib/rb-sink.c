/* SPDX-License-Identifier: MIT */
/*
 * rb-sink.c - recording an event into a consumer's ring buffers: the embedded recorder's and
 * those of recorders outside the process.  This is the hot path of an enabled event.
 */
#include "internal.h"

USERTP_STATIC_ASSERT(sizeof(struct usertp_rb_event) <= sizeof(((struct usertp_reservation *)0)->priv),
		     "a ring-buffer reservation fits in usertp_reservation.priv");

static void *rb_sink_reserve(struct usertp_event_file *file, struct usertp_reservation *res,
			     size_t size)
{
	struct usertp__rb_sink *sink = file->sink;
	struct usertp_rb_event *ev = (struct usertp_rb_event *)res->priv;
	void *ent;

	if (usertp_unlikely(!__atomic_load_n(&sink->active, __ATOMIC_RELAXED)))
		return NULL;
	ent = usertp_rb_reserve(&sink->rb, usertp_rb_this_cpu(&sink->rb), size, ev);
	if (usertp_unlikely(!ent))
		return NULL;
	return usertp__entry_start(file, res, ent, size);
}

static void rb_sink_commit(struct usertp_event_file *file, struct usertp_reservation *res)
{
	(void)file;
	usertp_rb_commit((struct usertp_rb_event *)res->priv);
}

const struct usertp__sink_ops usertp__rb_sink_ops = { rb_sink_reserve, rb_sink_commit };
