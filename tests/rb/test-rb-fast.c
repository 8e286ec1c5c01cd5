/* SPDX-License-Identifier: MIT */
/*
 * test-rb-fast.c - the split between the writer's inline fast path (usertp__rb_try_reserve())
 * and its general one (usertp__rb_reserve_slow()): each case the fast path must hand over is
 * handed over and comes out right.
 *
 *	behind	the clock is behind the CPU's last timestamp: the event is recorded one tick
 *		after it (never backwards, and a delta is never 0), and that is the last one now
 *	equal	the clock reads exactly the CPU's last timestamp: the fast path (the rseq
 *		sequence, or the CAS one) hands over, since a zero delta would make the pending
 *		entry read as the end of the page, and the event is recorded after the last one
 *	extend	the gap since the last event needs a time extend: the event gets its own time
 *	exact	events that end exactly at the end of a page, then the next page
 *	cpu	usertp__rb_this_cpu() names the CPU a pinned thread runs on, in new threads too
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <sys/sysinfo.h>

#include "rb-test.h"

#define TAG 0xfa57

/* Every entry of CPU 0, checked; returns how many, with the timestamps in @ts. */
static size_t read_back(const struct usertp__rb *rb, uint64_t *ts, size_t max)
{
	struct usertp__rb_snapshot snap;
	struct rbt_walk w;
	size_t i;

	CHECK_INT(usertp__rb_snapshot(rb->region, rb->size, &snap), ==, 0);
	rbt_walk_cpu(&snap.cpus[0], &w);
	CHECK_INT(w.einval + w.bad_ret + w.out_of_page, ==, 0);
	for (i = 0; i < w.n; i++) {
		uint64_t seq;
		uint32_t tag;

		CHECK(payload_check(w.e[i].data, w.e[i].size, &tag, &seq));
		CHECK_INT(seq, ==, i);
		if (i < max)
			ts[i] = w.e[i].ts;
	}
	free(w.e);
	usertp__rb_snapshot_free(&snap);
	return w.n;
}

static void test_behind(void)
{
	struct usertp__rb rb;
	uint64_t ts[2], ahead;

	CHECK_INT(usertp__rb_create(&rb, 1, 8, true), ==, 0);
	CHECK(rbt_write(&rb, 0, 64, TAG, 0, NULL, NULL));
	ahead = usertp__rb_clock() + 1000000;
	rb.cpus[0]->last_ts = ahead;
	CHECK(rbt_write(&rb, 0, 64, TAG, 1, NULL, NULL));
	CHECK_INT(rb.cpus[0]->last_ts, ==, ahead + 1);
	CHECK_INT(read_back(&rb, ts, 2), ==, 2);
	/* Read back, the event is one tick after the one before (which was before "ahead"). */
	CHECK_INT(ts[1], ==, ts[0] + 1);
	usertp__rb_destroy(&rb);
}

static void test_equal(void)
{
	struct usertp__rb rb;
	uint64_t ts[2], last;
	unsigned char *p;

	CHECK_INT(usertp__rb_create(&rb, 1, 8, true), ==, 0);
	CHECK(rbt_write(&rb, 0, 64, TAG, 0, NULL, NULL));
	last = rb.cpus[0]->last_ts;
#if USERTP_RB_HAVE_RSEQ
	if (rb.rseq)
		p = usertp__rb_rseq_reserve_at(&rb, 64, 0, last);
	else
#endif
	{
		CHECK(usertp__rb_try_reserve(&rb, 0, 64, last) == NULL);
		p = usertp__rb_reserve_slow(&rb, 0, 64);
	}
	CHECK(p != NULL);
	if (p) {
		payload_fill(p, 64, TAG, 1);
		usertp__rb_commit(&rb, p);
	}
	CHECK_INT(rb.cpus[0]->last_ts, >, last);
	CHECK_INT(read_back(&rb, ts, 2), ==, 2);
	CHECK_INT(ts[1], >, ts[0]);
	usertp__rb_destroy(&rb);
}

