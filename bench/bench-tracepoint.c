/* SPDX-License-Identifier: MIT */
/*
 * bench-tracepoint.c - what a tracepoint costs at its call site.
 *
 * Every case is a loop of N calls with the payload of the original report (an int, a long,
 * an unsigned int and a 9-character string, all derived from the loop counter):
 *
 *	loop      the loop computing the payload and nothing else (an empty asm consumes it)
 *	clock     the loop and clock_gettime(CLOCK_MONOTONIC): the recorder's mono clock alone,
 *	          for reference (natively only: valgrind hides the vDSO)
 *	disabled  trace_bench_event(payload) with nothing attached: the site is a 5-byte nop
 *	probe     the same call site with a trivial probe attached by register_trace_bench_event()
 *	listener  the same call site with the event enabled by usertp_listener_create(): the
 *	          record is built (header, fields, string copy) and handed to a trivial callback
 *	recorder* the same call site with the event recorded by the embedded recorder into its
 *	          per-CPU ring buffers, in overwrite mode with nothing consuming (the recorder's
 *	          normal mode): with the mono clock (CLOCK_MONOTONIC) or x86-tsc, on one thread
 *	          or on two at once, and with a buffer of 8 KiB that stays in cache
 *
 * All the tracepoint cases run the very same machine code (run_site()); only what is attached
 * changes, so their difference is the cost of the state, not of code layout.
 *
 * The recorder is configured from the environment when the process starts (USERTP_EVENTS and
 * the rest, see recorder.c), so each recorder case runs in a process of its own: run without
 * --case, this program runs the other cases itself and starts itself again, once per recorder
 * case, as `bench-tracepoint --case ID` with the case's environment (cases[].env) and
 * USERTP_OUTPUT pointing to a temporary file.  A process given --case checks that its
 * environment is exactly the case's before it measures anything.  The output the recorder
 * writes at exit is outside every measurement window; the parent then checks it (see
 * check_output(): every event fired was recorded or counted as dropped, and how many times the
 * buffer wrapped) and deletes it.  --list prints the cases and their environment (run-bench.sh
 * uses it to start each case under callgrind).
 *
 * Native mode times each case with clock_gettime(CLOCK_MONOTONIC) around N iterations
 * (N calibrated to a round length), several rounds, and prints the median ns/call and the
 * minimum (the best round: on a shared machine, the one least disturbed).  The two
 * thread cases run two worker threads started together by a barrier, each pinned to a CPU of
 * its own when the process may use two (--no-pin: left to the scheduler, which may put both
 * on one CPU, and then they share its buffer); each round of two threads follows a round of
 * one of them alone, in the same process and on the same buffers.  They print the per-thread
 * cost (each thread's time / its events), the aggregate (the wall time from the first start
 * to the last end / the events of both) and the ratio of the aggregate rate of events to the
 * one-thread rate (the median of the per-round ratios), also by the threads' CPU time
 * (CLOCK_THREAD_CPUTIME_ID), which leaves out the time other processes of a shared machine
 * took from them: 2 x (one thread's CPU ns/event) / (the two threads' mean CPU ns/event).
 *
 * --callgrind mode (run it under valgrind --tool=callgrind --smc-check=all, as run-bench.sh
 * does) counts instructions with callgrind's client requests: per case, it zeroes the
 * counters, runs N1 calls and dumps them ("usertp-bench <case> <events>"), then the same with
 * N2 = 2 * N1.  The per-event figure is (Ir(N2) - Ir(N1)) / (events(N2) - events(N1)): every
 * fixed cost (the call to the loop function, starting the threads' round, the client requests
 * themselves) cancels exactly.  Before them, a warm-up in a window of its own
 * ("usertp-bench-warm-up", ignored) takes the one-off costs: lazy binding, RCU thread
 * registration, the listener's per-thread buffer, the recorder's first pass over its buffer,
 * and a few thousand instructions that callgrind puts in the first dump after the set-up.
 * Both windows then hold exactly the same fixed cost.  run-bench.sh reads the dumps'
 * "totals:" lines.
 *
 * Every mode also checks that the cases did what they claim (the probe and the listener saw
 * exactly one hit per call, nothing was attached in the other cases, the recorder's output
 * accounts for every event fired) and exits non-zero when not; it never judges the timings.
 * --smoke (-s) is the short run ctest uses.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CREATE_TRACE_POINTS
#include "trace-bench.h"

#include <usertp/usertp.h>
#include <usertp/track.h>
#include <usertp/printk.h>

#include "bench-common.h"

extern char **environ;

/* Baseline: compute the payload and hand it to an empty asm so that it must exist. */
NOINLINE static void run_loop(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		PAYLOAD(i);
		__asm__ __volatile__("" : : "r"(a), "r"(b), "r"(c), "r"(s));
	}
}

