/* SPDX-License-Identifier: MIT */
/*
 * rec-prog - a program traced by the embedded recorder (USERTP_EVENTS) in the recorder tests:
 * it fires a known number of events, then ends the way argv says.  test-recorder.c runs it and
 * reads what the recorder wrote.
 *
 *	rec-prog seq N		N rec_event (thread 0, seq 0..N-1) from main, return 0
 *	rec-prog seq-over N MS	the same, evenly spread over MS milliseconds (busy-waiting against
 *				CLOCK_MONOTONIC): a run that lasts, whatever an event costs
 *	rec-prog spin N		N rec_spin (thread 0, seq 0..N-1: 24 bytes each, a size that never
 *				fills a page exactly) from main, return 0
 *	rec-prog mixed N	N pairs from main: rec_mark "what=m-I-<padding>" (60 bytes in
 *				whole words) then rec_event (thread 0, seq I; 16 bytes), return 0
 *	rec-prog return N	as seq, plus rec_mark "atexit" from an atexit handler of its own
 *	rec-prog exit-thread N	a thread "exiter" fires N (thread 1), starts 3 "spinner-S" threads
 *				that fire rec_spin without end, then calls exit(3) while they fire
 *	rec-prog _exit N	N events, then _exit(0)
 *	rec-prog segv N		N events, then raise(SIGSEGV)
 *	rec-prog segv-fault N	N events, then a store to address 64 (never mapped)
 *	rec-prog abort N	N events, then abort()
 *	rec-prog wait N		N events, "ready" on stdout, then waits for a signal forever
 *	rec-prog wait-busy N	the same, with 3 spinner threads firing rec_spin without end
 *	rec-prog wait-slow N	the same, the spinners resting 1 ms after each rec_spin (as a
 *				kernel event comes: the ftrace selftests' sched_switch)
 *	rec-prog exec N PROG ARGS...	N events, then exec PROG ARGS (the same pid goes on as PROG)
 *	rec-prog term-fire N	installs its own SIGTERM handler, "ready", waits for the signal,
 *				then N events (thread 0), "fired", and waits to be killed
 *	rec-prog handler N	installs its own SIGTERM handler, N events, "ready", waits for the
 *				signal, then rec_mark "handled" and returns 0
 *	rec-prog chdir N DIR	chdir(DIR), N events, return 0
 *	rec-prog fork N		N events (thread 0); a forked child fires N (thread 1) and exits;
 *				prints "child PID"; N more (thread 0, seq N..2N-1); return 0
 *	rec-prog daemon N	N events (thread 0); a forked child fires N (thread 1) and runs on,
 *				until a signal; prints "child PID" once the child has fired, and
 *				returns 0: a daemon's parent
 *	rec-prog daemons K	"ready", a line on stdin, then K children forked, each firing 1
 *				rec_event (thread 1, seq 0) and running on until a signal; prints
 *				"child PID" for each, and returns 0 once they all have fired
 *	rec-prog fork-busy F	3 spinners fire without end while main forks F children, each
 *				firing 10 events (thread 1) and exiting; prints "child PID" each
 *	rec-prog fork-burst F	"ready", a line on stdin, then F children forked at once, as a
 *				pre-forking server starts its workers, each firing 1 rec_event
 *				(thread 1, seq 0) and ending; then waits for them all, returns 0
 *	rec-prog churn N	N threads one after another, thread I named "churn-I" (I modulo
 *				100000), each firing rec_event (thread I, seq 0) and ending: more
 *				threads than the program's ring of names holds (src/lib/comm.c)
 *	rec-prog churn-wait N	the same once a line came on stdin, after "ready" on stdout
 *	rec-prog threads M	creates M threads (each fires one rec_spin, main fires 10
 *				rec_event), prints "tasks=T buffers=B sigcgt=X": the entries
 *				of /proc/self/task while they live, whether /proc/self/maps has a
 *				"usertp-buffers" mapping (1) or not (0), the caught signals
 *	rec-prog dlclose N MOD	dlopen(MOD), its rec_mod_fire(0..N-1), dlclose(MOD); prints
 *				"mapped=1" if MOD is still in /proc/self/maps, else "mapped=0"
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CREATE_TRACE_POINTS
#include "rec-prog-trace.h"

#define NR_SPINNERS 3

static int nr_events;
static int stop_spinners;
static unsigned long spun[NR_SPINNERS];
static volatile sig_atomic_t got_term;
static int *volatile bad_address = (int *)64;

static void fire(int thread, int first, int n)
{
	int i;

	for (i = 0; i < n; i++)
		trace_rec_event(thread, first + i);
}

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ll + t.tv_nsec;
}

/* N rec_event from main, event I not before start + I x @ms / N milliseconds. */
static void fire_over(int n, long ms)
{
	long long start = now_ns();

	for (int i = 0; i < n; i++) {
		while (now_ns() - start < (long long)i * ms * 1000000 / n)
			;
		trace_rec_event(0, i);
	}
}

