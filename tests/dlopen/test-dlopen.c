/* SPDX-License-Identifier: MIT */
/*
 * test-dlopen.c - events of a library that comes and goes.
 *
 * The module built from dlmod.c is opened with dlopen() and closed with dlclose() 1000 times
 * while a listener for "dlmod:*" exists.  Every iteration checks that the module's events
 * are found while it is loaded and gone once it is unloaded, that the listener received
 * exactly the records fired (with the right id, thread and text), and that a probe attached
 * to a tracepoint of the module through register_trace_dlmod_name() runs, and is dropped
 * with the module when it is still attached at dlclose().
 *
 * Meanwhile a second thread keeps hitting a tracepoint of the main program whose probe is
 * attached and removed in every iteration, so that call sites are rewritten (in the main
 * program and in the module) while another thread runs.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define CREATE_TRACE_POINTS
#include "dlmain-trace.h"

#include <usertp/usertp.h>

#include "../harness.h"
#include "dlmod.h"

#ifndef DLMOD_PATH
#error "DLMOD_PATH must name the module"
#endif

#define ITERATIONS 1000
#define MAX_CAPS 8

/* Records the listener received, copied (they are only valid during the call). */
struct captured {
	const struct usertp_event *ev;
	unsigned int size;
	unsigned char data[512];
};
static struct captured caps[MAX_CAPS];
static int nr_caps, caps_overflow, caps_foreign_thread;
static unsigned long total_records;
static int main_tid;

static void on_record(const struct usertp_event *ev, const void *record, unsigned int size,
		      void *arg)
{
	(void)arg;
	/* Only the main thread fires dlmod events. */
	if ((int)syscall(SYS_gettid) != main_tid) {
		__atomic_fetch_add(&caps_foreign_thread, 1, __ATOMIC_RELAXED);
		return;
	}
	total_records++;
	if (nr_caps >= MAX_CAPS || size > sizeof(caps[0].data)) {
		caps_overflow++;
		return;
	}
	caps[nr_caps].ev = ev;
	caps[nr_caps].size = size;
	memcpy(caps[nr_caps].data, record, size);
	nr_caps++;
}

/* The probe attached to the module's dlmod_name tracepoint. */
struct name_probe_state {
	int calls;
	int last_iter;
	char last_name[32];
};
static struct name_probe_state name_state;

static void name_probe(void *data, int iter, const char *name)
{
	struct name_probe_state *st = data;

	st->calls++;
	st->last_iter = iter;
	snprintf(st->last_name, sizeof(st->last_name), "%s", name ? name : "(null)");
}

/* The second thread and the probe on its tracepoint. */
static int ticker_stop;
static unsigned long ticker_progress, tick_hits, tick_bad;
static int tick_data;

static void tick_probe(void *data, unsigned long n, unsigned long check)
{
	if (data != &tick_data || check != n * 3 + 1)
		__atomic_fetch_add(&tick_bad, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&tick_hits, 1, __ATOMIC_RELAXED);
}

