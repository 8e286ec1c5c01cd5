/* SPDX-License-Identifier: MIT */
/*
 * peer-event.c - the benchmark's event (an int, a long, an unsigned int and a 9-character
 * string: bench-common.h's payload) fired through one tracer, chosen when it is built:
 *
 *	PEER_NONE	the loop alone (the payload handed to an empty asm): the baseline
 *	PEER_USERTP	trace_bench_event() (trace-bench.h, system usertp_bench)
 *	PEER_LTTNG	LTTng-UST's tracepoint(usertp_bench, bench_event, ...) (peer-lttng-tp.h)
 *	PEER_USDT	DTRACE_PROBE4(usertp_bench, bench_event, ...) (<sys/sdt.h>): a nop until a
 *			uprobe is placed on it
 *	PEER_MARKER	the event as text written to a trace_marker file (--marker PATH), as
 *			programs that log to ftrace do
 *
 *	peer-event [--threads 1|2] [--marker PATH] [--callgrind] N
 *	peer-event --status | --start-only | --start-time
 *
 * Natively it fires N events per thread after a warm-up of N/10, the threads (each pinned to a
 * CPU of its own when there are two) started together by a barrier, and prints
 *
 *	ns_per_event X		each thread's time over its events, the mean of the threads
 *	aggregate_ns X		the wall time from the first start to the last end over all events
 *	cpu_ns_per_event X	the same as the first by the threads' CPU time
 *	events N		all threads' events
 *
 * An untraced program: --status fires one event in the main thread, waits 100 ms (for
 * threads a tracer starts), and prints "threads N" and "rss_kb N" (/proc/self/status);
 * --start-only returns from main at once; --start-time prints CLOCK_MONOTONIC's nanoseconds
 * as main() begins and returns (start-time.c times many starts of each).
 *
 * With --callgrind (under valgrind --tool=callgrind --smc-check=all), in one thread, it runs
 * N, then 2N events, each between zeroed counters and CALLGRIND_DUMP_STATS_AT("peer-bench
 * TRACER EVENTS"), which callgrind-per-event.awk turns into instructions per event.  All
 * tracers run the same loop (run_site()); only the macro FIRE differs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench-common.h"

#include "peer-fire.h"
#include "peer-number.h"

/* The one loop every tracer runs. */
NOINLINE static void run_site(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		PAYLOAD(i);
		FIRE(a, b, c, s);
	}
}

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct worker {
	pthread_t thread;
	int cpu;		/* pinned there, or -1 */
	uint64_t n, start, end, cpu_ns;
};

static pthread_barrier_t ready;