/* Reference: what the recorder's mono clock costs alone (the vDSO's clock_gettime). */
NOINLINE static void run_clock(uint64_t n)
{
	struct timespec ts;

	for (uint64_t i = 0; i < n; i++) {
		PAYLOAD(i);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		__asm__ __volatile__("" : : "r"(a), "r"(b), "r"(c), "r"(s), "m"(ts));
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

/* The sites of <usertp/track.h>: a span (its begin and its end: two events), a counter. */
NOINLINE static void run_span_site(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		usertp_span_begin("work");
		__asm__ __volatile__("" ::: "memory");
		usertp_span_end("work");
	}
}

NOINLINE static void run_counter_site(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		usertp_counter("queue-depth", (long long)i);
}

/* usertp_printk() with the bench event's payload, and its format: TRACE_EVENT's TP_printk. */
NOINLINE static void run_printk_site(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		PAYLOAD(i);
		usertp_printk("a=%d b=%ld c=%u s=%s", a, b, c, s);
	}
}

static unsigned long probe_hits;
static unsigned long listener_records;
static uint64_t fired; /* calls of the site in this process (all threads) */

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

enum kind { K_LOOP, K_CLOCK, K_DISABLED, K_PROBE, K_LISTENER, K_RECORDER };
/* Which site a case runs: the bench event's (TRACE_EVENT), or <usertp/track.h>'s. */
enum site { SITE_EVENT, SITE_SPAN, SITE_COUNTER, SITE_PRINTK };

/* The recorder's settings each case is run with; every other USERTP_* variable is unset. */
#define REC_EVENTS "USERTP_EVENTS=usertp_bench:*"
static const char *const rec_vars[] = { "USERTP_EVENTS", "USERTP_CLOCK", "USERTP_BUFFER_KB",
					"USERTP_OVERWRITE" };
#define NR_REC_VARS 4

static const struct bench_case {
	const char *id;
	const char *what;
	enum kind kind;
	int threads;
	const char *env[NR_REC_VARS]; /* recorder cases: VAR=value, in rec_vars order */
	unsigned long min_wraps;      /* the output must show the buffer wrapped this often */
	bool all_filtered;	      /* its filter refuses every event: nothing recorded */
	int pid_filter;		      /* listener: a pid filter that lists this thread (1) or not (2) */
	enum site site;
} cases[] = {
	{ "loop", "empty loop (payload only)", K_LOOP, 1, { NULL }, 0, false, 0, SITE_EVENT },
	{ "clock", "clock_gettime(MONOTONIC) alone (reference)", K_CLOCK, 1, { NULL }, 0, false, 0, SITE_EVENT },
	{ "disabled", "disabled tracepoint", K_DISABLED, 1, { NULL }, 0, false, 0, SITE_EVENT },
	{ "probe", "enabled, trivial probe", K_PROBE, 1, { NULL }, 0, false, 0, SITE_EVENT },
	{ "listener", "enabled, listener (event)", K_LISTENER, 1, { NULL }, 0, false, 0, SITE_EVENT },
	/* A pid filter (set_event_pid) that lists the calling thread, and one that does not. */
	{ "listener-pid-pass", "listener, pid filter passes", K_LISTENER, 1, { NULL }, 0, false, 1, SITE_EVENT },
	{ "listener-pid-reject", "listener, pid filter refuses", K_LISTENER, 1, { NULL }, 0, true, 2, SITE_EVENT },
	{ "recorder", "recorder, mono clock", K_RECORDER, 1, { REC_EVENTS }, 1, false, 0, SITE_EVENT },
#if defined(__x86_64__)
	{ "recorder-tsc", "recorder, x86-tsc clock", K_RECORDER, 1,
	  { REC_EVENTS, "USERTP_CLOCK=x86-tsc" }, 1, false, 0, SITE_EVENT },
#endif
	{ "recorder-2t", "recorder, mono, 2 threads", K_RECORDER, 2, { REC_EVENTS }, 1, false, 0, SITE_EVENT },
#if defined(__x86_64__)
	{ "recorder-tsc-2t", "recorder, x86-tsc, 2 threads", K_RECORDER, 2,
	  { REC_EVENTS, "USERTP_CLOCK=x86-tsc" }, 1, false, 0, SITE_EVENT },
#endif
	/*
	 * A filter of two terms, in the kernel's grammar, run in the thread before the record is
	 * stored: one that passes every event (both terms evaluated), one that refuses every
	 * event at its second term (both evaluated, nothing stored).
	 */
	{ "recorder-filter-pass", "recorder, mono, filter passes", K_RECORDER, 1,
	  { "USERTP_EVENTS=usertp_bench:* if a >= 0 && b > 0" }, 1, false, 0, SITE_EVENT },
	{ "recorder-filter-reject", "recorder, mono, filter refuses", K_RECORDER, 1,
	  { "USERTP_EVENTS=usertp_bench:* if a >= 0 && b < 0" }, 0, true, 0, SITE_EVENT },
	/* 2 pages of 4080 bytes: about 144 events, far below the warm-up alone. */
	{ "recorder-8k", "recorder, mono, 8 KiB buffer", K_RECORDER, 1,
	  { REC_EVENTS, NULL, "USERTP_BUFFER_KB=8", "USERTP_OVERWRITE=1" }, 100, false, 0, SITE_EVENT },
	/* <usertp/track.h>, with the default clock: a span (begin and end), a counter. */
	{ "span-disabled", "span (begin + end), disabled", K_DISABLED, 1, { NULL }, 0, false, 0,
	  SITE_SPAN },
	{ "span", "span (begin + end), recorder", K_RECORDER, 1,
	  { "USERTP_EVENTS=usertp:usertp_span" }, 1, false, 0, SITE_SPAN },
	{ "counter-disabled", "counter, disabled", K_DISABLED, 1, { NULL }, 0, false, 0,
	  SITE_COUNTER },
	{ "counter", "counter, recorder", K_RECORDER, 1, { "USERTP_EVENTS=usertp:usertp_counter" },
	  1, false, 0, SITE_COUNTER },
	/* <usertp/printk.h>: the bench event's payload and text, printf-style. */
	{ "printk-disabled", "usertp_printk, disabled", K_DISABLED, 1, { NULL }, 0, false, 0,
	  SITE_PRINTK },
	{ "printk", "usertp_printk, recorder", K_RECORDER, 1, { "USERTP_EVENTS=ftrace:bprint" },
	  1, false, 0, SITE_PRINTK },
};
#define NR_CASES ((int)(sizeof(cases) / sizeof(cases[0])))