static void small_sleep(void);
static int spin_slowly;

static void *spinner(void *arg)
{
	int s = (int)(long)arg;
	char name[16];
	unsigned long seq = 0;

	snprintf(name, sizeof(name), "spinner-%d", s);
	pthread_setname_np(pthread_self(), name);
	while (!__atomic_load_n(&stop_spinners, __ATOMIC_RELAXED)) {
		trace_rec_spin(s, seq++);
		__atomic_store_n(&spun[s], seq, __ATOMIC_RELAXED);
		if (spin_slowly)
			small_sleep();
	}
	return NULL;
}

static void small_sleep(void)
{
	struct timespec ts = { 0, 1000000 };

	nanosleep(&ts, NULL);
}

/* Start the spinners and wait until each has fired a few events. */
static void start_spinners(pthread_t *threads)
{
	int s;

	for (s = 0; s < NR_SPINNERS; s++)
		if (pthread_create(&threads[s], NULL, spinner, (void *)(long)s))
			exit(20);
	for (s = 0; s < NR_SPINNERS; s++)
		while (__atomic_load_n(&spun[s], __ATOMIC_RELAXED) < 50)
			small_sleep();
}

static void stop_and_join(pthread_t *threads)
{
	int s;

	__atomic_store_n(&stop_spinners, 1, __ATOMIC_RELAXED);
	for (s = 0; s < NR_SPINNERS; s++)
		pthread_join(threads[s], NULL);
}

static void ready(void)
{
	printf("ready\n");
	fflush(stdout);
}

static void wait_forever(void)
{
	struct sigaction old;

	/* Ctrl-C ends it, as a program started from a terminal (a shell's "&" ignores SIGINT). */
	if (!sigaction(SIGINT, NULL, &old) && old.sa_handler == SIG_IGN)
		signal(SIGINT, SIG_DFL);
	for (;;)
		pause();
}

static void atexit_mark(void)
{
	trace_rec_mark("atexit");
}

static void *exiter(void *arg)
{
	pthread_t threads[NR_SPINNERS];

	(void)arg;
	pthread_setname_np(pthread_self(), "exiter");
	fire(1, 0, nr_events);
	start_spinners(threads);
	exit(3); /* while the spinners fire */
}

static void on_term(int sig)
{
	(void)sig;
	got_term = 1;
}

static int fork_once(void)
{
	int status;
	pid_t pid;

	fire(0, 0, nr_events);
	pid = fork();
	if (pid < 0)
		return 10;
	if (pid == 0) {
		fire(1, 0, nr_events);
		exit(0);
	}
	printf("child %d\n", (int)pid);
	fflush(stdout);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "rec-prog: child %d: status %#x\n", (int)pid, status);
		return 11;
	}
	fire(0, nr_events, nr_events);
	return 0;
}

static int daemon_mode(void)
{
	int ready[2];
	pid_t pid;
	char b;

	fire(0, 0, nr_events);
	if (pipe(ready))
		return 10;
	pid = fork();
	if (pid < 0)
		return 10;
	if (pid == 0) {
		close(ready[0]);
		fire(1, 0, nr_events);
		(void)!write(ready[1], "", 1);
		close(ready[1]);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (read(ready[0], &b, 1) != 1)
		return 11;
	printf("child %d\n", (int)pid);
	return 0;
}

/*
 * fork-burst, daemons: "ready", a line on stdin, then @k children forked at once, each firing
 * 1 rec_event (thread 1); with @run_on they run on until a signal (each "child PID"), and it
 * returns once they all have fired, else it waits for their ends.
 */
static int fork_many(int k, bool run_on)
{
	int i, status, failed = 0, ready[2];
	char b, line[16];
	pid_t pid;

	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin) || pipe(ready))
		return 10;
	for (i = 0; i < k; i++) {
		pid = fork();
		if (pid < 0)
			return 10;
		if (pid == 0) {
			close(ready[0]);
			fire(1, 0, 1);
			if (!run_on)
				_exit(0);
			(void)!write(ready[1], "", 1);
			for (;;)
				pause();
		}
		if (run_on)
			printf("child %d\n", (int)pid);
		fflush(stdout);
	}
	close(ready[1]);
	for (i = 0; run_on && i < k; i++)
		if (read(ready[0], &b, 1) != 1)
			return 11;
	while (!run_on && (pid = wait(&status)) > 0)
		failed += !WIFEXITED(status) || WEXITSTATUS(status);
	return failed ? 11 : 0;
}