static void *work(void *arg)
{
	struct worker *w = arg;
	uint64_t cpu0;

	if (w->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(w->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	run_site(w->n / 10 + 1);	/* warm-up: first-use costs out of the window */
	pthread_barrier_wait(&ready);
	cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	w->start = now_ns(CLOCK_MONOTONIC);
	run_site(w->n);
	w->end = now_ns(CLOCK_MONOTONIC);
	w->cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	return NULL;
}

/*
 * Under callgrind, in the main thread (the rseq stand-in's CPU 0): a warm-up, then N and 2N
 * events, each between zeroed counters and a dump named "peer-bench TRACER EVENTS".
 */
static int count_instructions(long n)
{
#if BENCH_HAVE_CALLGRIND
	char what[2][64];

	/* Named first: a first call of snprintf() (lazy binding) would weigh on one window. */
	for (long round = 1; round <= 2; round++)
		snprintf(what[round - 1], sizeof(what[0]), "peer-bench %s %ld", TRACER, round * n);
	run_site((uint64_t)n / 10 + 1);
	for (long round = 1; round <= 2; round++) {
		CALLGRIND_ZERO_STATS;
		run_site((uint64_t)(round * n));
		CALLGRIND_DUMP_STATS_AT(what[round - 1]);
	}
	if (!rseq_standin_used()) {
		fprintf(stderr, "peer-event: USERTP_BENCH_RSEQ_STANDIN is set but usertp did not "
				"take its rseq writer\n");
		return 1;
	}
	printf("events %ld\n", 3 * n + n / 10 + 1);
	return 0;
#else
	(void)n;
	return 2;
#endif
}

/* What a program that is not traced carries: its threads and resident memory. */
static int print_status(void)
{
	char line[256];
	FILE *f;

	{
		PAYLOAD(1);
		FIRE(a, b, c, s);
	}
	usleep(100000);
	f = fopen("/proc/self/status", "r");
	if (!f) {
		perror("peer-event: /proc/self/status");
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long v;

		if (sscanf(line, "Threads: %lu", &v) == 1)
			printf("threads %lu\n", v);
		else if (sscanf(line, "VmRSS: %lu", &v) == 1)
			printf("rss_kb %lu\n", v);
	}
	fclose(f);
	return 0;
}

/* The time main() began (nearly: before it, only the test of argv), for start-time.c. */
static int print_start_time(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	printf("%lld\n", (long long)t.tv_sec * 1000000000 + t.tv_nsec);
	return 0;
}

int main(int argc, char **argv)
{
	struct worker w[2];
	const char *marker = NULL;
	bool under_callgrind = false;
	long threads = 1, n = 0;
	uint64_t first = UINT64_MAX, last = 0;
	double per_event = 0, cpu_per_event = 0;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = peer_number("peer-event", argv[++i], 1, 2, "--threads");
		else if (!strcmp(argv[i], "--marker") && i + 1 < argc)
			marker = argv[++i];
		else if (!strcmp(argv[i], "--callgrind"))
			under_callgrind = true;
		else if (!strcmp(argv[i], "--status") && argc == 2)
			return print_status();
		else if (!strcmp(argv[i], "--start-only") && argc == 2)
			return 0;
		else if (!strcmp(argv[i], "--start-time") && argc == 2)
			return print_start_time();
		else if (i == argc - 1 && argv[i][0] != '-')
			n = peer_number("peer-event", argv[i], 1, 1000000000, "events per thread");
		else {
			fprintf(stderr, "usage: peer-event [--threads 1|2] [--marker PATH] "
					"[--callgrind] EVENTS | --status | --start-only | --start-time\n");
			return 2;
		}
	}
	if (!n) {
		fprintf(stderr, "peer-event: how many events? (peer-event -h)\n");
		return 2;
	}
	if (peer_fire_open(marker))
		return 2;
#if BENCH_HAVE_CALLGRIND
	if (under_callgrind && !RUNNING_ON_VALGRIND) {
		fprintf(stderr, "peer-event: --callgrind runs under valgrind --tool=callgrind\n");
		return 2;
	}
#else
	if (under_callgrind) {
		fprintf(stderr, "peer-event: built without <valgrind/callgrind.h>\n");
		return 2;
	}
#endif
	if (under_callgrind)
		return count_instructions(n);
	pthread_barrier_init(&ready, NULL, (unsigned int)threads + 1);
	for (i = 0; i < threads; i++) {
		w[i] = (struct worker){ .n = (uint64_t)n,
					.cpu = threads > 1 && sysconf(_SC_NPROCESSORS_ONLN) > 1 ? i : -1 };
		if (pthread_create(&w[i].thread, NULL, work, &w[i])) {
			fprintf(stderr, "peer-event: cannot start a thread\n");
			return 1;
		}
	}
	pthread_barrier_wait(&ready);
	for (i = 0; i < threads; i++) {
		pthread_join(w[i].thread, NULL);
		per_event += (double)(w[i].end - w[i].start) / (double)n / (double)threads;
		cpu_per_event += (double)w[i].cpu_ns / (double)n / (double)threads;
		first = w[i].start < first ? w[i].start : first;
		last = w[i].end > last ? w[i].end : last;
	}
	printf("ns_per_event %.2f\naggregate_ns %.2f\ncpu_ns_per_event %.2f\nevents %ld\n", per_event,
	       (double)(last - first) / (double)(n * threads), cpu_per_event,
	       (n + n / 10 + 1) * threads);
	return 0;
}