/* Recorder cases first fire this many events per thread, unmeasured: every buffer page has
 * been written (and so faulted in) and reused before any measurement. */
#define RECORDER_WARM_UP 100000

static struct usertp_listener *listener;
static int failures;

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		fprintf(stderr, "bench-tracepoint: " __VA_ARGS__);                                 \
		failures++;                                                                        \
	} while (0)

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* CPU time of the calling thread: not counting the time other processes took from it. */
static double thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* --- two threads ------------------------------------------------------------------------ */

#define MAX_THREADS 2

/* Worker threads that run the site together, one round at a time. */
static struct {
	int nr;			/* threads started */
	pthread_t th[MAX_THREADS];
	pthread_barrier_t start, done;
	int active;		/* threads that run in this round */
	int stop;
	uint64_t n;
	double t0[MAX_THREADS], t1[MAX_THREADS]; /* CLOCK_MONOTONIC */
	double cpu_ns[MAX_THREADS];		  /* the thread's CPU time for its calls */
	int cpu[MAX_THREADS];	/* where each ended its round */
	int no_rseq;		/* a thread did not take the recorder's rseq writer (stand-in) */
	int pinned[MAX_THREADS]; /* the CPU each is pinned to, or -1 */
} team;

/* Pin the team's threads each to a CPU of its own (--no-pin: leave them to the scheduler). */
static int pin_threads = 1;

static void *worker(void *arg)
{
	int idx = (int)(intptr_t)arg;

	rseq_standin_set(idx);
	for (;;) {
		pthread_barrier_wait(&team.start);
		if (team.stop)
			return NULL;
		if (idx < team.active) {
			double c0 = thread_cpu_ns();

			team.t0[idx] = now_ns();
			run_site(team.n);
			team.t1[idx] = now_ns();
			team.cpu_ns[idx] = thread_cpu_ns() - c0;
			team.cpu[idx] = sched_getcpu();
			if (!rseq_standin_used())
				team.no_rseq = 1;
			__atomic_fetch_add(&fired, team.n, __ATOMIC_RELAXED);
		}
		pthread_barrier_wait(&team.done);
	}
}

static void team_start(int nr)
{
	cpu_set_t allowed;
	int i, cpu = 0, ret;

	team.nr = nr;
	for (i = 0; i < nr; i++)
		team.pinned[i] = -1;
	/* Each on the next CPU the process may use, when there are enough of them. */
	if (pin_threads && !sched_getaffinity(0, sizeof(allowed), &allowed) &&
	    CPU_COUNT(&allowed) >= nr)
		for (i = 0; i < nr; i++) {
			while (!CPU_ISSET(cpu, &allowed))
				cpu++;
			team.pinned[i] = cpu++;
		}
	if (pthread_barrier_init(&team.start, NULL, (unsigned int)nr + 1) ||
	    pthread_barrier_init(&team.done, NULL, (unsigned int)nr + 1)) {
		fprintf(stderr, "bench-tracepoint: pthread_barrier_init failed\n");
		exit(1);
	}
	for (i = 0; i < nr; i++)
	{
		rseq_standin_set(-2);
		ret = pthread_create(&team.th[i], NULL, worker, (void *)(intptr_t)i);
		rseq_standin_set(0);
		if (ret) {
			fprintf(stderr, "bench-tracepoint: pthread_create failed\n");
			exit(1);
		}
		if (team.pinned[i] >= 0) {
			cpu_set_t one;

			CPU_ZERO(&one);
			CPU_SET(team.pinned[i], &one);
			if (pthread_setaffinity_np(team.th[i], sizeof(one), &one))
				team.pinned[i] = -1;
		}
	}
}

