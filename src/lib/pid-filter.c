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
 * its session starts.  A new thread is listed when it starts: libusertp wraps
 * pthread_create() to learn which thread created it, and to learn when it exits (a pthread
 * key's destructor, which does nothing while no listener follows).  Threads made by code not
 * linked against libusertp (libstdc++'s std::thread calls libc's own pthread_create) are not
 * seen being created: a listed thread's such threads are not followed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

__thread struct usertp__pid_verdicts usertp__pid_verdicts __attribute__((tls_model("initial-exec")));
unsigned int usertp__pid_following;

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
	(void)unused;
	if (!__atomic_load_n(&usertp__pid_following, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&usertp__lock);
	usertp__listeners_pid_exit_locked(usertp__gettid());
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

/* The parent of process @pid, from /proc (0 if unknown). */
static int parent_of(int pid)
{
	char path[64], buf[512], *close_paren;
	FILE *f;
	int ppid = 0;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* "pid (comm) state ppid ...": the comm may hold anything, up to the last ')'. */
	close_paren = strrchr(buf, ')');
	if (!close_paren || sscanf(close_paren + 1, " %*c %d", &ppid) != 1)
		return 0;
	return ppid;
}

int usertp__pid_lists_inherit(struct usertp__pid_list *trace, struct usertp__pid_list *notrace)
{
	int self = getpid(), pid = getppid();

	if (usertp__pid_list_has(trace, self) || usertp__pid_list_has(notrace, self))
		return 0;
	/* The nearest listed ancestor decides, as if each fork on the way had been followed. */
	for (int depth = 0; pid > 1 && depth < 64; pid = parent_of(pid), depth++) {
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

struct thread_start {
	void *(*fn)(void *);
	void *arg;
	int creator;
};

static void *thread_trampoline(void *p)
{
	struct thread_start start = *(struct thread_start *)p;

	free(p);
	/* Its exit is told to the listeners that follow then (it may be listed by then). */
	watch_exit();
	if (start.creator && __atomic_load_n(&usertp__pid_following, __ATOMIC_RELAXED)) {
		pthread_mutex_lock(&usertp__lock);
		usertp__listeners_pid_follow_locked(start.creator, usertp__gettid());
		pthread_mutex_unlock(&usertp__lock);
	}
	return start.fn(start.arg);
}

typedef int (*pthread_create_func)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

/*
 * The program's pthread_create(): libc's, through a trampoline that lists the new thread
 * where its creator is listed (while some listener follows), and has its exit told.
 */
USERTP_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
				 void *(*fn)(void *), void *arg)
{
	static pthread_create_func next;
	pthread_create_func real = __atomic_load_n(&next, __ATOMIC_ACQUIRE);
	struct thread_start *start;
	int ret;

	if (!real) {
		real = (pthread_create_func)dlsym(RTLD_NEXT, "pthread_create");
		if (!real)
			return EAGAIN;
		__atomic_store_n(&next, real, __ATOMIC_RELEASE);
	}
	start = malloc(sizeof(*start));
	if (!start)
		return real(thread, attr, fn, arg);
	*start = (struct thread_start){ fn, arg,
					__atomic_load_n(&usertp__pid_following, __ATOMIC_RELAXED)
						? usertp__gettid() : 0 };
	ret = real(thread, attr, thread_trampoline, start);
	if (ret)
		free(start);
	return ret;
}
