/* SPDX-License-Identifier: MIT */
/*
 * worker-pool - a small multi-threaded program instrumented with usertp, as a tutorial.
 *
 * The main thread queues jobs; a pool of worker threads takes them, "processes" them (a
 * checksum over a few chunks of memory) and reports them done.  Each step hits a trace event
 * defined in worker-pool-trace.h.  The program also keeps its own counts, so that a trace can
 * be checked against them.
 *
 *	worker-pool [-t] [-w WORKERS] [-b US] [JOBS]
 *
 *	-t	print every event as it happens (an in-process listener, see below)
 *	-b US	resize jobs first wait US microseconds for their input (a sleep standing for
 *		a read from disk), so that a trace shows jobs blocked as well as preempted
 *
 * Each job's processing is also a span ("process"), and the queue's depth a counter
 * ("queue-depth"), with <usertp/track.h>: enable 'usertp:*' and sum them up with
 * `usertp report --spans`.  A slow job says so printf-style, with <usertp/printk.h>: enable
 * 'ftrace:*'.
 *
 * Two ways of attaching to tracepoints from inside a program are shown:
 *   - register_trace_job_done(probe, data): a probe called with the tracepoint's arguments,
 *     as a kernel module would attach one;
 *   - usertp_listener_create("jobs:*", ...): receives the binary records of the events, which
 *     usertp_event_print() turns into text with the events' TP_printk.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Exactly one file defines the events: */
#define CREATE_TRACE_POINTS
#include "worker-pool-trace.h"

#include <usertp/usertp.h>
/* Spans and counters need no trace header of their own: libusertp's (system "usertp"). */
#include <usertp/track.h>
#include <usertp/printk.h>

#define MAX_CHUNKS 8

struct job {
	int id;
	enum job_kind kind;
	char name[32];
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t more;
	struct job *jobs;
	int nr_jobs, next, queued, closed;
} queue = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0, 0, 0, 0 };

/* The program's own counts, to compare a trace with. */
static unsigned long nr_queued, nr_started, nr_done, nr_slow;

/* What the jobs read, filled at start-up. */
static unsigned char job_input[16 * 1024];
static unsigned int checksum_sink; /* keeps the work from being optimised away */

static const char *const kind_names[] = { "resize", "compress", "checksum" };

static unsigned long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long)ts.tv_sec * 1000000000ul + (unsigned long)ts.tv_nsec;
}

/* How long resize jobs wait for their input (-b), in microseconds. */
static long input_wait_us;

/* A number from the command line, from LO to HI, or the program ends with status 2. */
static long parse_number(const char *text, long lo, long hi, const char *what)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(text, &end, 10);
	if (errno || end == text || *end || n < lo || n > hi) {
		fprintf(stderr, "worker-pool: %s: '%s' is not a number from %ld to %ld\n", what,
			text, lo, hi);
		exit(2);
	}
	return n;
}

/* The "work": checksum a few chunks of memory, timing each chunk. */
static unsigned int process(const struct job *job, unsigned int *chunk_us, int *nr_chunks)
{
	unsigned int sum = (unsigned int)job->id;
	int c, i;

	if (job->kind == JOB_RESIZE && input_wait_us) {
		struct timespec wait = { input_wait_us / 1000000, input_wait_us % 1000000 * 1000 };

		while (nanosleep(&wait, &wait) && errno == EINTR)
			;
	}

	*nr_chunks = 1 + job->id % MAX_CHUNKS;
	for (c = 0; c < *nr_chunks; c++) {
		unsigned long start = now_ns();

		for (i = 0; i < (int)sizeof(job_input); i++)
			sum = (sum ^ job_input[i]) * 16777619u + (unsigned int)c;
		chunk_us[c] = (unsigned int)((now_ns() - start) / 1000);
	}
	return sum;
}

static void *worker(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "worker-%ld", (long)arg);
	pthread_setname_np(pthread_self(), name);
	for (;;) {
		unsigned int chunk_us[MAX_CHUNKS], flags = 0, process_result;
		unsigned long start, took;
		struct job job;
		int nr_chunks, depth;

		pthread_mutex_lock(&queue.lock);
		while (queue.next == queue.queued && !queue.closed)
			pthread_cond_wait(&queue.more, &queue.lock);
		if (queue.next == queue.queued) {
			pthread_mutex_unlock(&queue.lock);
			return NULL;
		}
		job = queue.jobs[queue.next++];
		depth = queue.queued - queue.next;
		pthread_mutex_unlock(&queue.lock);
		usertp_counter("queue-depth", depth);

		/* A tracepoint is an ordinary call; while the event is off it is a nop. */
		trace_job_started(job.id, job.kind, job.name);
		__atomic_fetch_add(&nr_started, 1, __ATOMIC_RELAXED);

		start = now_ns();
		usertp_span_begin("process");
		process_result = process(&job, chunk_us, &nr_chunks);
		usertp_span_end("process");
		if (job.id % 5 == 0)
			flags |= JOB_FLAG_CACHED;
		if (nr_chunks > 6)
			flags |= JOB_FLAG_LARGE;

		__atomic_store_n(&checksum_sink, process_result, __ATOMIC_RELAXED);
		took = now_ns() - start;
		trace_job_done(job.id, name, took, flags, chunk_us, nr_chunks);
		__atomic_fetch_add(&nr_done, 1, __ATOMIC_RELAXED);
		if (took > 200000) {
			__atomic_fetch_add(&nr_slow, 1, __ATOMIC_RELAXED);
			/*
			 * printf-style, with no event to declare: recorded as the kernel's
			 * trace_printk() (ftrace:bprint), the text made when the trace is read.
			 */
			usertp_printk("slow job %d (%s): %lu us\n", job.id, job.name, took / 1000);
		}
		/* Recorded only when its TP_CONDITION holds (the job took over 200 us). */
		trace_job_slow(job.id, took);
	}
}