/* One round: the first @active threads run @n calls each, at once; the others wait. */
static void team_round(int active, uint64_t n)
{
	team.active = active;
	team.n = n;
	pthread_barrier_wait(&team.start);
	pthread_barrier_wait(&team.done);
}

static void team_stop(void)
{
	int i;

	team.stop = 1;
	pthread_barrier_wait(&team.start);
	for (i = 0; i < team.nr; i++)
		pthread_join(team.th[i], NULL);
	pthread_barrier_destroy(&team.start);
	pthread_barrier_destroy(&team.done);
	memset(&team, 0, sizeof(team));
}

/* --- the cases ---------------------------------------------------------------------------- */

static void case_setup(const struct bench_case *c)
{
	int ret = 0;
	bool on;

	if (c->kind == K_PROBE)
		ret = register_trace_bench_event(bench_probe, &probe_hits);
	else if (c->kind == K_LISTENER)
		ret = usertp_listener_create("usertp_bench:bench_event", bench_record,
					     &listener_records, &listener);
	if (!ret && c->pid_filter) {
		pid_t tid = c->pid_filter == 1 ? (pid_t)syscall(SYS_gettid) : 1;

		ret = usertp_listener_set_pid_filter(listener, &tid, 1, NULL, 0, false);
	}
	if (ret) {
		fprintf(stderr, "bench-tracepoint: cannot set up case %s: %s\n", c->id,
			strerror(-ret));
		exit(1);
	}
	on = c->site == SITE_SPAN      ? trace_usertp_span_enabled()
	     : c->site == SITE_COUNTER ? trace_usertp_counter_enabled()
	     : c->site == SITE_PRINTK  ? trace_usertp_bprint_enabled()
				       : trace_bench_event_enabled();
	if (on != (c->kind == K_PROBE || c->kind == K_LISTENER || c->kind == K_RECORDER))
		FAIL("case %s: its site's tracepoint is %s\n", c->id, on ? "on" : "off");
	if (c->threads > 1)
		team_start(c->threads);
}

static void case_teardown(const struct bench_case *c)
{
	if (c->threads > 1)
		team_stop();
	if (c->kind == K_PROBE) {
		if (unregister_trace_bench_event(bench_probe, &probe_hits))
			FAIL("unregister_trace_bench_event failed\n");
		tracepoint_synchronize_unregister();
	} else if (c->kind == K_LISTENER) {
		if (usertp_listener_lost(listener))
			FAIL("the listener lost %lu records\n", usertp_listener_lost(listener));
		usertp_listener_destroy(listener);
		listener = NULL;
	}
	if (c->kind != K_RECORDER && trace_bench_event_enabled())
		FAIL("case %s: the tracepoint is still on after teardown\n", c->id);
}

/*
 * Run @n calls of case @c on each of @threads threads (the calling one when 1 and the case
 * has no team) and check that each reached exactly what it should.
 */
static void case_run(const struct bench_case *c, int threads, uint64_t n)
{
	unsigned long hits = probe_hits, records = listener_records;

	if (c->kind == K_LOOP) {
		run_loop(n);
	} else if (c->kind == K_CLOCK) {
		run_clock(n);
	} else if (c->site == SITE_SPAN) {
		run_span_site(n);
		fired += 2 * n;
	} else if (c->site == SITE_COUNTER) {
		run_counter_site(n);
		fired += n;
	} else if (c->site == SITE_PRINTK) {
		run_printk_site(n);
		fired += n;
	} else if (c->threads > 1) {
		team_round(threads, n);
	} else {
		run_site(n);
		fired += n;
	}
	hits = probe_hits - hits;
	records = listener_records - records;
	if (hits != (c->kind == K_PROBE ? n : 0) ||
	    records != (c->kind == K_LISTENER && !c->all_filtered ? n : 0))
		FAIL("case %s: %llu calls gave %lu probe hits and %lu records\n", c->id,
		     (unsigned long long)n, hits, records);
}

/* The environment of case @c, or why not. */
static const char *env_mismatch(const struct bench_case *c)
{
	static char why[160];
	int i;

	/* Other cases only need the recorder off; it ignores its other settings then. */
	for (i = 0; i < (c->kind == K_RECORDER ? NR_REC_VARS : 1); i++) {
		const char *want = c->env[i] ? strchr(c->env[i], '=') + 1 : NULL;
		const char *have = getenv(rec_vars[i]);

		if (want ? !have || strcmp(have, want) : have != NULL) {
			snprintf(why, sizeof(why), "%s is %s%s%s, the case needs %s%s%s", rec_vars[i],
				 have ? "\"" : "", have ? have : "unset", have ? "\"" : "",
				 want ? "\"" : "", want ? want : "it unset", want ? "\"" : "");
			return why;
		}
	}
	if (c->kind == K_RECORDER && !getenv("USERTP_OUTPUT"))
		return "USERTP_OUTPUT is unset (point it at a temporary *.txt file)";
	return NULL;
}

/* --- native timing ------------------------------------------------------------------------ */

