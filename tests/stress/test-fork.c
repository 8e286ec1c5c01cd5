/* SPDX-License-Identifier: MIT */
/*
 * test-fork.c - fork() while other threads register probes and hit tracepoints: the child
 * must not deadlock on the library's lock or on liburcu, and must be able to trace, attach
 * and detach probes on its own.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define CREATE_TRACE_POINTS
#include "stress-trace.h"

#include <usertp/usertp.h>

#include "../harness.h"

#define FORKS 200

static int stop;
static unsigned long child_hits;

static void count_probe(void *data, int thread, unsigned long seq)
{
	(void)thread;
	(void)seq;
	__atomic_fetch_add((unsigned long *)data, 1, __ATOMIC_RELAXED);
}

static void *churn(void *arg)
{
	unsigned long hits = 0;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		register_trace_stress_raw(count_probe, &hits);
		trace_stress_raw(1, 1);
		unregister_trace_stress_raw(count_probe, &hits);
		tracepoint_synchronize_unregister();
	}
	return NULL;
}

/* In the child: trace, attach, detach, synchronize; all must work and terminate. */
static int child(void)
{
	alarm(10); /* a deadlock ends as a signal, seen by the parent */
	if (register_trace_stress_raw(count_probe, &child_hits))
		return 2;
	trace_stress_raw(2, 2);
	trace_stress_raw(2, 3);
	if (unregister_trace_stress_raw(count_probe, &child_hits))
		return 3;
	tracepoint_synchronize_unregister();
	trace_stress_raw(2, 4);
	return child_hits == 2 ? 0 : 4;
}

int main(void)
{
	pthread_t thread;
	int i, ok = 0;

	pthread_create(&thread, NULL, churn, NULL);
	for (i = 0; i < FORKS; i++) {
		int status = 0;
		pid_t pid = fork();

		if (pid == 0)
			_exit(child());
		CHECK(pid > 0);
		if (pid < 0)
			break;
		waitpid(pid, &status, 0);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			ok++;
		else
			fprintf(stderr, "child %d: status %#x\n", i, status);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(thread, NULL);
	CHECK_INT(ok, ==, FORKS);
	return harness_done();
}
