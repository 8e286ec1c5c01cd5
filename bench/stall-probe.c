/* SPDX-License-Identifier: MIT */
/*
 * stall-probe.c - when this machine stops running a CPU, and whether it stops them all at
 * once: one busy thread pinned to each CPU reads CLOCK_MONOTONIC in a loop, and every gap
 * between two readings longer than 0.5 ms is a stall of its CPU (the hypervisor took it,
 * or the kernel ran something else there).  For bench/peers/run.sh's "What the machine
 * allows": a tracer's buffer must hold what a producer fires while its recorder is stalled,
 * and what a stalled producer fires at once when it runs again.
 *
 *	stall-probe SECONDS
 *
 * Tab-separated lines on stdout: per CPU
 *
 *	cpu C	stalls N	stalled_ms T	longest_ms L
 *
 * then one line
 *
 *	all_at_once_ms A	one_at_a_time_ms O
 *
 * A: the time in which every CPU was stalled at once; O: the time in which at least one was
 * and at least one ran.  Nothing else runs on the CPUs meanwhile but what the machine runs.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sysinfo.h>
#include <time.h>

#define STALL_NS 500000 /* a gap longer than this is a stall */
#define MAX_STALLS 20000 /* recorded per CPU, at most */

struct probe {
	pthread_t thread;
	int cpu;
	int64_t end_ns;
	unsigned int nr;
	int64_t from[MAX_STALLS], to[MAX_STALLS];
};

/* One edge of a stall, for the sweep that finds the CPUs stalled at once. */
struct edge {
	int64_t at;
	int delta; /* +1 a stall begins, -1 it ends */
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *probe(void *arg)
{
	struct probe *p = arg;
	cpu_set_t set;
	int64_t last, now;

	CPU_ZERO(&set);
	CPU_SET(p->cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		return NULL; /* (a CPU we may not run on: no stalls seen there) */
	last = now_ns();
	while ((now = now_ns()) < p->end_ns) {
		if (now - last > STALL_NS && p->nr < MAX_STALLS) {
			p->from[p->nr] = last;
			p->to[p->nr++] = now;
		}
		last = now;
	}
	return NULL;
}

static int by_time(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	return x->at < y->at ? -1 : x->at > y->at ? 1 : x->delta - y->delta;
}

int main(int argc, char **argv)
{
	int nr_cpus = get_nprocs(), depth = 0;
	double seconds = argc == 2 ? atof(argv[1]) : 0;
	struct probe *probes;
	struct edge *edges;
	size_t nr_edges = 0;
	int64_t all = 0, some = 0, since = 0;

	if (seconds <= 0) {
		fputs("usage: stall-probe SECONDS\n", stderr);
		return 2;
	}
	probes = calloc((size_t)nr_cpus, sizeof(*probes));
	if (!probes)
		return 1;
	for (int i = 0; i < nr_cpus; i++) {
		probes[i].cpu = i;
		probes[i].end_ns = now_ns() + (int64_t)(seconds * 1e9);
		if (pthread_create(&probes[i].thread, NULL, probe, &probes[i]))
			return 1;
	}
	for (int i = 0; i < nr_cpus; i++)
		pthread_join(probes[i].thread, NULL);
	for (int i = 0; i < nr_cpus; i++)
		nr_edges += 2 * probes[i].nr;
	edges = calloc(nr_edges + 1, sizeof(*edges));
	nr_edges = 0;
	if (!edges)
		return 1;
	for (int i = 0; i < nr_cpus; i++) {
		int64_t total = 0, longest = 0;

		for (unsigned int k = 0; k < probes[i].nr; k++) {
			int64_t len = probes[i].to[k] - probes[i].from[k];

			total += len;
			longest = len > longest ? len : longest;
			edges[nr_edges++] = (struct edge){ probes[i].from[k], 1 };
			edges[nr_edges++] = (struct edge){ probes[i].to[k], -1 };
		}
		printf("cpu %d\tstalls %u\tstalled_ms %.2f\tlongest_ms %.2f\n", i, probes[i].nr,
		       total / 1e6, longest / 1e6);
	}
	/* (Ends sort before beginnings at one instant: stalls that only touch do not overlap.) */
	qsort(edges, nr_edges, sizeof(*edges), by_time);
	for (size_t k = 0; k < nr_edges; k++) {
		if (depth == nr_cpus)
			all += edges[k].at - since;
		else if (depth > 0)
			some += edges[k].at - since;
		depth += edges[k].delta;
		since = edges[k].at;
	}
	printf("all_at_once_ms %.2f\tone_at_a_time_ms %.2f\n", all / 1e6, some / 1e6);
	free(edges);
	free(probes);
	return 0;
}
