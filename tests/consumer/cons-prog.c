/* SPDX-License-Identifier: MIT */
/*
 * cons-prog - the program the consumer API tests trace (test-consumer.c drives it).
 *
 *	cons-prog		prints "ready PID", then takes commands on stdin, one a line:
 *	  fire N		N cons_a (seq 0..N-1) then N cons_b; prints "fired"
 *	  spans N		N spans "work" of <usertp/track.h> (begin, end), each with the
 *				counter "done" at its number; prints "spanned"
 *	  printk N		N usertp_printk("cons %d of %s\n", i, "n"); prints "printed"
 *	  fork N		a forked child fires N cons_a and N cons_b and exits; prints
 *				"forked PID" once it has
 *	  spawn N		the same, but prints "spawned PID" at once: the child may outlive
 *				us (quit then), as a daemon's child outlives its parent
 *	  thread N		a new thread fires N cons_a and N cons_b; prints "thread TID"
 *				once it has ended
 *	  hold			a new thread fires one cons_a and waits; prints "held TID"
 *	  release		the held thread ends; prints "released"
 *	  scribble		overwrites every region of buffers it has (a program gone bad:
 *				its consumers must survive it); prints "scribbled N" (the regions)
 *	  garble N		fires N cons_a in this thread, then overwrites the bytes they took
 *				in each CPU's page being written with random bytes, the first an
 *				entry longer than what is left (the page's header and the records
 *				before stay: a program that puts garbage in its live pages);
 *				prints "garbled N" (the pages)
 *	  shrink		truncates every memfd of libusertp's buffers it has to one page (a
 *				program gone bad: its consumers must survive it); prints
 *				"shrunk N" (the ones that took it: none, they are sealed)
 *	  pin			this thread keeps to CPU 0 from now on; prints "pinned 0"
 *	  quit			returns 0 (so does the end of stdin)
 *	cons-prog auto N	fires N cons_a and N cons_b at once, and returns 0
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ring-buffer.h"
#include <usertp/printk.h>

#define CREATE_TRACE_POINTS
#include "cons-prog-trace.h"
#include <usertp/track.h>

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

static int shrink(void)
{
	char path[64], target[256];
	int n = 0;

	for (int fd = 0; fd < 1024; fd++) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = 0;
		if (strstr(target, "memfd:usertp-buffers") && !ftruncate(fd, 4096))
			n++;
	}
	return n;
}

/* What garble() writes over: the regions of libusertp's buffers (ring-buffer.h's layout). */
static int regions(struct usertp__rb_region **out, int max)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	while (f && n < max && fgets(line, sizeof(line), f)) {
		unsigned long start, end;

		if (strstr(line, "usertp-buffers") && sscanf(line, "%lx-%lx", &start, &end) == 2)
			out[n++] = (struct usertp__rb_region *)start;
	}
	if (f)
		fclose(f);
	return n;
}

static struct usertp__rb_cpu *cpu_of(struct usertp__rb_region *r, unsigned int cpu)
{
	return (struct usertp__rb_cpu *)((unsigned char *)r + r->cpu_offset[cpu]);
}

static int garble(int n)
{
	struct usertp__rb_region *r[8];
	uint64_t before[8][64];
	int nr = regions(r, 8), pages = 0;

	for (int i = 0; i < nr; i++)
		for (unsigned int cpu = 0; cpu < r[i]->nr_cpus && cpu < 64; cpu++)
			before[i][cpu] = cpu_of(r[i], cpu)->pos;
	for (int k = 0; k < n; k++)
		trace_cons_a(k);
	srand(1);
	for (int i = 0; i < nr; i++)
		for (unsigned int cpu = 0; cpu < r[i]->nr_cpus && cpu < 64; cpu++) {
			struct usertp__rb_cpu *c = cpu_of(r[i], cpu);
			uint64_t pos = c->pos, from = before[i][cpu];
			unsigned char *page;

			if (pos <= from || pos / USERTP__KPAGE_SIZE != from / USERTP__KPAGE_SIZE ||
			    from % USERTP__KPAGE_SIZE < USERTP__KPAGE_HEADER)
				continue;
			page = (unsigned char *)r[i] + c->pages_offset +
			       (pos / USERTP__KPAGE_SIZE % r[i]->nr_pages) * USERTP__KPAGE_SIZE;
			for (uint64_t b = from % USERTP__KPAGE_SIZE; b < pos % USERTP__KPAGE_SIZE; b++)
				page[b] = (unsigned char)rand();
			/*
			 * First a data entry of 112 bytes (type_len 28) where fewer are left: a
			 * random word is most often such a length.
			 */
			memcpy(page + from % USERTP__KPAGE_SIZE, &(uint32_t){ 1u << 5 | 28 }, 4);
			pages++;
		}
	return pages;
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
		} else if (sscanf(line, "spans %d", &n) == 1) {
			for (int i = 0; i < n; i++) {
				usertp_span_begin("work");
				usertp_counter("done", i);
				usertp_span_end("work");
			}
			printf("spanned\n");
		} else if (sscanf(line, "printk %d", &n) == 1) {
			for (int i = 0; i < n; i++)
				usertp_printk("cons %d of %s\n", i, "n");
			printf("printed\n");
		} else if (sscanf(line, "fork %d", &n) == 1) {
			pid = fork();
			if (pid == 0) {
				fire(n);
				_exit(0);
			}
			waitpid(pid, NULL, 0);
			printf("forked %d\n", (int)pid);
		} else if (sscanf(line, "spawn %d", &n) == 1) {
			pid = fork();
			if (pid == 0) {
				fire(n);
				_exit(0);
			}
			printf("spawned %d\n", (int)pid);
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
		} else if (!strncmp(line, "shrink", 6)) {
			printf("shrunk %d\n", shrink());
		} else if (!strncmp(line, "pin", 3)) {
			cpu_set_t one;

			CPU_ZERO(&one);
			CPU_SET(0, &one);
			printf("pinned %d\n", sched_setaffinity(0, sizeof(one), &one) ? -1 : 0);
		} else if (!strncmp(line, "garble ", 7)) {
			printf("garbled %d\n", garble(atoi(line + 7)));
		} else if (!strncmp(line, "scribble", 8)) {
			printf("scribbled %d\n", scribble());
		} else if (!strncmp(line, "quit", 4)) {
			break;
		}
		fflush(stdout);
	}
	return 0;
}