static double time_run(const struct bench_case *c, uint64_t n)
{
	double t0 = now_ns();

	case_run(c, 1, n);
	if (c->threads > 1)
		return team.t1[0] - team.t0[0];
	return now_ns() - t0;
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

/* The median and the minimum of @v (sorted in place). */
static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
	return v[n / 2];
}

static double minimum(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
	return v[0];
}

/* Iterations for one round of about @round_ns. */
static uint64_t calibrate(const struct bench_case *c, double round_ns)
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

/* The first start and the last end of the team's last round. */
static double span_start(int threads)
{
	double t = team.t0[0];
	int i;

	for (i = 1; i < threads; i++)
		t = team.t0[i] < t ? team.t0[i] : t;
	return t;
}

static double span_end(int threads)
{
	double t = team.t1[0];
	int i;

	for (i = 1; i < threads; i++)
		t = team.t1[i] > t ? team.t1[i] : t;
	return t;
}

/* One result: the median and the minimum over the rounds of ns per event. */
static void print_row(int tsv, const char *id, const char *what, uint64_t n, double ns,
		      double min)
{
	if (tsv)
		printf("%s\t%s\t%llu\t%.3f\t%.3f\n", id, what, (unsigned long long)n, ns, min);
	else
		printf("%-44s %12llu %10.3f %10.3f\n", what, (unsigned long long)n, ns, min);
	fflush(stdout);
}

/* A note below the table: "#note<TAB>text" in TSV. */
static void print_note(int tsv, const char *text)
{
	printf(tsv ? "#note\t%s\n" : "  %s\n", text);
	fflush(stdout);
}

static void native_case(const struct bench_case *c, int rounds, double round_ns, uint64_t fixed_n,
			int tsv)
{
	double one[MAX_ROUNDS], per[MAX_ROUNDS], agg[MAX_ROUNDS], ratio[MAX_ROUNDS];
	double cpu_ratio[MAX_ROUNDS], cpu_one = 0, cpu_per;
	char id[64], what[128], note[480], pins[80];
	int r, i, apart = 0;
	uint64_t n;

	case_setup(c);
	if (c->kind == K_RECORDER)
		case_run(c, c->threads, RECORDER_WARM_UP);
	n = fixed_n ? fixed_n : calibrate(c, round_ns);
	for (r = 0; r < rounds; r++) {
		one[r] = time_run(c, n) / (double)n;
		if (c->threads == 1)
			continue;
		cpu_one = team.cpu_ns[0] / (double)n;
		case_run(c, c->threads, n);
		per[r] = agg[r] = cpu_per = 0;
		for (i = 0; i < c->threads; i++) {
			per[r] += (team.t1[i] - team.t0[i]) / (double)n / c->threads;
			cpu_per += team.cpu_ns[i] / (double)n / c->threads;
		}
		agg[r] = (span_end(c->threads) - span_start(c->threads)) / ((double)n * c->threads);
		ratio[r] = one[r] / agg[r];
		/* What the threads would do together if nothing else took their CPUs. */
		cpu_ratio[r] = c->threads * cpu_one / cpu_per;
		apart += team.cpu[0] != team.cpu[1];
	}
	if (c->threads > 1 && team.pinned[0] >= 0 && team.pinned[1] >= 0)
		snprintf(pins, sizeof(pins), "threads pinned to CPUs %d and %d", team.pinned[0],
			 team.pinned[1]);
	else
		snprintf(pins, sizeof(pins), "threads not pinned, on different CPUs at the end of "
			 "%d of %d rounds", apart, rounds);
	case_teardown(c);
	if (c->threads == 1) {
		print_row(tsv, c->id, c->what, n, median(one, rounds), minimum(one, rounds));
		return;
	}
	snprintf(what, sizeof(what), "%s: per thread", c->what);
	print_row(tsv, c->id, what, n, median(per, rounds), minimum(per, rounds));
	snprintf(id, sizeof(id), "%s.aggregate", c->id);
	snprintf(what, sizeof(what), "%s: aggregate", c->what);
	print_row(tsv, id, what, n, median(agg, rounds), minimum(agg, rounds));
	snprintf(note, sizeof(note),
		 "%s: aggregate events/s = %.2f x one thread's (wall clock, median of %d paired "
		 "rounds; best rounds: %.2f, %.1f vs %.1f Mevents/s); by the threads' CPU time "
		 "(leaving out what other processes took): %.2f; one thread alone in the same "
		 "process %.2f ns/event, best %.2f; %s",
		 c->id, median(ratio, rounds), rounds, minimum(one, rounds) / minimum(agg, rounds),
		 1e3 / minimum(agg, rounds), 1e3 / minimum(one, rounds), median(cpu_ratio, rounds),
		 median(one, rounds), minimum(one, rounds), pins);
	print_note(tsv, note);
}

/* --- the recorder's output ---------------------------------------------------------------- */

