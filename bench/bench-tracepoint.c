/* SPDX-License-Identifier: MIT */
/*
 * bench-tracepoint.c - what a tracepoint costs at its call site.
 *
 * Four cases, each a loop of N calls with the payload of the original report (an int, a long,
 * an unsigned int and a 9-character string, all derived from the loop counter):
 *
 *	loop      the loop computing the payload and nothing else (an empty asm consumes it)
 *	disabled  trace_bench_event(payload) with nothing attached: the site is a 5-byte nop
 *	probe     the same call site with a trivial probe attached by register_trace_bench_event()
 *	listener  the same call site with the event enabled by usertp_listener_create(): the
 *	          record is built (header, fields, string copy) and handed to a trivial callback
 *
 * The three tracepoint cases run the very same machine code (run_site()); only what is
 * attached changes, so their difference is the cost of the state, not of code layout.
 *
 * Native mode times each case with clock_gettime(CLOCK_MONOTONIC) around N iterations
 * (N calibrated to a round length), several rounds, and prints the median ns/call.
 *
 * --callgrind mode (run it under valgrind --tool=callgrind --smc-check=all, as run-bench.sh
 * does) counts instructions with callgrind's client requests: per case, it zeroes the
 * counters, runs N1 calls and dumps them ("usertp-bench <case> <N1>"), then the same with
 * N2 = 2 * N1.  The per-call figure is (Ir(N2) - Ir(N1)) / (N2 - N1): every fixed cost (the
 * call to the loop function, the client requests themselves) cancels exactly.  Before them,
 * a warm-up of 1000 calls in a window of its own ("usertp-bench-warm-up", ignored) takes the
 * one-off costs: lazy binding, RCU thread registration, the listener's per-thread buffer,
 * and a few thousand instructions that callgrind puts in the first dump after the set-up.
 * Both windows then hold exactly the same fixed cost.  run-bench.sh reads the dumps'
 * "totals:" lines.
 *
 * Every mode also checks that the cases did what they claim (the probe and the listener saw
 * exactly one hit per call, nothing was attached in the other cases) and exits non-zero when
 * not; it never judges the timings.  --smoke (-s) is the short run ctest uses.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CREATE_TRACE_POINTS
#include "trace-bench.h"

#include <usertp/usertp.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define BENCH_HAVE_CALLGRIND 1
#endif
#endif
#ifndef BENCH_HAVE_CALLGRIND
#define BENCH_HAVE_CALLGRIND 0
#endif

#define NOINLINE __attribute__((noinline, noclone))

/* The 9-character strings of the payload. */
static const char *const words[4] = { "alpha-one", "bravo-two", "charlie-3", "delta-444" };

#define PAYLOAD(i)                                                                                 \
	int a = (int)(i);                                                                          \
	long b = (long)(i) * 3 + 1;                                                                \
	unsigned int c = (unsigned int)(i) ^ 0x5a5au;                                              \
	const char *s = words[(i) & 3]

/* Baseline: compute the payload and hand it to an empty asm so that it must exist. */
NOINLINE static void run_loop(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		PAYLOAD(i);
		__asm__ __volatile__("" : : "r"(a), "r"(b), "r"(c), "r"(s));
	}
}

/* The call site every tracepoint case runs. */
NOINLINE static void run_site(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		PAYLOAD(i);
		trace_bench_event(a, b, c, s);
	}
}

static unsigned long probe_hits;
static unsigned long listener_records;

static void bench_probe(void *data, int a, long b, unsigned int c, const char *s)
{
	(void)a;
	(void)b;
	(void)c;
	(void)s;
	(*(unsigned long *)data)++;
}

static void bench_record(const struct usertp_event *ev, const void *record, unsigned int size,
			 void *arg)
{
	(void)ev;
	(void)record;
	(void)size;
	(*(unsigned long *)arg)++;
}

enum { CASE_LOOP, CASE_DISABLED, CASE_PROBE, CASE_LISTENER, NR_CASES };

static const struct {
	const char *id;
	const char *what;
} cases[NR_CASES] = {
	{ "loop", "empty loop (payload only)" },
	{ "disabled", "disabled tracepoint" },
	{ "probe", "enabled, trivial probe" },
	{ "listener", "enabled, listener (event)" },
};

static struct usertp_listener *listener;
static int failures;

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		fprintf(stderr, "bench-tracepoint: " __VA_ARGS__);                                 \
		failures++;                                                                        \
	} while (0)

static void case_setup(int c)
{
	int ret = 0;
	bool on;

	if (c == CASE_PROBE)
		ret = register_trace_bench_event(bench_probe, &probe_hits);
	else if (c == CASE_LISTENER)
		ret = usertp_listener_create("usertp_bench:bench_event", bench_record,
					     &listener_records, &listener);
	if (ret) {
		fprintf(stderr, "bench-tracepoint: cannot set up case %s: %s\n", cases[c].id,
			strerror(-ret));
		exit(1);
	}
	on = trace_bench_event_enabled();
	if (on != (c == CASE_PROBE || c == CASE_LISTENER))
		FAIL("case %s: trace_bench_event_enabled() is %d\n", cases[c].id, (int)on);
}

static void case_teardown(int c)
{
	if (c == CASE_PROBE) {
		if (unregister_trace_bench_event(bench_probe, &probe_hits))
			FAIL("unregister_trace_bench_event failed\n");
		tracepoint_synchronize_unregister();
	} else if (c == CASE_LISTENER) {
		if (usertp_listener_lost(listener))
			FAIL("the listener lost %lu records\n", usertp_listener_lost(listener));
		usertp_listener_destroy(listener);
		listener = NULL;
	}
	if (trace_bench_event_enabled())
		FAIL("case %s: the tracepoint is still on after teardown\n", cases[c].id);
}

