/* SPDX-License-Identifier: MIT */
/*
 * test-rb-signal.c - events written from a signal handler that interrupts a writer of the same
 * buffer (a tracepoint in a signal handler): the handler's reservation nests inside the
 * interrupted one, wherever the signal lands.  Another thread sends signals to the writer
 * without pause, one at a time.
 *
 * First the buffer (17 pages, overwrite) goes around several times with small events, so that
 * every page holds bytes of them.  Then the writer and the handler write events of 2100 bytes,
 * one per page (two do not fit), and the writer checks a snapshot every few events: every
 * entry well-formed and intact, the writer's and the handler's seqs each increasing without
 * gaps, timestamps never going back, and no small event left once the buffer went around
 * (which would mean that bytes of a page's earlier use were read as events).
 *
 * Under ThreadSanitizer, signals are delivered at its interceptors only: the test still runs,
 * but the handler seldom lands in the middle of a reservation there.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>

#include "rb-test.h"

#define BIG 2100
#define EVENTS 30000
#define SIGNALS 200000
#define CHECK_EVERY 4

enum { TAG_MAIN, TAG_HANDLER, TAG_SMALL };

static struct usertp__rb rb;
static uint64_t handler_seq;
static unsigned long handled;
static int stop;

static void on_signal(int sig)
{
	(void)sig;
	if (rbt_write(&rb, 0, BIG, TAG_HANDLER, handler_seq, NULL, NULL))
		handler_seq++;
	__atomic_fetch_add(&handled, 1, __ATOMIC_RELEASE);
}

static void *signaller(void *arg)
{
	pthread_t writer = *(pthread_t *)arg;

	unsigned long n;

	/* One signal at a time (pending ones would merge), as fast as they are handled. */
	for (n = 0; n < SIGNALS && !__atomic_load_n(&stop, __ATOMIC_RELAXED); n++) {
		pthread_kill(writer, SIGUSR1);
		while (__atomic_load_n(&handled, __ATOMIC_ACQUIRE) == n &&
		       !__atomic_load_n(&stop, __ATOMIC_RELAXED))
			;
	}
	return NULL;
}

/* Check the snapshot; return false (after saying why) when it is wrong. */
static bool check(uint64_t main_written)
{
	struct usertp__rb_snapshot snap;
	uint64_t next[2] = { 0, 0 }, last_ts = 0;
	bool any[2] = { false, false }, ok = true;
	struct rbt_walk w;
	size_t k;

	if (usertp__rb_snapshot(rb.region, rb.size, &snap)) {
		fprintf(stderr, "snapshot failed\n");
		return false;
	}
	rbt_walk_cpu(&snap.cpus[0], &w);
	if (w.einval || w.bad_ret || w.out_of_page) {
		fprintf(stderr, "after %llu: %u malformed entries (first on page %llu), %u outside\n",
			(unsigned long long)main_written, w.einval + w.bad_ret,
			(unsigned long long)snap.cpus[0].pages[w.einval_page].page_no, w.out_of_page);
		ok = false;
	}
	for (k = 0; k < w.n; k++) {
		uint32_t tag;
		uint64_t seq;

		if (!payload_check(w.e[k].data, w.e[k].size, &tag, &seq) || tag > TAG_SMALL) {
			fprintf(stderr, "after %llu: entry %zu corrupt\n", (unsigned long long)main_written, k);
			ok = false;
			continue;
		}
		if (tag == TAG_SMALL) {
			fprintf(stderr, "after %llu: entry %zu (page %llu, used %u) is a small event, seq %llu\n",
				(unsigned long long)main_written, k,
				(unsigned long long)snap.cpus[0].pages[w.e[k].page].page_no,
				snap.cpus[0].pages[w.e[k].page].used, (unsigned long long)seq);
			ok = false;
			continue;
		}
		if (any[tag] && seq != next[tag]) {
			fprintf(stderr, "after %llu: entry %zu: %s seq %llu, expected %llu\n",
				(unsigned long long)main_written, k, tag ? "handler" : "writer",
				(unsigned long long)seq, (unsigned long long)next[tag]);
			ok = false;
		}
		if (w.e[k].ts < last_ts) {
			fprintf(stderr, "after %llu: entry %zu: time goes back\n",
				(unsigned long long)main_written, k);
			ok = false;
		}
		any[tag] = true;
		next[tag] = seq + 1;
		last_ts = w.e[k].ts;
	}
	/* The writer's last event is the newest one of its own (unless signals came so fast
	 * that the handler's events filled the buffer since). */
	if (any[TAG_MAIN] ? next[TAG_MAIN] != main_written : w.n + 1 < rb.nr_pages) {
		fprintf(stderr, "after %llu: the writer's last event is missing\n",
			(unsigned long long)main_written);
		ok = false;
	}
	free(w.e);
	usertp__rb_snapshot_free(&snap);
	return ok;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	pthread_t self = pthread_self(), tid;
	unsigned int failures = 0;
	uint64_t seq, dropped = 0;
	sigset_t usr1;

	CHECK_INT(usertp__rb_create(&rb, 1, 64, true), ==, 0);
	CHECK_INT(rb.nr_pages, ==, 17);
	for (seq = 0; seq < 17 * 4 * 127; seq++)
		rbt_write(&rb, 0, PAYLOAD_HEAD, TAG_SMALL, seq, NULL, NULL);

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	CHECK_INT(sigaction(SIGUSR1, &sa, NULL), ==, 0);
	CHECK_INT(pthread_create(&tid, NULL, signaller, &self), ==, 0);
	for (seq = 0; seq < EVENTS; seq++) {
		if (!rbt_write(&rb, 0, BIG, TAG_MAIN, seq, NULL, NULL)) {
			dropped++;
			break;
		}
		/* Once the small events are all gone: check now and then (with the signal
		 * blocked: the nesting under test is the writer's). */
		if (seq >= 17 && seq % CHECK_EVERY == 0) {
			bool ok;

			pthread_sigmask(SIG_BLOCK, &usr1, NULL);
			ok = check(seq + 1);
			pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
			if (!ok && ++failures >= 5)
				break;
		}
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(tid, NULL);
	signal(SIGUSR1, SIG_IGN);
	printf("%llu events written, %llu by the signal handler\n", (unsigned long long)seq,
	       (unsigned long long)handler_seq);
	CHECK_INT(dropped, ==, 0);
	CHECK_INT(failures, ==, 0);
	usertp__rb_destroy(&rb);
	return harness_done();
}
