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

/* A new thread: listed where its creator is; its exit is told (it may be listed by then). */
static void thread_started(int creator)
{
	watch_exit();
	if (creator && __atomic_load_n(&usertp__pid_following, __ATOMIC_RELAXED)) {
		int tid = usertp__gettid(); /* (before the lock: a first event may take it) */

		pthread_mutex_lock(&usertp__lock);
		usertp__listeners_pid_follow_locked(creator, tid);
		pthread_mutex_unlock(&usertp__lock);
	}
}

static void *thread_trampoline(void *p)
{
	struct thread_start start = *(struct thread_start *)p;

	free(p);
	thread_started(start.creator);
	return start.fn(start.arg);
}

/*
 * Under an interposer that the program calls first (a sanitizer's), we are called with its
 * start routine, which readies the thread for instrumented code: our trampoline must run
 * before it without being instrumented, so it only leaves its start for the thread's first
 * event (usertp__gettid_slow()), and goes on.
 */
static __thread struct thread_start *thread_pending __attribute__((tls_model("initial-exec")));

__attribute__((no_sanitize("address", "thread", "undefined")))
static void *thread_trampoline_early(void *p)
{
	struct thread_start *start = p;

	thread_pending = start;
	return start->fn(start->arg);
}

void usertp__thread_first_event(void)
{
	struct thread_start *start = thread_pending;

	if (!start)
		return;
	thread_pending = NULL;
	thread_started(start->creator);
	free(start);
}

typedef int (*pthread_create_func)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static int wrapped_pthread_create(pthread_t *thread, const pthread_attr_t *attr,
				  void *(*fn)(void *), void *arg);

/*
 * Where a call goes on.  Mostly libc's, the next after us.  But a program may have an
 * interposer loaded before us (a sanitizer's): called by the program, we go on to it, so that
 * it sees the thread; called by it (it wraps the next one: us), we go on to libc's untouched.
 * (Code that calls the interposer directly is then not seen: its threads are not followed.)
 */
static pthread_create_func interposer, next_after_us;
static void *interposer_base; /* the object it is in */
static __thread bool wrapping; /* we called the interposer with our trampoline */

static bool resolve(void)
{
	pthread_create_func first, next;
	Dl_info info;

	if (__atomic_load_n(&next_after_us, __ATOMIC_ACQUIRE))
		return true;
	first = (pthread_create_func)dlsym(RTLD_DEFAULT, "pthread_create");
	next = (pthread_create_func)dlsym(RTLD_NEXT, "pthread_create");
	if (!next)
		return false;
	if (first && first != wrapped_pthread_create && first != next && dladdr((void *)first, &info)) {
		interposer_base = info.dli_fbase;
		interposer = first;
	}
	__atomic_store_n(&next_after_us, next, __ATOMIC_RELEASE);
	return true;
}

/* Were we called by the interposer (the return address @ret is in its object)? */
static bool called_by_interposer(void *ret)
{
	Dl_info info;

	return interposer && dladdr(ret, &info) && info.dli_fbase == interposer_base;
}

/*
 * The program's pthread_create(): the one it would call without us, through a trampoline
 * that lists the new thread where its creator is listed (while some listener follows), and
 * has its exit told.
 */
static int wrapped_pthread_create(pthread_t *thread, const pthread_attr_t *attr,
				  void *(*fn)(void *), void *arg)
{
	pthread_create_func go_on;
	struct thread_start *start;
	int ret;

	if (!resolve())
		return EAGAIN;
	if (called_by_interposer(__builtin_return_address(0))) {
		/* Called by the program through it, or by us through it (wrapped then). */
		if (wrapping || !__atomic_load_n(&usertp__pid_following, __ATOMIC_RELAXED) ||
		    !(start = malloc(sizeof(*start))))
			return next_after_us(thread, attr, fn, arg);
		*start = (struct thread_start){ fn, arg, usertp__gettid() };
		ret = next_after_us(thread, attr, thread_trampoline_early, start);
		if (ret)
			free(start);
		return ret;
	}
	go_on = interposer ? interposer : next_after_us;
	start = malloc(sizeof(*start));
	if (!start)
		return go_on(thread, attr, fn, arg);
	*start = (struct thread_start){ fn, arg,
					__atomic_load_n(&usertp__pid_following, __ATOMIC_RELAXED)
						? usertp__gettid() : 0 };
	wrapping = true;
	ret = go_on(thread, attr, thread_trampoline, start);
	wrapping = false;
	if (ret)
		free(start);
	return ret;
}

/*
 * A thread of libusertp's own (the control thread): it records nothing, so it goes past the
 * trampoline (whose allocation would also give it a malloc arena of its own to set up).
 */
int usertp__thread_create_own(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *),
			      void *arg)
{
	int ret;

	if (!resolve())
		return EAGAIN;
	if (!interposer)
		return next_after_us(thread, attr, fn, arg);
	wrapping = true; /* it calls us back: straight on to libc's */
	ret = interposer(thread, attr, fn, arg);
	wrapping = false;
	return ret;
}

USERTP_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *),
				 void *arg) __attribute__((alias("wrapped_pthread_create")));