/* Run @n calls of case @c and check that each reached exactly what it should. */
static void case_run(int c, uint64_t n)
{
	unsigned long hits = probe_hits, records = listener_records;

	if (c == CASE_LOOP)
		run_loop(n);
	else
		run_site(n);
	hits = probe_hits - hits;
	records = listener_records - records;
	if (hits != (c == CASE_PROBE ? n : 0) || records != (c == CASE_LISTENER ? n : 0))
		FAIL("case %s: %llu calls gave %lu probe hits and %lu records\n", cases[c].id,
		     (unsigned long long)n, hits, records);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double time_run(int c, uint64_t n)
{
	double t0 = now_ns();

	case_run(c, n);
	return now_ns() - t0;
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

/* Iterations for one round of about @round_ns. */
static uint64_t calibrate(int c, double round_ns)
{
	uint64_t n = 1000;
	double t;

	while ((t = time_run(c, n)) < round_ns / 8 && n < (UINT64_C(1) << 40))
		n *= 2;
	if (t <= 0)
		return n;
	n = (uint64_t)((double)n * round_ns / t);
	return n < 1000 ? 1000 : n;
}

#define MAX_ROUNDS 101

static void bench_native(int rounds, double round_ns, uint64_t fixed_n, int tsv)
{
	int c, r;

	if (!tsv) {
		printf("usertp tracepoint benchmark: median of %d rounds%s\n", rounds,
		       fixed_n ? "" : ", iterations calibrated per case");
		printf("%-28s %12s %10s\n", "what", "iterations", "ns/call");
	}
	for (c = 0; c < NR_CASES; c++) {
		double ns[MAX_ROUNDS];
		uint64_t n;

		case_setup(c);
		n = fixed_n ? fixed_n : calibrate(c, round_ns);
		for (r = 0; r < rounds; r++)
			ns[r] = time_run(c, n) / (double)n;
		case_teardown(c);
		qsort(ns, (size_t)rounds, sizeof(ns[0]), cmp_double);
		if (tsv)
			printf("%s\t%s\t%llu\t%.3f\n", cases[c].id, cases[c].what,
			       (unsigned long long)n, ns[rounds / 2]);
		else
			printf("%-28s %12llu %10.3f\n", cases[c].what, (unsigned long long)n,
			       ns[rounds / 2]);
		fflush(stdout);
	}
}

static int bench_callgrind(uint64_t n1)
{
#if BENCH_HAVE_CALLGRIND
	uint64_t n2 = 2 * n1;
	char label1[64], label2[64];
	int c;

	if (!RUNNING_ON_VALGRIND) {
		fprintf(stderr, "bench-tracepoint: --callgrind needs valgrind --tool=callgrind\n");
		return 2;
	}
	for (c = 0; c < NR_CASES; c++) {
		/* Nothing but the calls between zeroing and dumping: the labels are made first. */
		snprintf(label1, sizeof(label1), "usertp-bench %s %llu", cases[c].id,
			 (unsigned long long)n1);
		snprintf(label2, sizeof(label2), "usertp-bench %s %llu", cases[c].id,
			 (unsigned long long)n2);
		case_setup(c);
		/* Warm-up: one-off costs go to a dump of their own, not into either count. */
		CALLGRIND_ZERO_STATS;
		case_run(c, 1000);
		CALLGRIND_DUMP_STATS_AT("usertp-bench-warm-up");
		CALLGRIND_ZERO_STATS;
		case_run(c, n1);
		CALLGRIND_DUMP_STATS_AT(label1);
		CALLGRIND_ZERO_STATS;
		case_run(c, n2);
		CALLGRIND_DUMP_STATS_AT(label2);
		case_teardown(c);
		printf("%s\t%s\n", cases[c].id, cases[c].what);
	}
	return 0;
#else
	(void)n1;
	fprintf(stderr, "bench-tracepoint: built without <valgrind/callgrind.h>\n");
	return 2;
#endif
}

static void usage(FILE *f)
{
	fprintf(f, "usage: bench-tracepoint [-s|--smoke] [-r ROUNDS] [-n ITERATIONS] [--tsv]\n"
		   "       bench-tracepoint --callgrind [-n N1]   (under valgrind --tool=callgrind)\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "smoke", no_argument, NULL, 's' },	 { "rounds", required_argument, NULL, 'r' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "tsv", no_argument, NULL, 't' },	 { "callgrind", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },	 { NULL, 0, NULL, 0 },
	};
	int smoke = 0, tsv = 0, callgrind = 0, rounds = 0, opt, ret = 0;
	uint64_t n = 0;

	while ((opt = getopt_long(argc, argv, "sr:n:h", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			smoke = 1;
			break;
		case 'r':
			rounds = atoi(optarg);
			if (rounds < 1 || rounds > MAX_ROUNDS) {
				fprintf(stderr, "bench-tracepoint: rounds must be 1..%d\n", MAX_ROUNDS);
				return 2;
			}
			break;
		case 'n':
			n = strtoull(optarg, NULL, 0);
			if (!n) {
				fprintf(stderr, "bench-tracepoint: bad iteration count\n");
				return 2;
			}
			break;
		case 't':
			tsv = 1;
			break;
		case 'c':
			callgrind = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}

	if (callgrind)
		ret = bench_callgrind(n ? n : smoke ? 10000 : 100000);
	else if (smoke) /* about a second in all: 4 cases x 5 rounds x 40 ms, plus calibration */
		bench_native(rounds ? rounds : 5, 40e6, n, tsv);
	else
		bench_native(rounds ? rounds : 11, 100e6, n, tsv);
	if (failures) {
		fprintf(stderr, "bench-tracepoint: %d check(s) failed\n", failures);
		return 1;
	}
	return ret;
}
