/* SPDX-License-Identifier: MIT */
/*
 * test-stress.c - two threads hammer tracepoints while a third attaches and detaches probes
 * and listeners, with tracepoint_synchronize_unregister() in between.  Checks that no probe
 * runs after its unregister + synchronize returned: the probe's context is marked dead and
 * then freed right after, so a late probe is caught by the dead mark, and under
 * AddressSanitizer as a use after free.  Built normally and under ThreadSanitizer and
 * AddressSanitizer by the CI script.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define CREATE_TRACE_POINTS
#include "stress-trace.h"

#include <usertp/usertp.h>

#include "../harness.h"


#define ROUNDS 1500

struct probe_ctx {
	int dead;	      /* set once unregister + synchronize returned */
	unsigned long hits;
};

static int stop;
static unsigned long late_calls; /* probes that ran on a dead context: must stay 0 */
static unsigned long event_records, bad_records;

static void raw_probe(void *data, int thread, unsigned long seq)
{
	struct probe_ctx *ctx = data;

	(void)thread;
	(void)seq;
	if (__atomic_load_n(&ctx->dead, __ATOMIC_RELAXED))
		__atomic_fetch_add(&late_calls, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&ctx->hits, 1, __ATOMIC_RELAXED);
}

static void on_record(const struct usertp_event *ev, const void *record, unsigned int size,
		      void *arg)
{
	char text[256];
	int *dead = arg;

	if (__atomic_load_n(dead, __ATOMIC_RELAXED))
		__atomic_fetch_add(&late_calls, 1, __ATOMIC_RELAXED);
	if (usertp_event_print(ev, record, size, text, sizeof(text)) <= 0 ||
	    strncmp(text, "thread=", 7))
		__atomic_fetch_add(&bad_records, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&event_records, 1, __ATOMIC_RELAXED);
}

static void *hammer(void *arg)
{
	int id = (int)(long)arg;
	unsigned long seq = 0;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		trace_stress_raw(id, seq);
		trace_stress_event(id, seq, "hammer");
		seq++;
	}
	return NULL;
}

static void one_round(int round)
{
	struct probe_ctx *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	int *listener_dead = calloc(1, sizeof(*listener_dead));
	struct usertp_listener *l = NULL;

	CHECK_INT(register_trace_prio_stress_raw(raw_probe, a, round % 3), ==, 0);
	CHECK_INT(register_trace_stress_raw(raw_probe, b), ==, 0);
	if (round % 4 == 0)
		CHECK_INT(usertp_listener_create("stress:stress_event", on_record, listener_dead, &l),
			  ==, 0);
	for (int spin = 0; spin < 2000; spin++)
		__asm__ __volatile__("" ::: "memory");
	if (round % 2) {
		CHECK_INT(unregister_trace_stress_raw(raw_probe, a), ==, 0);
		CHECK_INT(unregister_trace_stress_raw(raw_probe, b), ==, 0);
	} else {
		CHECK_INT(unregister_trace_stress_raw(raw_probe, b), ==, 0);
		CHECK_INT(unregister_trace_stress_raw(raw_probe, a), ==, 0);
	}
	tracepoint_synchronize_unregister();
	__atomic_store_n(&a->dead, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&b->dead, 1, __ATOMIC_RELAXED);
	usertp_listener_destroy(l); /* returns after a grace period: no callback runs after */
	__atomic_store_n(listener_dead, 1, __ATOMIC_RELAXED);
	/* Give a late probe a chance to show up, then free: ASan reports any later use. */
	for (int spin = 0; spin < 2000; spin++)
		__asm__ __volatile__("" ::: "memory");
	free(a);
	free(b);
	free(listener_dead);
}

int main(void)
{
	pthread_t threads[2];
	int i;

	for (i = 0; i < 2; i++)
		pthread_create(&threads[i], NULL, hammer, (void *)(long)i);
	for (i = 0; i < ROUNDS; i++)
		one_round(i);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < 2; i++)
		pthread_join(threads[i], NULL);

	CHECK_INT(late_calls, ==, 0);
	CHECK_INT(bad_records, ==, 0);
	CHECK(!trace_stress_raw_enabled());
	CHECK(!trace_stress_event_enabled());
	printf("%lu event records seen\n", event_records);
	return harness_done();
}