/*
 * Check the trace text the recorder of case @c wrote to @path at exit, after @nr_fired calls:
 * every call is accounted for, as written (overwritten ones still count as written) or as
 * dropped, every event still in the buffer is printed, and the buffer was filled at least
 * c->min_wraps times over.
 *
 * Drops are not failures: in overwrite mode the recorder still drops the new event rather
 * than reuse a page that a writer has not finished, and that happens when two threads write
 * one CPU's buffer (the scheduler put both on that CPU, or one migrated between reading its
 * CPU and writing) and the one preempted inside an event stays off the CPU while the other
 * wraps the whole buffer.  They are counted and shown.
 */
static void check_output(const struct bench_case *c, const char *path, uint64_t nr_fired, int tsv)
{
	unsigned long long entries = 0, written = 0, printed = 0, lost = 0, v, dropped;
	char *line = NULL, note[320];
	unsigned int cpu;
	size_t cap = 0;
	int header = 0;
	FILE *f = fopen(path, "r");

	if (!f) {
		FAIL("case %s: no recorder output %s: %s\n", c->id, path, strerror(errno));
		return;
	}
	while (getline(&line, &cap, f) > 0) {
		if (sscanf(line, "# entries-in-buffer/entries-written: %llu/%llu", &entries,
			   &written) == 2)
			header = 1;
		else if (sscanf(line, "CPU:%u [LOST %llu EVENTS]", &cpu, &v) == 2)
			lost += v; /* overwritten and dropped */
		else if (strstr(line, c->site == SITE_SPAN	 ? " usertp_span: "
				      : c->site == SITE_COUNTER ? " usertp_counter: "
				      : c->site == SITE_PRINTK	 ? ": run_printk_site: a="
								 : " bench_event: a="))
			printed++;
	}
	free(line);
	fclose(f);
	/* LOST lines: per CPU, the events overwritten (written - entries), then the dropped. */
	dropped = lost - (written - entries);
	if (c->all_filtered) {
		/* Every event refused by its filter: nothing in the buffer, nothing lost. */
		if (written || lost || printed)
			FAIL("case %s: %llu events fired, all to be filtered out; the output says %llu "
			     "written, %llu lost\n", c->id, (unsigned long long)nr_fired, written, lost);
		snprintf(note, sizeof(note), "%s: %llu events fired, all filtered out: nothing in the "
			 "buffer, nothing lost", c->id, (unsigned long long)nr_fired);
		print_note(tsv, note);
		return;
	}
	if (!header || !entries || printed != entries || written < entries ||
	    lost < written - entries || written + dropped != nr_fired) {
		FAIL("case %s: %llu events fired; the recorder's output %s says %llu written, "
		     "%llu in the buffer, and prints %llu and %llu lost\n",
		     c->id, (unsigned long long)nr_fired, header ? "" : "(no header)", written,
		     entries, printed, lost);
		return;
	}
	if (written / entries < c->min_wraps)
		FAIL("case %s: the buffer was filled only %llu times over, not %lu\n", c->id,
		     written / entries, c->min_wraps);
	snprintf(note, sizeof(note),
		 "%s: %llu events fired: %llu recorded, %llu dropped%s; %llu left in the buffer at "
		 "exit: it was filled %.0f times over",
		 c->id, (unsigned long long)nr_fired, written, dropped,
		 dropped ? " (the page to reuse held an unfinished event of another thread)" : "",
		 entries, (double)written / (double)entries);
	print_note(tsv, note);
}

/* Split a TSV row "id<TAB>what<TAB>n<TAB>ns<TAB>min" in place. */
static int parse_row(char *line, char **id, char **what, uint64_t *n, double *ns, double *min)
{
	char *f[5], *save = NULL;
	int i;

	line[strcspn(line, "\n")] = 0;
	for (i = 0; i < 5; i++)
		if (!(f[i] = strtok_r(i ? NULL : line, "\t", &save)))
			return -1;
	*id = f[0];
	*what = f[1];
	*n = strtoull(f[2], NULL, 10);
	*ns = strtod(f[3], NULL);
	*min = strtod(f[4], NULL);
	return 0;
}

/*
 * Run recorder case @c in a new process of this program (@self) with the case's environment
 * and a temporary USERTP_OUTPUT, pass its rows on, then check and delete the output.
 */
