/* SPDX-License-Identifier: MIT */
/*
 * pid-listener - usertp_listener_set_pid_filter() in a program of its own events: which
 * threads' records a listener gets with a pid list, a notrace list, both, none; a bad pid
 * changing nothing; event-fork following a thread that a listed thread creates (and not one
 * that an unlisted thread creates) and a forked child, and not following without it; listed
 * threads taken off when they exit; and pid filters replaced over and over while four threads
 * record (every record from a thread that one of the two filters lets through).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <usertp/usertp.h>

#define CREATE_TRACE_POINTS
#include "cons-prog-trace.h"

#include "../harness.h"

#define MAX_TIDS 16

/* Records per thread id. */
static struct {
	int tid;
	unsigned long n;
} seen[MAX_TIDS];
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static int forbidden_tid; /* the threads test: records of it are counted as wrong */
static unsigned long wrong;

static void on_record(const struct usertp_event *ev, const void *record, unsigned int size,
		      void *arg)
{
	int tid;

	(void)ev, (void)size, (void)arg;
	memcpy(&tid, (const char *)record + 4, 4); /* common_pid */
	if (tid == __atomic_load_n(&forbidden_tid, __ATOMIC_RELAXED))
		__atomic_fetch_add(&wrong, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&seen_lock);
	for (int i = 0; i < MAX_TIDS; i++)
		if (seen[i].tid == tid || !seen[i].tid) {
			seen[i].tid = tid;
			seen[i].n++;
			break;
		}
	pthread_mutex_unlock(&seen_lock);
}

static unsigned long seen_of(int tid)
{
	unsigned long n = 0;

	pthread_mutex_lock(&seen_lock);
	for (int i = 0; i < MAX_TIDS; i++)
		if (seen[i].tid == tid)
			n = seen[i].n;
	pthread_mutex_unlock(&seen_lock);
	return n;
}

static void seen_clear(void)
{
	pthread_mutex_lock(&seen_lock);
	memset(seen, 0, sizeof(seen));
	pthread_mutex_unlock(&seen_lock);
}

static int gettid_(void)
{
	return (int)syscall(SYS_gettid);
}

/*
 * A helper thread that fires on request: the test asks it to fire @n events (or to create a
 * thread that fires them, or to exit) and waits until it has.
 */
