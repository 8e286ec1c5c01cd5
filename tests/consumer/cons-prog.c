/* SPDX-License-Identifier: MIT */
/*
 * cons-prog - the program the consumer API tests trace (test-consumer.c drives it).
 *
 *	cons-prog		prints "ready PID", then takes commands on stdin, one a line:
 *	  fire N		N cons_a (seq 0..N-1) then N cons_b; prints "fired"
 *	  fork N		a forked child fires N cons_a and N cons_b and exits; prints
 *				"forked PID" once it has
 *	  thread N		a new thread fires N cons_a and N cons_b; prints "thread TID"
 *				once it has ended
 *	  hold			a new thread fires one cons_a and waits; prints "held TID"
 *	  release		the held thread ends; prints "released"
 *	  scribble		overwrites every region of buffers it has (a program gone bad:
 *				its consumers must survive it); prints "scribbled N" (the regions)
 *	  quit			returns 0 (so does the end of stdin)
 *	cons-prog auto N	fires N cons_a and N cons_b at once, and returns 0
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define CREATE_TRACE_POINTS
#include "cons-prog-trace.h"

static void fire(int n)
{
	for (int i = 0; i < n; i++)
		trace_cons_a(i);
	for (int i = 0; i < n; i++)
		trace_cons_b(i);
}

static int thread_n, thread_tid;

static void *thread_fire(void *arg)
{
	(void)arg;
	thread_tid = (int)syscall(SYS_gettid);
	fire(thread_n);
	return NULL;
}

static int release_pipe[2] = { -1, -1 };

static void *thread_hold(void *arg)
{
	char c;

	(void)arg;
	thread_tid = (int)syscall(SYS_gettid);
	trace_cons_a(0);
	printf("held %d\n", thread_tid);
	fflush(stdout);
	return read(release_pipe[0], &c, 1) < 0 ? NULL : NULL;
}

/* Fill every mapping of libusertp's buffers with garbage.  Return: how many. */
static int scribble(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long start, end;

		if (strstr(line, "usertp-buffers") && sscanf(line, "%lx-%lx", &start, &end) == 2) {
			memset((void *)start, 0xa5, end - start);
			n++;
		}
	}
	if (f)
		fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	char line[128];
	pthread_t held;

	if (argc == 3 && !strcmp(argv[1], "auto")) {
		fire(atoi(argv[2]));
		return 0;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		int n = 0;
		pid_t pid;

		if (sscanf(line, "fire %d", &n) == 1) {
			fire(n);
			printf("fired\n");
		} else if (sscanf(line, "fork %d", &n) == 1) {
			pid = fork();
			if (pid == 0) {
				fire(n);
				_exit(0);
			}
			waitpid(pid, NULL, 0);
			printf("forked %d\n", (int)pid);
		} else if (sscanf(line, "thread %d", &n) == 1) {
			pthread_t t;

			thread_n = n;
			if (pthread_create(&t, NULL, thread_fire, NULL))
				return 1;
			pthread_join(t, NULL);
			printf("thread %d\n", thread_tid);
		} else if (!strncmp(line, "hold", 4)) {
			if (release_pipe[0] >= 0 || pipe(release_pipe) ||
			    pthread_create(&held, NULL, thread_hold, NULL))
				return 1;
		} else if (!strncmp(line, "release", 7) && release_pipe[0] >= 0) {
			if (write(release_pipe[1], "x", 1) != 1 || pthread_join(held, NULL))
				return 1;
			close(release_pipe[0]);
			close(release_pipe[1]);
			release_pipe[0] = release_pipe[1] = -1;
			printf("released\n");
		} else if (!strncmp(line, "scribble", 8)) {
			printf("scribbled %d\n", scribble());
		} else if (!strncmp(line, "quit", 4)) {
			break;
		}
		fflush(stdout);
	}
	return 0;
}