static void run_child(const struct bench_case *c, const char *self, const char *const *extra_args,
		      int tsv)
{
	const char *tmpdir = getenv("TMPDIR");
	char path[PATH_MAX], output_var[PATH_MAX + 16], *line = NULL;
	const char *argv[16];
	char **envp;
	posix_spawn_file_actions_t fa;
	uint64_t child_fired = 0;
	int fd, pfd[2], status, ret, i, k = 0, rows = 0;
	size_t nenv = 0, cap = 0;
	pid_t pid;
	FILE *in;

	snprintf(path, sizeof(path), "%s/usertp-bench-%s-XXXXXX.txt",
		 tmpdir && *tmpdir ? tmpdir : "/tmp", c->id);
	fd = mkstemps(path, 4);
	if (fd < 0) {
		FAIL("case %s: cannot create a temporary file: %s\n", c->id, strerror(errno));
		return;
	}
	close(fd);
	snprintf(output_var, sizeof(output_var), "USERTP_OUTPUT=%s", path);

	/* This environment less every USERTP_* variable, plus the case's. */
	while (environ[nenv])
		nenv++;
	envp = calloc(nenv + NR_REC_VARS + 2, sizeof(*envp));
	if (!envp) {
		fprintf(stderr, "bench-tracepoint: out of memory\n");
		exit(1);
	}
	for (i = 0; environ[i]; i++)
		if (strncmp(environ[i], "USERTP_", 7))
			envp[k++] = environ[i];
	for (i = 0; i < NR_REC_VARS; i++)
		if (c->env[i])
			envp[k++] = (char *)c->env[i];
	envp[k++] = output_var;

	k = 0;
	argv[k++] = self;
	argv[k++] = "--case";
	argv[k++] = c->id;
	argv[k++] = "--tsv";
	for (i = 0; extra_args[i]; i++)
		argv[k++] = extra_args[i];
	argv[k] = NULL;

	if (pipe(pfd)) {
		FAIL("pipe: %s\n", strerror(errno));
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], STDOUT_FILENO);
	posix_spawn_file_actions_addclose(&fa, pfd[0]);
	posix_spawn_file_actions_addclose(&fa, pfd[1]);
	ret = posix_spawn(&pid, self, &fa, NULL, (char *const *)argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	if (ret) {
		close(pfd[0]);
		FAIL("case %s: cannot start %s: %s\n", c->id, self, strerror(ret));
		goto out;
	}
	in = fdopen(pfd[0], "r");
	while (in && getline(&line, &cap, in) > 0) {
		unsigned long long v;
		char *id, *what;
		uint64_t n;
		double ns, min;

		if (sscanf(line, "#fired\t%llu", &v) == 1) {
			child_fired = v;
		} else if (!strncmp(line, "#note\t", 6)) {
			line[strcspn(line, "\n")] = 0;
			print_note(tsv, line + 6);
		} else if (!parse_row(line, &id, &what, &n, &ns, &min)) {
			print_row(tsv, id, what, n, ns, min);
			rows++;
		}
	}
	free(line);
	if (in)
		fclose(in);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		FAIL("case %s: its process failed (status 0x%x)\n", c->id, status);
		goto out;
	}
	if (!rows || !child_fired) {
		FAIL("case %s: its process printed no result\n", c->id);
		goto out;
	}
	check_output(c, path, child_fired, tsv);
out:
	unlink(path);
	free(envp);
}

/* --- callgrind ---------------------------------------------------------------------------- */

static int callgrind_case(const struct bench_case *c, uint64_t n1)
{
#if BENCH_HAVE_CALLGRIND
	uint64_t n2 = 2 * n1, warm = c->kind == K_RECORDER ? RECORDER_WARM_UP : 1000;
	char label1[64], label2[64];

	if (!RUNNING_ON_VALGRIND) {
		fprintf(stderr, "bench-tracepoint: --callgrind needs valgrind --tool=callgrind\n");
		return 2;
	}
	/* Valgrind hides the vDSO: clock_gettime() is a system call there, whose instructions
	 * are not counted, and not what runs natively.  No figure rather than a wrong one. */
	if (c->kind == K_CLOCK)
		return 0;
	/* Nothing but the calls between zeroing and dumping: the labels are made first.  They
	 * name the events of the window, of all its threads. */
	snprintf(label1, sizeof(label1), "usertp-bench %s %llu", c->id,
		 (unsigned long long)(n1 * (uint64_t)c->threads));
	snprintf(label2, sizeof(label2), "usertp-bench %s %llu", c->id,
		 (unsigned long long)(n2 * (uint64_t)c->threads));
	case_setup(c);
	/* Warm-up: one-off costs go to a dump of their own, not into either count. */
	CALLGRIND_ZERO_STATS;
	case_run(c, c->threads, warm);
	CALLGRIND_DUMP_STATS_AT("usertp-bench-warm-up");
	CALLGRIND_ZERO_STATS;
	case_run(c, c->threads, n1);
	CALLGRIND_DUMP_STATS_AT(label1);
	CALLGRIND_ZERO_STATS;
	case_run(c, c->threads, n2);
	CALLGRIND_DUMP_STATS_AT(label2);
	/* (A case that filters everything out never reaches the writer.) */
	if (c->kind == K_RECORDER && !c->all_filtered &&
	    (c->threads > 1 ? team.no_rseq : !rseq_standin_used()))
		FAIL("case %s: USERTP_BENCH_RSEQ_STANDIN is set but the recorder did not take its "
		     "rseq writer\n", c->id);
	case_teardown(c);
	printf("%s\t%s\n", c->id, c->what);
	return 0;
#else
	(void)c;
	(void)n1;
	fprintf(stderr, "bench-tracepoint: built without <valgrind/callgrind.h>\n");
	return 2;
#endif
}