/*
 * A probe: called in the tracing thread with the tracepoint's arguments, after the data
 * pointer given at registration.
 */
static void sum_done_ns(void *data, int id, const char *worker_name, unsigned long ns,
			unsigned int flags, const unsigned int *chunk_us, int nr_chunks)
{
	(void)id, (void)worker_name, (void)flags, (void)chunk_us, (void)nr_chunks;
	__atomic_fetch_add((unsigned long *)data, ns, __ATOMIC_RELAXED);
}

/* A listener: receives each record and prints it as the kernel's trace file would. */
static void print_record(const struct usertp_event *ev, const void *record, unsigned int size,
			 void *arg)
{
	const struct usertp_trace_entry *ent = record;
	char comm[16] = "", text[512];

	(void)arg;
	pthread_getname_np(pthread_self(), comm, sizeof(comm));
	if (usertp_event_print(ev, record, size, text, sizeof(text)) < 0)
		snprintf(text, sizeof(text), "[bad record]");
	flockfile(stdout);
	printf("%16s-%-7d %s: %s\n", comm, ent->pid, usertp_event_name(ev), text);
	funlockfile(stdout);
}

int main(int argc, char **argv)
{
	struct usertp_listener *listener = NULL;
	unsigned long total_ns = 0;
	int opt, nr_workers = 4, nr_jobs = 64, i, ret;
	pthread_t *threads;
	bool print = false;

	while ((opt = getopt(argc, argv, "tw:b:h")) != -1) {
		switch (opt) {
		case 't':
			print = true;
			break;
		case 'w':
			nr_workers = (int)parse_number(optarg, 1, 256, "-w: workers");
			break;
		case 'b':
			input_wait_us = parse_number(optarg, 0, 10000000, "-b: microseconds");
			break;
		default:
			fprintf(stderr, "usage: %s [-t] [-w WORKERS] [-b US] [JOBS]\n", argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (optind < argc)
		nr_jobs = (int)parse_number(argv[optind], 0, 100000000, "jobs");

	if (print) {
		ret = usertp_listener_create("jobs:*", print_record, NULL, &listener);
		if (ret) {
			fprintf(stderr, "worker-pool: cannot listen: %s\n", strerror(-ret));
			return 1;
		}
	}
	ret = register_trace_job_done(sum_done_ns, &total_ns);
	if (ret)
		fprintf(stderr, "worker-pool: cannot attach probe: %s\n", strerror(-ret));

	for (i = 0; i < (int)sizeof(job_input); i++)
		job_input[i] = (unsigned char)(i * 7);
	queue.jobs = calloc((size_t)nr_jobs + 1, sizeof(*queue.jobs));
	threads = calloc((size_t)nr_workers, sizeof(*threads));
	if (!queue.jobs || !threads)
		return 1;
	for (i = 0; i < nr_workers; i++)
		pthread_create(&threads[i], NULL, worker, (void *)(long)i);

	for (i = 0; i < nr_jobs; i++) {
		struct job *job = &queue.jobs[i];
		int depth;

		job->id = i;
		job->kind = (enum job_kind)(i % 3);
		snprintf(job->name, sizeof(job->name), "%s-%d", kind_names[job->kind], i);
		trace_job_queued(job->id, job->kind, job->name);
		nr_queued++;
		pthread_mutex_lock(&queue.lock);
		queue.queued++;
		depth = queue.queued - queue.next;
		pthread_cond_signal(&queue.more);
		pthread_mutex_unlock(&queue.lock);
		usertp_counter("queue-depth", depth);
	}
	pthread_mutex_lock(&queue.lock);
	queue.closed = 1;
	pthread_cond_broadcast(&queue.more);
	pthread_mutex_unlock(&queue.lock);
	for (i = 0; i < nr_workers; i++)
		pthread_join(threads[i], NULL);

	/* Detach: once these return, neither the probe nor the listener runs any more. */
	unregister_trace_job_done(sum_done_ns, &total_ns);
	tracepoint_synchronize_unregister();
	usertp_listener_destroy(listener);

	fprintf(stderr, "worker-pool: %lu queued, %lu started, %lu done, %lu slow, %lu us working\n",
		nr_queued, nr_started, nr_done, nr_slow, total_ns / 1000);
	free(threads);
	free(queue.jobs);
	return 0;
}
