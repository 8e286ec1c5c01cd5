/* SPDX-License-Identifier: MIT */
/*
 * layout-fire.c - the bundled example's events (examples/worker-pool/worker-pool-trace.h:
 * strings, a fixed array, a dynamic array, numbers after strings), defined here and fired
 * from threads made with pthread_create().  Built into each layout the layouts test ships:
 * an executable (shared or static libusertp), a library an executable links, a plugin.
 */
#include <pthread.h>
#include <stdio.h>

#define CREATE_TRACE_POINTS
#include "worker-pool-trace.h"

#include "layout.h"

/* One thread's share: @n jobs queued and done. */
void layout_fire_jobs(int thread, int n)
{
	static const unsigned int chunks[3] = { 10, 20, 30 };
	char worker[16], name[32];

	snprintf(worker, sizeof(worker), "worker-%d", thread);
	for (int i = 0; i < n; i++) {
		int id = thread * 1000000 + i;

		snprintf(name, sizeof(name), "job-%d", id);
		trace_job_queued(id, (enum job_kind)(i % 3), name);
		trace_job_done(id, worker, (unsigned long)i * 1000, (unsigned int)i & 7, chunks,
			       1 + i % 3);
	}
}

struct share {
	int thread, n;
};

static void *fire_thread(void *p)
{
	const struct share *s = p;

	layout_fire_jobs(s->thread, s->n);
	return NULL;
}

int layout_fire(int threads, int n)
{
	pthread_t tids[LAYOUT_MAX_THREADS];
	struct share shares[LAYOUT_MAX_THREADS];
	int made = 0;

	for (int t = 0; t < threads && t < LAYOUT_MAX_THREADS; t++) {
		shares[t] = (struct share){ t, n };
		if (pthread_create(&tids[t], NULL, fire_thread, &shares[t])) {
			fprintf(stderr, "layout: pthread_create failed\n");
			break;
		}
		made++;
	}
	for (int t = 0; t < made; t++)
		pthread_join(tids[t], NULL);
	return made == threads ? 2 * threads * n : -1;
}
