/* SPDX-License-Identifier: MIT */
/*
 * scratch.h - private to libusertp: scratch.c's, the records a thread is writing.
 */
#ifndef USERTP_LIB_SCRATCH_H
#define USERTP_LIB_SCRATCH_H

#include "internal.h"

/*
 * Records being written by a thread (up to USERTP__SCRATCH_NEST nested): a listener's, or one
 * a filter must pass before it goes into a ring buffer (rb-sink.c).  Inline: they are on the
 * path of every filtered event.  The thread's area is made by its first record
 * (usertp__scratch_new(), scratch.c) and freed when the thread ends.
 */
#define USERTP__SCRATCH_NEST 4
struct usertp__scratch {
	unsigned int depth;
	unsigned int size[USERTP__SCRATCH_NEST]; /* of each record being written */
	const void *aux[USERTP__SCRATCH_NEST];	  /* the filter it is to pass, or NULL */
	unsigned char buf[USERTP__SCRATCH_NEST][USERTP_RECORD_MAX] __attribute__((aligned(8)));
};
extern __thread struct usertp__scratch *usertp__thread_scratch
	__attribute__((tls_model("initial-exec"))) USERTP_HIDDEN;
USERTP_HIDDEN struct usertp__scratch *usertp__scratch_new(void);

/*
 * @size bytes to write a record into, with @aux (the filter it must pass) kept beside it;
 * NULL when nested too deep or too big.
 */
static inline void *usertp__scratch_push(size_t size, const void *aux)
{
	struct usertp__scratch *s = usertp__thread_scratch;

	if (usertp_unlikely(!s) && !(s = usertp__scratch_new()))
		return NULL;
	if (usertp_unlikely(size > USERTP_RECORD_MAX || s->depth >= USERTP__SCRATCH_NEST))
		return NULL;
	s->size[s->depth] = (unsigned int)size;
	s->aux[s->depth] = aux;
	return s->buf[s->depth++];
}

/* If @record is the innermost scratch record, take it off (true) with its size and aux. */
static inline bool usertp__scratch_pop(void *record, size_t *size, const void **aux)
{
	struct usertp__scratch *s = usertp__thread_scratch;

	if (!s || !s->depth || record != s->buf[s->depth - 1])
		return false;
	s->depth--;
	*size = s->size[s->depth];
	*aux = s->aux[s->depth];
	return true;
}

#endif /* USERTP_LIB_SCRATCH_H */