static int fork_busy(int forks)
{
	pthread_t threads[NR_SPINNERS];
	int i, failed = 0;

	start_spinners(threads);
	for (i = 0; i < forks; i++) {
		int status;
		pid_t pid = fork();

		if (pid < 0)
			return 10;
		if (pid == 0) {
			alarm(60); /* a deadlock ends as SIGALRM, seen by the parent */
			fire(1, 0, 10);
			exit(0);
		}
		printf("child %d\n", (int)pid);
		fflush(stdout);
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "rec-prog: child %d: status %#x\n", (int)pid, status);
			failed++;
		}
	}
	stop_and_join(threads);
	return failed ? 11 : 0;
}

static pthread_barrier_t barrier;

static void *parked(void *arg)
{
	(void)arg;
	trace_rec_spin(2, 0);
	pthread_barrier_wait(&barrier); /* started */
	pthread_barrier_wait(&barrier); /* counted */
	return NULL;
}

static int count_tasks(void)
{
	DIR *dir = opendir("/proc/self/task");
	struct dirent *d;
	int n = 0;

	if (!dir)
		return -1;
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.')
			n++;
	closedir(dir);
	return n;
}

/* Is @what in a line of /proc/self/maps? */
static int mapped(const char *what)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	int found = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, what))
			found = 1;
	fclose(f);
	return found;
}

static unsigned long long caught_signals(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	unsigned long long mask = ~0ull;
	char line[256];

	if (!f)
		return mask;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "SigCgt:", 7))
			mask = strtoull(line + 7, NULL, 16);
	fclose(f);
	return mask;
}

static int dlclose_mode(int n, const char *path)
{
	void (*fire_mod)(int);
	void *mod = dlopen(path, RTLD_NOW);
	int i;

	if (!mod) {
		fprintf(stderr, "rec-prog: %s\n", dlerror());
		return 10;
	}
	*(void **)&fire_mod = dlsym(mod, "rec_mod_fire");
	if (!fire_mod)
		return 10;
	for (i = 0; i < n; i++)
		fire_mod(i);
	dlclose(mod);
	printf("mapped=%d\n", mapped(path));
	return 0;
}

static void *churn_one(void *arg)
{
	int i = (int)(intptr_t)arg;
	char name[16];

	snprintf(name, sizeof(name), "churn-%d", i % 100000);
	pthread_setname_np(pthread_self(), name);
	trace_rec_event(i, 0);
	return NULL;
}

static int churn_mode(int n)
{
	for (int i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, churn_one, (void *)(intptr_t)i) || pthread_join(t, NULL))
			return 10;
	}
	return 0;
}

static int threads_mode(int m)
{
	pthread_t *threads = calloc((size_t)m, sizeof(*threads));
	unsigned long long sigcgt;
	int i, tasks, buffers;

	if (!threads)
		return 10;
	pthread_barrier_init(&barrier, NULL, (unsigned int)m + 1);
	for (i = 0; i < m; i++)
		if (pthread_create(&threads[i], NULL, parked, NULL))
			return 10;
	fire(0, 0, nr_events);
	pthread_barrier_wait(&barrier);
	tasks = count_tasks();
	buffers = mapped("usertp-buffers");
	sigcgt = caught_signals();
	pthread_barrier_wait(&barrier);
	for (i = 0; i < m; i++)
		pthread_join(threads[i], NULL);
	pthread_barrier_destroy(&barrier);
	free(threads);
	printf("tasks=%d buffers=%d sigcgt=%llx\n", tasks, buffers, sigcgt);
	return 0;
}

