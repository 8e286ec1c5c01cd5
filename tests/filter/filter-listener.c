/* SPDX-License-Identifier: MIT */
/*
 * filter-listener - usertp_listener_set_filter() in a program of its own events: exact counts
 * with a filter, after replacing and removing it, a refused filter changing nothing, and
 * filters replaced over and over while four threads record (no torn filter: every record
 * passes the filter of its time, one of the two in turn).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <usertp/usertp.h>

#define CREATE_TRACE_POINTS
#include "cons-prog-trace.h"

#include "../harness.h"

static unsigned long count_a, count_b, bad_seen;

static void on_record(const struct usertp_event *ev, const void *record, unsigned int size,
		      void *arg)
{
	int seq;

	(void)arg;
	memcpy(&seq, (const char *)record + 8, 4);
	(void)size;
	if (!strcmp(usertp_event_name(ev), "cons_a")) {
		__atomic_fetch_add(&count_a, 1, __ATOMIC_RELAXED);
		/* The filters of the threads test keep seq < 1000 or seq >= 2000: never between. */
		if (seq >= 1000 && seq < 2000)
			__atomic_fetch_add(&bad_seen, 1, __ATOMIC_RELAXED);
	} else {
		__atomic_fetch_add(&count_b, 1, __ATOMIC_RELAXED);
	}
}

static void fire(int from, int n)
{
	for (int i = from; i < from + n; i++)
		trace_cons_a(i);
	for (int i = from; i < from + n; i++)
		trace_cons_b(i);
}

static int stop;

static void *firer(void *arg)
{
	(void)arg;
	for (unsigned int k = 0; !__atomic_load_n(&stop, __ATOMIC_RELAXED); k++)
		fire((int)(k % 3000), 1);
	return NULL;
}

int main(void)
{
	struct usertp_listener *l;
	char err[4096];
	pthread_t threads[4];
	int ret = usertp_listener_create("cons:*", on_record, NULL, &l);

	CHECK(!ret, "usertp_listener_create: %d", ret);
	ret = usertp_listener_set_filter(l, "cons:cons_a", "seq >= 10 && seq < 20", err, sizeof(err));
	CHECK(!ret, "set_filter: %d %s", ret, err);
	fire(0, 100);
	CHECK(count_a == 10 && count_b == 100, "filtered: a %lu, b %lu", count_a, count_b);
	/* A refused one: the error as the filter file shows it; the filter in place stays. */
	ret = usertp_listener_set_filter(l, "cons:cons_a", "seq >= 10 &&", err, sizeof(err));
	CHECK(ret == -EINVAL && !strcmp(err, "seq >= 10 &&\n          ^\nparse_error: Meaningless filter expression\n\n"),
	      "refused: %d [%s]", ret, err);
	ret = usertp_listener_set_filter(l, "cons:cons_a", "nosuch == 1", err, sizeof(err));
	CHECK(ret == -EINVAL && strstr(err, "parse_error: Field not found"), "refused: %d [%s]", ret,
	      err);
	count_a = count_b = 0;
	fire(0, 100);
	CHECK(count_a == 10 && count_b == 100, "after refusals: a %lu, b %lu", count_a, count_b);
	/* Replaced, then removed ("0", as tracefs). */
	ret = usertp_listener_set_filter(l, "cons:*", "seq < 3", err, sizeof(err));
	count_a = count_b = 0;
	fire(0, 100);
	CHECK(!ret && count_a == 3 && count_b == 3, "cons:*: a %lu, b %lu", count_a, count_b);
	ret = usertp_listener_set_filter(l, "cons:*", "0", err, sizeof(err));
	count_a = count_b = 0;
	fire(0, 100);
	CHECK(!ret && count_a == 100 && count_b == 100, "removed: a %lu, b %lu", count_a, count_b);
	/* Replaced while four threads record (one of the two from the start). */
	usertp_listener_set_filter(l, "cons:cons_a", "seq < 1000", NULL, 0);
	for (int i = 0; i < 4; i++)
		pthread_create(&threads[i], NULL, firer, NULL);
	for (int i = 0; i < 2000; i++)
		usertp_listener_set_filter(l, "cons:cons_a", i % 2 ? "seq < 1000" : "seq >= 2000", NULL, 0);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 4; i++)
		pthread_join(threads[i], NULL);
	CHECK(!bad_seen, "%lu records passed a filter that was not theirs", bad_seen);
	usertp_listener_destroy(l);
	if (harness_failed)
		return 1;
	printf("ok\n");
	return 0;
}