static void *ticker(void *arg)
{
	unsigned long n = 0;

	(void)arg;
	while (!__atomic_load_n(&ticker_stop, __ATOMIC_RELAXED)) {
		trace_dlmain_tick(n, n * 3 + 1);
		n++;
		__atomic_store_n(&ticker_progress, n, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Wait (bounded) until @counter changed from @from; return whether it did. */
static int wait_change(unsigned long *counter, unsigned long from)
{
	int i;

	for (i = 0; i < 5000; i++) {
		if (__atomic_load_n(counter, __ATOMIC_RELAXED) != from)
			return 1;
		sleep_ms(1);
	}
	return 0;
}

static const char *const ev_names[3] = { "dlmod_value", "dlmod_name", "dlmod_done" };

/* Check the records of one dlmod_fire(iter, val, name) starting at caps[first]. */
static void check_fire_records(int first, int iter, unsigned long val, const char *name,
			       const struct usertp_event *evs[3])
{
	char text[256], expect[3][128];
	int i;

	snprintf(expect[0], sizeof(expect[0]), "iter=%d val=0x%lx", iter, val);
	snprintf(expect[1], sizeof(expect[1]), "iter=%d name=%s", iter, name);
	snprintf(expect[2], sizeof(expect[2]), "iter=%d name=done", iter);
	for (i = 0; i < 3; i++) {
		const struct captured *c = &caps[first + i];
		const struct usertp_trace_entry *ent = (const struct usertp_trace_entry *)c->data;
		int n;

		CHECK(c->ev == evs[i]);
		CHECK_STR(usertp_event_name(c->ev), ev_names[i]);
		CHECK_INT(ent->type, ==, usertp_event_id(evs[i]));
		CHECK_INT(ent->pid, ==, main_tid);
		n = usertp_event_print(c->ev, c->data, c->size, text, sizeof(text));
		CHECK_INT(n, ==, (int)strlen(expect[i]));
		CHECK_STR(text, expect[i]);
	}
}

static void run_iteration(int iter)
{
	const struct usertp_event *evs[3];
	dlmod_fire_fn fire;
	dlmod_probe_fn reg, unreg;
	unsigned long val = 0x1000ul + (unsigned long)iter;
	char name[32];
	void *h;
	int i;

	snprintf(name, sizeof(name), "n%d", iter);
	for (i = 0; i < 3; i++)
		CHECK(usertp_event_find("dlmod", ev_names[i]) == NULL);

	h = dlopen(DLMOD_PATH, RTLD_NOW | RTLD_LOCAL);
	CHECK(h != NULL);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return;
	}
	for (i = 0; i < 3; i++) {
		evs[i] = usertp_event_find("dlmod", ev_names[i]);
		CHECK(evs[i] != NULL);
		if (!evs[i]) {
			dlclose(h);
			return;
		}
		CHECK_INT(usertp_event_id(evs[i]), >, 0);
	}
	CHECK(usertp_event_id(evs[0]) != usertp_event_id(evs[1]) &&
	      usertp_event_id(evs[1]) != usertp_event_id(evs[2]) &&
	      usertp_event_id(evs[0]) != usertp_event_id(evs[2]));
	fire = (dlmod_fire_fn)dlsym(h, DLMOD_FIRE);
	reg = (dlmod_probe_fn)dlsym(h, DLMOD_REGISTER);
	unreg = (dlmod_probe_fn)dlsym(h, DLMOD_UNREGISTER);
	CHECK(fire && reg && unreg);
	if (!fire || !reg || !unreg) {
		dlclose(h);
		return;
	}

	/* The main program's sites are switched on while the ticker runs through them. */
	CHECK_INT(register_trace_dlmain_tick(tick_probe, &tick_data), ==, 0);

	/*
	 * Even iterations attach the probe to the module's tracepoint.  Odd ones do not: the
	 * probe left attached at the last dlclose() must not have survived into this copy.
	 */
	memset(&name_state, 0, sizeof(name_state));
	if (iter % 2 == 0)
		CHECK_INT(reg(name_probe, &name_state), ==, 0);

	nr_caps = 0;
	fire(iter, val, name);
	CHECK_INT(nr_caps, ==, 3);
	if (nr_caps == 3)
		check_fire_records(0, iter, val, name, evs);
	if (iter % 2 == 0) {
		CHECK_INT(name_state.calls, ==, 1);
		CHECK_INT(name_state.last_iter, ==, iter);
		CHECK_STR(name_state.last_name, name);
	} else {
		CHECK_INT(name_state.calls, ==, 0);
	}

	/* Every fourth iteration detaches the probe again; every other even one leaves it on. */
	if (iter % 4 == 0) {
		CHECK_INT(unreg(name_probe, &name_state), ==, 0);
		CHECK_INT(unreg(name_probe, &name_state), ==, -ENOENT);
		nr_caps = 0;
		fire(iter, val, name);
		CHECK_INT(nr_caps, ==, 3);
		if (nr_caps == 3)
			check_fire_records(0, iter, val, name, evs);
		CHECK_INT(name_state.calls, ==, 1);
	}

	CHECK_INT(unregister_trace_dlmain_tick(tick_probe, &tick_data), ==, 0);

	CHECK_INT(dlclose(h), ==, 0);
	/* Really unloaded, and its events with it. */
	h = dlopen(DLMOD_PATH, RTLD_NOW | RTLD_NOLOAD);
	CHECK(h == NULL);
	if (h)
		dlclose(h);
	for (i = 0; i < 3; i++)
		CHECK(usertp_event_find("dlmod", ev_names[i]) == NULL);
}

int main(void)
{
	struct usertp_listener *l = NULL;
	pthread_t thread;
	unsigned long hits, progress, expected;
	struct timespec t0, t1;
	int iter, failed_before;

	main_tid = (int)syscall(SYS_gettid);
	clock_gettime(CLOCK_MONOTONIC, &t0);

	CHECK_INT(usertp_listener_create("dlmod:*", on_record, NULL, &l), ==, 0);
	if (!l)
		return harness_done();
	CHECK_INT(pthread_create(&thread, NULL, ticker, NULL), ==, 0);
	CHECK(wait_change(&ticker_progress, 0));

	for (iter = 0; iter < ITERATIONS; iter++) {
		failed_before = harness_failed;
		run_iteration(iter);
		if (harness_failed != failed_before) {
			fprintf(stderr, "iteration %d failed; stopping\n", iter);
			break;
		}
	}
	CHECK_INT(iter, ==, ITERATIONS);

	/* Three records per dlmod_fire(): once per iteration, twice in every fourth. */
	expected = 3ul * ITERATIONS + 3ul * ((ITERATIONS + 3) / 4);
	CHECK_INT(total_records, ==, expected);
	CHECK_INT(caps_overflow, ==, 0);
	CHECK_INT(caps_foreign_thread, ==, 0);
	CHECK_INT(usertp_listener_lost(l), ==, 0);

	/* The ticker's probe ran, always with its own arguments. */
	CHECK_INT(register_trace_dlmain_tick(tick_probe, &tick_data), ==, 0);
	CHECK(wait_change(&tick_hits, __atomic_load_n(&tick_hits, __ATOMIC_RELAXED)));
	CHECK_INT(unregister_trace_dlmain_tick(tick_probe, &tick_data), ==, 0);
	tracepoint_synchronize_unregister();
	hits = __atomic_load_n(&tick_hits, __ATOMIC_RELAXED);
	progress = __atomic_load_n(&ticker_progress, __ATOMIC_RELAXED);
	CHECK(wait_change(&ticker_progress, progress));
	sleep_ms(5);
	CHECK_INT(__atomic_load_n(&tick_hits, __ATOMIC_RELAXED), ==, hits);
	CHECK_INT(__atomic_load_n(&tick_bad, __ATOMIC_RELAXED), ==, 0);

	__atomic_store_n(&ticker_stop, 1, __ATOMIC_RELAXED);
	pthread_join(thread, NULL);
	usertp_listener_destroy(l);

	/* The module can still be loaded and used after all that, with a fresh listener. */
	{
		void *h = dlopen(DLMOD_PATH, RTLD_NOW | RTLD_LOCAL);
		const struct usertp_event *evs[3];
		dlmod_fire_fn fire;
		int i;

		CHECK(h != NULL);
		if (h) {
			fire = (dlmod_fire_fn)dlsym(h, DLMOD_FIRE);
			for (i = 0; i < 3; i++)
				evs[i] = usertp_event_find("dlmod", ev_names[i]);
			CHECK(evs[0] && evs[1] && evs[2]);
			nr_caps = 0;
			if (fire)
				fire(7, 0x7, "after");
			CHECK_INT(nr_caps, ==, 0); /* the listener is gone */
			CHECK_INT(usertp_listener_create("dlmod:dlmod_name", on_record, NULL, &l),
				  ==, 0);
			if (fire && l) {
				fire(8, 0x8, "again");
				CHECK_INT(nr_caps, ==, 1);
				if (nr_caps == 1)
					CHECK(caps[0].ev == evs[1]);
			}
			/* The listener outlives the module: its event goes, it stays usable. */
			CHECK_INT(dlclose(h), ==, 0);
			CHECK(usertp_event_find("dlmod", "dlmod_name") == NULL);
			usertp_listener_destroy(l);
		}
	}

	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%d iterations, %lu records, %lu ticks (%lu through the probe) in %.2f s\n", iter,
	       total_records, __atomic_load_n(&ticker_progress, __ATOMIC_RELAXED), hits,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	return harness_done();
}