/* Print "ready", then wait for SIGTERM (handled: the process goes on). */
static void wait_term(void)
{
	struct sigaction sa;
	sigset_t block, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	if (sigaction(SIGTERM, &sa, NULL))
		exit(10);
	ready();
	while (!got_term)
		sigsuspend(&old);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (argc < 3) {
		fprintf(stderr, "usage: rec-prog MODE N [DIR]\n");
		return 2;
	}
	nr_events = atoi(argv[2]);

	if (!strcmp(mode, "seq")) {
		fire(0, 0, nr_events);
		return 0;
	}
	if (!strcmp(mode, "churn"))
		return churn_mode(nr_events);
	if (!strcmp(mode, "churn-wait")) {
		char line[16];

		printf("ready\n");
		fflush(stdout);
		return fgets(line, sizeof(line), stdin) ? churn_mode(nr_events) : 10;
	}
	if (!strcmp(mode, "seq-over") && argc > 3) {
		fire_over(nr_events, atol(argv[3]));
		return 0;
	}
	if (!strcmp(mode, "spin")) {
		int i;

		for (i = 0; i < nr_events; i++)
			trace_rec_spin(0, (unsigned long)i);
		return 0;
	}
	if (!strcmp(mode, "mixed")) {
		char what[64];
		int i;

		for (i = 0; i < nr_events; i++) {
			/* 44 characters: 8 + 4 + 45 bytes of record, 60 in whole words */
			snprintf(what, sizeof(what), "m-%06d-%035d", i, 0);
			trace_rec_mark(what);
			trace_rec_event(0, i);
		}
		return 0;
	}
	if (!strcmp(mode, "return")) {
		atexit(atexit_mark);
		fire(0, 0, nr_events);
		return 0;
	}
	if (!strcmp(mode, "exit-thread")) {
		pthread_t t;

		if (pthread_create(&t, NULL, exiter, NULL))
			return 10;
		pthread_join(t, NULL);
		return 12; /* not reached: the exiter ends the process */
	}
	if (!strcmp(mode, "_exit")) {
		fire(0, 0, nr_events);
		_exit(0);
	}
	if (!strcmp(mode, "segv")) {
		fire(0, 0, nr_events);
		raise(SIGSEGV);
		return 12;
	}
	if (!strcmp(mode, "segv-fault")) {
		fire(0, 0, nr_events);
		*bad_address = 1; /* in the first page, never mapped */
		return 12;
	}
	if (!strcmp(mode, "abort")) {
		fire(0, 0, nr_events);
		abort();
	}
	if (!strcmp(mode, "wait")) {
		fire(0, 0, nr_events);
		ready();
		wait_forever();
	}
	if (!strcmp(mode, "wait-busy") || !strcmp(mode, "wait-slow")) {
		pthread_t threads[NR_SPINNERS];

		spin_slowly = !strcmp(mode, "wait-slow");
		fire(0, 0, nr_events);
		start_spinners(threads);
		ready();
		wait_forever();
	}
	if (!strcmp(mode, "handler")) {
		fire(0, 0, nr_events);
		wait_term();
		trace_rec_mark("handled");
		return 0;
	}
	if (!strcmp(mode, "term-fire")) {
		wait_term();
		fire(0, 0, nr_events);
		printf("fired\n");
		fflush(stdout);
		wait_forever();
	}
	if (!strcmp(mode, "exec")) {
		if (argc < 4)
			return 10;
		fire(0, 0, nr_events);
		execv(argv[3], argv + 3);
		return 11;
	}
	if (!strcmp(mode, "chdir")) {
		if (argc < 4 || chdir(argv[3]))
			return 10;
		fire(0, 0, nr_events);
		return 0;
	}
	if (!strcmp(mode, "fork"))
		return fork_once();
	if (!strcmp(mode, "daemon"))
		return daemon_mode();
	if (!strcmp(mode, "daemons"))
		return fork_many(nr_events, true);
	if (!strcmp(mode, "fork-busy"))
		return fork_busy(nr_events);
	if (!strcmp(mode, "fork-burst"))
		return fork_many(nr_events, false);
	if (!strcmp(mode, "dlclose"))
		return argc < 4 ? 2 : dlclose_mode(nr_events, argv[3]);
	if (!strcmp(mode, "threads")) {
		int m = nr_events;

		nr_events = 10;
		return threads_mode(m);
	}
	fprintf(stderr, "rec-prog: unknown mode %s\n", mode);
	return 2;
}
