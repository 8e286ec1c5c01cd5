/* SPDX-License-Identifier: MIT */
/*
 * bench-producer.c - a paced source of events for bench-record.sh: threads that fire the
 * benchmark's event (bench-common.h's payload: an int, a long, an unsigned int and a
 * 9-character string) at a given rate, for `usertp record` to record, or for an LTTng
 * session (peer-producer-lttng: the same program built with -DPEER_LTTNG, see peer-fire.h).
 *
 *	bench-producer [-t THREADS] [-s STALL_MS] RATE SECONDS
 *
 * RATE events per second in all (each of the THREADS threads, default 2, takes its share) for
 * SECONDS seconds: RATE x SECONDS events, rounded down to a multiple of THREADS.  The rate is
 * kept by busy-waiting against CLOCK_MONOTONIC: event k of a thread is fired once its
 * deadline, start + k x THREADS / RATE seconds, has come, so the events come evenly spaced,
 * not in bursts.  A thread that falls behind (the machine cannot give it the time) fires its
 * late events at once until it has caught up; how late it was at worst is printed.  -s: every
 * thread sleeps STALL_MS milliseconds once a second (at the same deadlines), then fires what
 * it owes at once, as a thread does after the machine did not run it (a hypervisor's steal):
 * the burst a recorder must drain before the buffers fill.
 *
 * At the end one line on stdout, tab-separated, that bench-record.sh reads:
 *
 *	fired N	seconds S	rate R	late_us L	late_at_ms A	event_ns E	cpu_s C
 *
 * N: the events fired (exactly; recorded + lost must come to it), S: the
 * time from the common start to the end of the last thread, R = N / S, L: the worst lateness
 * of an event against its deadline, in microseconds, A: when that event was due, in milliseconds
 * from the start (to find the burst it fired after in a trace), E: the mean time of one
 * FIRE() (the span around it, less one clock reading: what an event costs
 * its thread, with whatever a recorder does meanwhile), C: the CPU time of this process
 * (user + system, busy-waiting included).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench-common.h"
#include "peer-fire.h"

#define MAX_THREADS 64

struct producer {
	pthread_t thread;
	uint64_t count;	    /* events to fire */
	double period_ns;   /* between two events of this thread */
	uint64_t start_ns;  /* common to all threads */
	uint64_t end_ns;
	uint64_t late_ns;   /* the worst lateness */
	uint64_t late_at_ns; /* when it was due, from the start */
	uint64_t busy_ns;   /* in FIRE() and one clock reading after it */
	uint64_t stall_ns;  /* -s: asleep this long once a second */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *produce(void *arg)
{
	struct producer *p = arg;
	uint64_t now = now_ns(), next_stall = p->start_ns + 1000000000u;

	for (uint64_t k = 0; k < p->count; k++) {
		uint64_t deadline = p->start_ns + (uint64_t)((double)k * p->period_ns);

		if (p->stall_ns && deadline >= next_stall) {
			struct timespec ts = { (time_t)(p->stall_ns / 1000000000u),
					       (long)(p->stall_ns % 1000000000u) };

			nanosleep(&ts, NULL);
			next_stall += 1000000000u;
			now = now_ns();
		}
		while (now < deadline)
			now = now_ns();
		if (now - deadline > p->late_ns) {
			p->late_ns = now - deadline;
			p->late_at_ns = deadline - p->start_ns;
		}
		deadline = now;
		{
			PAYLOAD(k);
			FIRE(a, b, c, s);
		}
		now = now_ns();
		p->busy_ns += now - deadline;
	}
	p->end_ns = now;
	return NULL;
}

static void usage(void)
{
	fputs("usage: bench-producer [-t THREADS] [-s STALL_MS] RATE SECONDS\n", stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	static struct producer prod[MAX_THREADS];
	unsigned long threads = 2, stall_ms = 0;
	double rate, seconds;
	uint64_t total, fired = 0, end = 0, late = 0, late_at = 0, busy = 0, clock_ns = 0;
	struct rusage ru;
	char *end_ptr;
	int opt, ret;

	while ((opt = getopt(argc, argv, "t:s:")) != -1) {
		switch (opt) {
		case 's':
			stall_ms = strtoul(optarg, &end_ptr, 10);
			if (*end_ptr || stall_ms >= 1000)
				usage();
			break;
		case 't':
			threads = strtoul(optarg, &end_ptr, 10);
			if (*end_ptr || !threads || threads > MAX_THREADS)
				usage();
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 2)
		usage();
	rate = strtod(argv[optind], &end_ptr);
	if (*end_ptr || !(rate >= 1))
		usage();
	seconds = strtod(argv[optind + 1], &end_ptr);
	if (*end_ptr || !(seconds > 0))
		usage();
	total = (uint64_t)(rate * seconds) / threads * threads;

	/* A common start a little ahead, so that no thread begins before the others exist. */
	for (unsigned long i = 0; i < threads; i++) {
		prod[i] = (struct producer){ .count = total / threads,
					     .period_ns = 1e9 * (double)threads / rate,
					     .stall_ns = stall_ms * 1000000u };
	}
	prod[0].start_ns = now_ns() + 20000000u;
	for (unsigned long i = 0; i < threads; i++) {
		prod[i].start_ns = prod[0].start_ns;
		ret = pthread_create(&prod[i].thread, NULL, produce, &prod[i]);
		if (ret) {
			fprintf(stderr, "bench-producer: pthread_create: %s\n", strerror(ret));
			return 1;
		}
	}
	for (unsigned long i = 0; i < threads; i++) {
		pthread_join(prod[i].thread, NULL);
		fired += prod[i].count;
		if (prod[i].end_ns > end)
			end = prod[i].end_ns;
		if (prod[i].late_ns > late) {
			late = prod[i].late_ns;
			late_at = prod[i].late_at_ns;
		}
	}
	seconds = (double)(end - prod[0].start_ns) / 1e9;
	for (unsigned long i = 0; i < threads; i++)
		busy += prod[i].busy_ns;
	/* The cost of the clock reading that each measured span includes. */
	for (int i = 0; i < 1000; i++) {
		uint64_t t0 = now_ns(), t1 = now_ns();

		if (i == 0 || t1 - t0 < clock_ns)
			clock_ns = t1 - t0;
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("fired %llu\tseconds %.3f\trate %.0f\tlate_us %llu\tlate_at_ms %llu\tevent_ns %.1f\tcpu_s %.3f\n",
	       (unsigned long long)fired, seconds, (double)fired / seconds,
	       (unsigned long long)(late / 1000), (unsigned long long)(late_at / 1000000),
	       fired ? (double)busy / (double)fired - (double)clock_ns : 0.0,
	       (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
	return 0;
}