static void test_extend(void)
{
	struct usertp__rb rb;
	uint64_t ts[2], before, after;

	CHECK_INT(usertp__rb_create(&rb, 1, 8, true), ==, 0);
	CHECK(rbt_write(&rb, 0, 64, TAG, 0, NULL, NULL));
	/* As if the first event were long ago (in the same page). */
	rb.cpus[0]->last_ts -= 3ull << USERTP__KPAGE_DELTA_BITS;
	memcpy(rb.pages[0], &rb.cpus[0]->last_ts, 8);
	CHECK(rbt_write(&rb, 0, 64, TAG, 1, &before, &after));
	CHECK_INT(read_back(&rb, ts, 2), ==, 2);
	CHECK_INT(ts[1], >=, before);
	CHECK_INT(ts[1], <=, after);
	CHECK_INT(ts[1] - ts[0], >=, 3ull << USERTP__KPAGE_DELTA_BITS);
	usertp__rb_destroy(&rb);
}

static void test_exact(void)
{
	/* Five entries of 8 + 808 bytes fill a page's 4080 exactly. */
	enum { SIZE = 808, PER_PAGE = USERTP__KPAGE_DATA / (8 + SIZE) };
	struct usertp__rb rb;
	uint64_t seq, ts[2 * PER_PAGE + 1];

	CHECK_INT(usertp__rb_create(&rb, 1, 64, false), ==, 0);
	for (seq = 0; seq < PER_PAGE; seq++)
		CHECK(rbt_write(&rb, 0, SIZE, TAG, seq, NULL, NULL));
	CHECK_INT(rb.cpus[0]->pos % USERTP__KPAGE_SIZE, ==, USERTP_RB_OFF_EXACT);
	for (; seq < 2 * PER_PAGE + 1; seq++)
		CHECK(rbt_write(&rb, 0, SIZE, TAG, seq, NULL, NULL));
	CHECK_INT(rb.cpus[0]->pos / USERTP__KPAGE_SIZE, ==, 2);
	CHECK_INT(read_back(&rb, ts, 2 * PER_PAGE + 1), ==, 2 * PER_PAGE + 1);
	CHECK_INT(rb.cpus[0]->dropped, ==, 0);
	usertp__rb_destroy(&rb);
}

/* Pin the calling thread to its CPU; return how many of 100 lookups named another one. */
static void *cpu_thread(void *arg)
{
	const struct usertp__rb *rb = arg;
	cpu_set_t set;
	uintptr_t wrong = 0;
	int i, cpu = sched_getcpu();

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return NULL;
	for (i = 0; i < 100; i++)
		wrong += usertp__rb_this_cpu(rb) != (unsigned int)cpu % rb->nr_cpus;
	return (void *)wrong;
}

static void test_cpu(void)
{
	struct usertp__rb rb;
	void *wrong;
	pthread_t t;
	int ret;

	CHECK_INT(usertp__rb_create(&rb, (unsigned int)get_nprocs_conf(), 4, true), ==, 0);
	CHECK_INT((uintptr_t)cpu_thread(&rb), ==, 0);
	ret = pthread_create(&t, NULL, cpu_thread, &rb);
	CHECK_INT(ret, ==, 0);
	if (!ret) {
		pthread_join(t, &wrong);
		CHECK_INT((uintptr_t)wrong, ==, 0);
	}
	usertp__rb_destroy(&rb);
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";

	if (!strcmp(c, "behind"))
		test_behind();
	else if (!strcmp(c, "equal"))
		test_equal();
	else if (!strcmp(c, "extend"))
		test_extend();
	else if (!strcmp(c, "exact"))
		test_exact();
	else if (!strcmp(c, "cpu"))
		test_cpu();
	else {
		fprintf(stderr, "usage: test-rb-fast behind|equal|extend|exact|cpu\n");
		return 2;
	}
	return harness_done();
}