enum { CMD_NONE, CMD_FIRE, CMD_SPAWN, CMD_EXIT };
struct helper {
	pthread_t thread;
	int tid;
	int cmd, n;
	int spawned_tid; /* CMD_SPAWN: the thread it made */
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

static void fire(int n)
{
	for (int i = 0; i < n; i++)
		trace_cons_a(i);
}

static void *spawned(void *arg)
{
	*(int *)arg = gettid_();
	fire(10);
	return NULL;
}

static void *helper_main(void *arg)
{
	struct helper *h = arg;

	pthread_mutex_lock(&h->lock);
	h->tid = gettid_();
	pthread_cond_broadcast(&h->cond);
	for (;;) {
		while (h->cmd == CMD_NONE)
			pthread_cond_wait(&h->cond, &h->lock);
		if (h->cmd == CMD_EXIT)
			break;
		if (h->cmd == CMD_FIRE) {
			fire(h->n);
		} else {
			pthread_t t;

			pthread_create(&t, NULL, spawned, &h->spawned_tid);
			pthread_join(t, NULL);
		}
		h->cmd = CMD_NONE;
		pthread_cond_broadcast(&h->cond);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

static void helper_start(struct helper *h)
{
	memset(h, 0, sizeof(*h));
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->cond, NULL);
	pthread_create(&h->thread, NULL, helper_main, h);
	pthread_mutex_lock(&h->lock);
	while (!h->tid)
		pthread_cond_wait(&h->cond, &h->lock);
	pthread_mutex_unlock(&h->lock);
}

static void helper_do(struct helper *h, int cmd, int n)
{
	pthread_mutex_lock(&h->lock);
	h->cmd = cmd;
	h->n = n;
	pthread_cond_broadcast(&h->cond);
	while (h->cmd != CMD_NONE && cmd != CMD_EXIT)
		pthread_cond_wait(&h->cond, &h->lock);
	pthread_mutex_unlock(&h->lock);
	if (cmd == CMD_EXIT)
		pthread_join(h->thread, NULL);
}

/* Fire 10 in this thread and 20 in @h; return what the listener got of each. */
static void round_(struct helper *h, unsigned long *mine, unsigned long *its)
{
	seen_clear();
	fire(10);
	helper_do(h, CMD_FIRE, 20);
	*mine = seen_of(gettid_());
	*its = seen_of(h->tid);
}

/* A forked child fires 10: how many its listener got (its exit status). */
static int child_count(void)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		seen_clear();
		fire(10);
		_exit((int)seen_of(gettid_()));
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A thread that forks before any event of its own: the child fires 10 (its exit status). */
static void *fork_first(void *arg)
{
	*(int *)arg = child_count();
	return NULL;
}

static int stop, go;
static void *firer(void *arg)
{
	int *tid = arg;

	__atomic_store_n(tid, gettid_(), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		usleep(100);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		fire(1);
	return NULL;
}

int main(void)
{
	struct usertp_listener *l;
	struct helper h;
	unsigned long mine, its;
	pid_t me = gettid_(), list[2];
	int ret = usertp_listener_create("cons:cons_a", on_record, NULL, &l);

	CHECK(!ret, "usertp_listener_create: %d", ret);
	helper_start(&h);

	round_(&h, &mine, &its);
	CHECK(mine == 10 && its == 20, "no pid filter: %lu %lu", mine, its);

	list[0] = h.tid;
	ret = usertp_listener_set_pid_filter(l, list, 1, NULL, 0, false);
	CHECK(!ret, "set_pid_filter: %d", ret);
	round_(&h, &mine, &its);
	CHECK(mine == 0 && its == 20, "set_event_pid helper: %lu %lu", mine, its);

	ret = usertp_listener_set_pid_filter(l, NULL, 0, list, 1, false);
	round_(&h, &mine, &its);
	CHECK(!ret && mine == 10 && its == 0, "set_event_notrace_pid helper: %lu %lu", mine, its);

	/* Both lists: listed in the first and not in the second. */
	list[1] = me;
	ret = usertp_listener_set_pid_filter(l, list, 2, list, 1, false);
	round_(&h, &mine, &its);
	CHECK(!ret && mine == 10 && its == 0, "both: %lu %lu", mine, its);

	/* A bad pid: refused, nothing changes. */
	list[1] = -1;
	ret = usertp_listener_set_pid_filter(l, list, 2, NULL, 0, false);
	CHECK(ret == -EINVAL, "a pid of -1: %d", ret);
	list[1] = 1 << 30;
	ret = usertp_listener_set_pid_filter(l, list, 2, NULL, 0, false);
	CHECK(ret == -EINVAL, "a pid of 2^30: %d", ret);
	round_(&h, &mine, &its);
	CHECK(mine == 10 && its == 0, "after refusals: %lu %lu", mine, its);

	ret = usertp_listener_set_pid_filter(l, NULL, 0, NULL, 0, false);
	round_(&h, &mine, &its);
	CHECK(!ret && mine == 10 && its == 20, "cleared: %lu %lu", mine, its);

	/* Forked children: not listed without event-fork, listed with it. */
	ret = usertp_listener_set_pid_filter(l, &me, 1, NULL, 0, false);
	CHECK(!ret && child_count() == 0, "a child without event-fork is not followed");
	ret = usertp_listener_set_pid_filter(l, &me, 1, NULL, 0, true);
	CHECK(!ret && child_count() == 10, "a child with event-fork is followed");
	list[0] = h.tid;
	ret = usertp_listener_set_pid_filter(l, NULL, 0, &me, 1, true);
	CHECK(!ret && child_count() == 0, "a child of a notrace thread is left out with event-fork");

	/*
	 * Threads are followed by process (libusertp wraps no pthread_create(): which thread made
	 * a thread is not known): a thread made in a listed process is followed, whichever of
	 * its threads made it; one made by a listed thread that is not the process's first is not.
	 */
	ret = usertp_listener_set_pid_filter(l, &me, 1, NULL, 0, true);
	seen_clear();
	helper_do(&h, CMD_SPAWN, 0);
	CHECK(!ret && seen_of(h.spawned_tid) == 10, "a thread of a listed process: %lu",
	      seen_of(h.spawned_tid));
	ret = usertp_listener_set_pid_filter(l, list, 1, NULL, 0, true);
	seen_clear();
	helper_do(&h, CMD_SPAWN, 0);
	CHECK(!ret && seen_of(h.spawned_tid) == 0, "a thread of a listed thread, not the process: %lu",
	      seen_of(h.spawned_tid));
	ret = usertp_listener_set_pid_filter(l, &me, 1, NULL, 0, false);
	seen_clear();
	helper_do(&h, CMD_SPAWN, 0);
	CHECK(!ret && seen_of(h.spawned_tid) == 0, "a thread of an unlisted thread: %lu",
	      seen_of(h.spawned_tid));
	/*
	 * A thread made by a listed thread (followed) that forks before its first event: its
	 * child is followed too (and, under a sanitizer, where the thread is listed at its first
	 * event, the fork must not wait on itself).
	 */
	{
		pthread_t t;
		int in_child = -1;

		ret = usertp_listener_set_pid_filter(l, &me, 1, NULL, 0, true);
		pthread_create(&t, NULL, fork_first, &in_child);
		pthread_join(t, NULL);
		CHECK(!ret && in_child == 10, "the child of a new thread that forked first: %d", in_child);
	}
	/* Without event-fork, a listed thread's new thread is not listed. */
	ret = usertp_listener_set_pid_filter(l, list, 1, NULL, 0, false);
	seen_clear();
	helper_do(&h, CMD_SPAWN, 0);
	CHECK(!ret && seen_of(h.spawned_tid) == 0 && seen_of(h.tid) == 0,
	      "no event-fork: a new thread is not followed: %lu", seen_of(h.spawned_tid));

	/*
	 * Exit with event-fork: a listed thread that exits is taken off; the list is then empty,
	 * which is no filter (as tracefs's): this thread's records come again.  First one that
	 * recorded since the list was set; then one that did not (not seen exiting:
	 * libusertp learns of a thread at its first event, pid-filter.c).
	 */
	ret = usertp_listener_set_pid_filter(l, list, 1, NULL, 0, true);
	seen_clear();
	fire(10);
	helper_do(&h, CMD_FIRE, 1);
	CHECK(!ret && seen_of(me) == 0 && seen_of(h.tid) == 1, "listed helper only: %lu",
	      seen_of(me));
	helper_do(&h, CMD_EXIT, 0);
	seen_clear();
	fire(10);
	CHECK(seen_of(me) == 10, "the listed thread exited with event-fork: list empty, %lu",
	      seen_of(me));
	helper_start(&h);
	list[0] = h.tid;
	ret = usertp_listener_set_pid_filter(l, list, 1, NULL, 0, true);
	helper_do(&h, CMD_EXIT, 0);
	seen_clear();
	fire(10);
	/* A thread that never recorded is not seen exiting (nothing wraps its start): still listed. */
	CHECK(!ret && seen_of(me) == 0, "a listed thread exited without an event: %lu", seen_of(me));

	/* Replaced over and over while four threads record. */
	{
		pthread_t t[4];
		int tids[4] = { 0 };

		usertp_listener_set_pid_filter(l, NULL, 0, NULL, 0, false);
		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, firer, &tids[i]);
		for (int i = 0; i < 4; i++)
			while (!__atomic_load_n(&tids[i], __ATOMIC_ACQUIRE))
				usleep(1000);
		/* Thread 0 is in neither filter's list: none of its records may come. */
		__atomic_store_n(&forbidden_tid, tids[0], __ATOMIC_RELAXED);
		usertp_listener_set_pid_filter(l, &tids[1], 1, NULL, 0, false);
		seen_clear();
		__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
		for (int k = 0; k < 2000; k++)
			usertp_listener_set_pid_filter(l, &tids[1 + k % 2], 1, NULL, 0, false);
		usleep(20000);
		__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		CHECK(!wrong, "records of a thread no filter lists: %lu", wrong);
		CHECK(seen_of(tids[1]) + seen_of(tids[2]) > 0, "listed threads recorded nothing");
	}
	usertp_listener_destroy(l);
	if (harness_failed)
		fprintf(stderr, "pid-listener: %d harness_failed\n", harness_failed);
	else
		printf("pid-listener: ok\n");
	return harness_failed != 0;
}
