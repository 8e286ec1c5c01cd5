/* SPDX-License-Identifier: MIT */
/*
 * pid-filter.c - tracefs's set_event_pid and set_event_notrace_pid in the traced program: a
 * listener (a session, the embedded recorder) may record only the events of some threads,
 * or none of some; with the event-fork option, threads and processes that listed threads
 * create are listed too, and listed threads that exit are taken off.
 *
 * On the hot path a thread asks whether it passes the filter of the event file it records
 * into: it keeps its answers (four, by the filter's serial) in TLS, so that only its first
 * event after a change looks the lists up.  A filter is never changed: a new one, with a new
 * serial, replaces it, and the old one is freed after a grace period.
 *
 * Following: a child process is listed at fork (the fork handlers, tracepoint.c), and a
 * program that a listed process started through exec (a command under `usertp record`) when
 * its session starts.  A new thread is listed at its first event where its process is listed
 * (however it was made: pthread_create(), std::thread, a library's own), and its exit is told
 * by a pthread key's destructor, which does nothing while no listener follows.  libusertp
 * wraps nothing: which thread made a thread is not known, so listing one thread of a process
 * other than its first does not list the threads it makes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proc.h"
#include "internal.h"

__thread struct usertp__pid_verdicts usertp__pid_verdicts __attribute__((tls_model("initial-exec")));
unsigned int usertp__pid_following;
__thread bool usertp__thread_is_own __attribute__((tls_model("initial-exec")));

static uint64_t pid_filter_serial;

int usertp__pid_filter_new(const struct usertp__pid_list *trace,
			   const struct usertp__pid_list *notrace, bool follow,
			   struct usertp__pid_filter **out)
{
	struct usertp__pid_filter *f;

	*out = NULL;
	if (!trace->nr && !notrace->nr)
		return 0;
	f = malloc(sizeof(*f) + (trace->nr + notrace->nr) * sizeof(int));
	if (!f)
		return -ENOMEM;
	f->serial = __atomic_add_fetch(&pid_filter_serial, 1, __ATOMIC_RELAXED);
	f->follow = follow;
	f->nr_trace = trace->nr;
	f->nr_notrace = notrace->nr;
	if (trace->nr)
		memcpy(f->pids, trace->pids, trace->nr * sizeof(int));
	if (notrace->nr)
		memcpy(f->pids + trace->nr, notrace->pids, notrace->nr * sizeof(int));
	*out = f;
	return 0;
}

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

/* A listed thread exits while some listener follows: it is taken off (as the kernel does). */
static void thread_exit(void *unused)
{
	int tid;

	(void)unused;
	if (!__atomic_load_n(&usertp__pid_following, __ATOMIC_RELAXED))
		return;
	tid = usertp__gettid(); /* (before the lock: a first event may take it) */
	pthread_mutex_lock(&usertp__lock);
	usertp__listeners_pid_exit_locked(tid);
	pthread_mutex_unlock(&usertp__lock);
}

static void exit_key_create(void)
{
	pthread_key_create(&exit_key, thread_exit);
}

/* Make the calling thread tell its exit to the following listeners. */
static void watch_exit(void)
{
	pthread_once(&exit_key_once, exit_key_create);
	pthread_setspecific(exit_key, (void *)1);
}

bool usertp__pid_filter_verdict(const struct usertp__pid_filter *f)
{
	struct usertp__pid_list trace = { (int *)f->pids, f->nr_trace };
	struct usertp__pid_list notrace = { (int *)f->pids + f->nr_trace, f->nr_notrace };
	int tid = usertp__gettid();
	bool listed = usertp__pid_list_has(&trace, tid), excluded = usertp__pid_list_has(&notrace, tid);
	bool pass = (!trace.nr || listed) && !excluded;
	unsigned int i = f->serial & (USERTP__PID_VERDICTS - 1);

	if (f->follow && (listed || excluded))
		watch_exit();
	usertp__pid_verdicts.serial[i] = f->serial;
	usertp__pid_verdicts.pass[i] = pass;
	return pass;
}

void usertp__pid_verdicts_reset(void)
{
	memset(&usertp__pid_verdicts, 0, sizeof(usertp__pid_verdicts));
}


int usertp__pid_lists_inherit(struct usertp__pid_list *trace, struct usertp__pid_list *notrace)
{
	int self = getpid(), pid = getppid();

	if (usertp__pid_list_has(trace, self) || usertp__pid_list_has(notrace, self))
		return 0;
	/* The nearest listed ancestor decides, as if each fork on the way had been followed. */
	for (int depth = 0; pid > 1 && depth < 64; pid = usertp__proc_parent(pid), depth++) {
		bool traced = usertp__pid_list_has(trace, pid), excluded = usertp__pid_list_has(notrace, pid);
		int ret = 0;

		if (traced)
			ret = usertp__pid_list_add(trace, self);
		if (excluded && !ret)
			ret = usertp__pid_list_add(notrace, self);
		if (traced || excluded)
			return ret;
	}
	return 0;
}

/* --- new threads ------------------------------------------------------------------------- */

/*
 * A thread's first event: its exit will be told; while some listener follows, a thread other
 * than the process's first is listed where its process is (its pid listed or excluded).
 * libusertp does not wrap pthread_create() (linking it must never change how a thread is
 * made), so the thread that made this one is not known: threads are followed by process.
 */
void usertp__thread_first_event(void)
{
	int tid = usertp__tid, pid;

	if (usertp__thread_is_own)
		return;
	watch_exit(); /* (a thread that never records is never seen exiting) */
	if (!__atomic_load_n(&usertp__pid_following, __ATOMIC_RELAXED))
		return;
	pid = getpid();
	if (tid == pid)
		return;
	pthread_mutex_lock(&usertp__lock);
	usertp__listeners_pid_follow_locked(pid, tid);
	pthread_mutex_unlock(&usertp__lock);
}

/*
 * Programs linked against libusertp 0.1.0 reference pthread_create@USERTP_0 (it wrapped
 * pthread_create then).  Kept for them as libc's own, under a version that is not the
 * default: nothing linked now binds to it.
 */
int usertp__compat_pthread_create(pthread_t *thread, const pthread_attr_t *attr,
				  void *(*fn)(void *), void *arg);
__attribute__((symver("pthread_create@USERTP_0"), visibility("default"))) int
usertp__compat_pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *),
			      void *arg)
{
	return pthread_create(thread, attr, fn, arg);
}
