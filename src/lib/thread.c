/* SPDX-License-Identifier: MIT */
/*
 * thread.c - the threads and processes that record: each thread's id (cached for the hot
 * path, reset in a forked child), its name noted at its first event, and tracefs's
 * set_event_pid and set_event_notrace_pid in the traced program: a listener (a session, the
 * embedded recorder) may record only the events of some threads, or none of some; with the
 * event-fork option, threads and processes that listed threads create are listed too, and
 * listed threads that exit are taken off.
 *
 * On the hot path a thread asks whether it passes the filter of the event file it records
 * into: it keeps its answers (four, by the filter's serial) in TLS, so that only its first
 * event after a change looks the lists up.  A filter is never changed: a new one, with a new
 * serial, replaces it, and the old one is freed after a grace period.
 *
 * Following: a child process is listed at fork (this file's fork handlers), and a
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
#include "thread.h"

__thread struct usertp__pid_verdicts usertp__pid_verdicts __attribute__((tls_model("initial-exec")));
unsigned int usertp__pid_following;
__thread bool usertp__thread_is_own __attribute__((tls_model("initial-exec")));
__thread int usertp__tid __attribute__((tls_model("initial-exec")));

/*
 * The listeners' side of following (listener.c), given with the first listener that follows:
 * set before usertp__pid_following counts it, so that it is there whenever that is not 0.
 */
static const struct usertp__thread_followers *followers;

void usertp__thread_followers_set_locked(const struct usertp__thread_followers *f)
{
	__atomic_store_n(&followers, f, __ATOMIC_RELEASE);
}

/* Is a listener following, and who: NULL when none is. */
static const struct usertp__thread_followers *following(void)
{
	if (!__atomic_load_n(&usertp__pid_following, __ATOMIC_RELAXED))
		return NULL;
	return __atomic_load_n(&followers, __ATOMIC_ACQUIRE);
}

/* --- a thread's id, and forks ------------------------------------------------------------- */

/* The thread that forks, for the listeners that follow it into the child. */
static int forking_tid;

static void thread_fork_prepare(void)
{
	/*
	 * A thread that forks before its first event is followed first, as at that event, so
	 * that its child is followed from it (before the registry's lock, which the first event
	 * takes: these handlers come after tracepoint.c's, whose prepare takes it).
	 */
	forking_tid = 0;
	if (following())
		forking_tid = usertp__gettid();
}

static void thread_fork_child(void)
{
	const struct usertp__thread_followers *f = following();

	usertp__tid_reset();
	if (forking_tid && f) {
		pthread_mutex_lock(&usertp__lock);
		f->follow_locked(forking_tid, getpid());
		pthread_mutex_unlock(&usertp__lock);
	}
}

static void thread_init_once(void)
{
	usertp__init(); /* (its fork handlers first: see thread_fork_prepare()) */
	pthread_atfork(thread_fork_prepare, NULL, thread_fork_child);
}

/* Before a thread's id is cached, or a pid filter made: the fork handlers are in place. */
static void thread_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, thread_init_once);
}

/* A thread's first event: its id, and its name noted for the output. */
int usertp__gettid_slow(void)
{
	thread_init();
	usertp__tid = (int)syscall(SYS_gettid);
	usertp__comm_note(usertp__tid);
	usertp__thread_first_event();
	return usertp__tid;
}

void usertp__tid_reset(void)
{
	usertp__tid = 0;
	usertp__pid_verdicts_reset();
}

/* --- pid filters -------------------------------------------------------------------------- */

static uint64_t pid_filter_serial;

int usertp__pid_filter_new(const struct usertp__pid_list *trace,
			   const struct usertp__pid_list *notrace, bool follow,
			   struct usertp__pid_filter **out)
{
	struct usertp__pid_filter *f;

	*out = NULL;
	if (!trace->nr && !notrace->nr)
		return 0;
	thread_init();
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
	const struct usertp__thread_followers *f = following();
	int tid;

	(void)unused;
	if (!f)
		return;
	tid = usertp__gettid(); /* (before the lock: a first event may take it) */
	pthread_mutex_lock(&usertp__lock);
	f->exit_locked(tid);
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
	const struct usertp__thread_followers *f;
	int tid = usertp__tid, pid;

	if (usertp__thread_is_own)
		return;
	watch_exit(); /* (a thread that never records is never seen exiting) */
	if (!(f = following()))
		return;
	pid = getpid();
	if (tid == pid)
		return;
	pthread_mutex_lock(&usertp__lock);
	f->follow_locked(pid, tid);
	pthread_mutex_unlock(&usertp__lock);
}

#ifdef USERTP_SHARED_LIBRARY
/*
 * Programs linked against libusertp 0.1.0 reference pthread_create@USERTP_0 (it wrapped
 * pthread_create then).  Kept for them as libc's own, under a version that is not the
 * default: nothing linked now binds to it.  (The shared library's alone: the version is
 * its version script's, and in the static library it would stop every shared object that
 * links it, "version node not found".)
 */
int usertp__compat_pthread_create(pthread_t *thread, const pthread_attr_t *attr,
				  void *(*fn)(void *), void *arg);
__attribute__((symver("pthread_create@USERTP_0"), visibility("default"))) int
usertp__compat_pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *),
			      void *arg)
{
	return pthread_create(thread, attr, fn, arg);
}
#endif