/* --- main --------------------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bench-tracepoint [-s|--smoke] [-r ROUNDS] [-n ITERATIONS] [--tsv] [--no-pin]\n"
		"                        [--case ID]\n"
		"       bench-tracepoint --callgrind [-s] [-n N1] [--case ID]  (under valgrind "
		"--tool=callgrind)\n"
		"       bench-tracepoint --list                 (cases and the environment each needs)\n"
		"       bench-tracepoint --case ID --check-output FILE --fired N\n"
		"Without --case: every case; the recorder cases each in a process of their own.\n");
}

static const struct bench_case *find_case(const char *id)
{
	int i;

	for (i = 0; i < NR_CASES; i++)
		if (!strcmp(cases[i].id, id))
			return &cases[i];
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "smoke", no_argument, NULL, 's' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "tsv", no_argument, NULL, 't' },
		{ "callgrind", no_argument, NULL, 'c' },
		{ "case", required_argument, NULL, 'C' },
		{ "list", no_argument, NULL, 'l' },
		{ "check-output", required_argument, NULL, 'o' },
		{ "fired", required_argument, NULL, 'f' },
		{ "no-pin", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int smoke = 0, tsv = 0, callgrind = 0, list = 0, rounds = 0, opt, ret = 0, i, k = 0;
	const struct bench_case *only = NULL;
	const char *check = NULL, *why;
	const char *extra[8];
	char rounds_arg[16], n_arg[32], self[PATH_MAX];
	uint64_t n = 0, check_fired = 0;
	double round_ns;
	ssize_t len;

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
		case 'C':
			only = find_case(optarg);
			if (!only) {
				fprintf(stderr, "bench-tracepoint: no case %s (see --list)\n", optarg);
				return 2;
			}
			break;
		case 'l':
			list = 1;
			break;
		case 'o':
			check = optarg;
			break;
		case 'f':
			check_fired = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			pin_threads = 0;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || (check && (!only || only->kind != K_RECORDER || !check_fired))) {
		usage(stderr);
		return 2;
	}

	if (list) {
		/* id, then the case's environment: VAR=value ... (none: runs in any process) */
		for (i = 0; i < NR_CASES; i++) {
			int j;

			printf("%s", cases[i].id);
			for (j = 0; j < NR_REC_VARS; j++)
				if (cases[i].env[j])
					printf("\t%s", cases[i].env[j]);
			printf("\n");
		}
		return 0;
	}
	if (check) {
		check_output(only, check, check_fired, 1);
		return failures ? 1 : 0;
	}

	/* Many short rounds: on a shared machine some of them run undisturbed (the minimum).
	 * smoke: about a second in all (10 cases x 3 rounds x 5 ms, plus calibration, the
	 * recorder's warm-up and processes) */
	if (!rounds)
		rounds = smoke ? 3 : 21;
	round_ns = smoke ? 5e6 : 50e6;
	if (!n && callgrind)
		n = smoke ? 10000 : 100000;

	if (only) {
		why = env_mismatch(only);
		if (why) {
			fprintf(stderr, "bench-tracepoint: case %s: %s\n", only->id, why);
			return 2;
		}
		if (callgrind)
			ret = callgrind_case(only, n);
		else
			native_case(only, rounds, round_ns, n, tsv);
		if (only->kind == K_RECORDER && !ret)
			printf("#fired\t%llu\n", (unsigned long long)fired);
	} else if (getenv("USERTP_EVENTS")) {
		fprintf(stderr, "bench-tracepoint: unset USERTP_EVENTS: every case sets up its own "
				"tracing\n");
		return 2;
	} else if (callgrind) {
		/* The recorder cases need processes of their own: run-bench.sh starts them. */
		for (i = 0; i < NR_CASES && !ret; i++)
			if (cases[i].kind != K_RECORDER)
				ret = callgrind_case(&cases[i], n);
	} else {
		len = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (len <= 0) {
			fprintf(stderr, "bench-tracepoint: cannot find my own executable\n");
			return 1;
		}
		self[len] = 0;
		if (smoke)
			extra[k++] = "--smoke";
		if (!pin_threads)
			extra[k++] = "--no-pin";
		snprintf(rounds_arg, sizeof(rounds_arg), "%d", rounds);
		extra[k++] = "-r";
		extra[k++] = rounds_arg;
		if (n) {
			snprintf(n_arg, sizeof(n_arg), "%llu", (unsigned long long)n);
			extra[k++] = "-n";
			extra[k++] = n_arg;
		}
		extra[k] = NULL;
		if (!tsv) {
			printf("usertp tracepoint benchmark: median of %d rounds%s\n", rounds,
			       n ? "" : ", iterations calibrated per case");
			printf("%-44s %12s %10s %10s\n", "what", "iterations", "ns/call", "best");
		}
		for (i = 0; i < NR_CASES; i++) {
			if (cases[i].kind == K_RECORDER) {
				run_child(&cases[i], self, extra, tsv);
			} else {
				why = env_mismatch(&cases[i]);
				if (why) {
					fprintf(stderr, "bench-tracepoint: %s\n", why);
					return 2;
				}
				native_case(&cases[i], rounds, round_ns, n, tsv);
			}
		}
	}
	if (failures) {
		fprintf(stderr, "bench-tracepoint: %d check(s) failed\n", failures);
		return 1;
	}
	return ret;
}
