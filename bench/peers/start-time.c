/* SPDX-License-Identifier: MIT */
/*
 * start-time.c - how long programs take to start and to end, measured from outside.
 *
 *	start-time STARTS ROUNDS PROGRAM...
 *
 * Runs each PROGRAM as "PROGRAM --start-time" STARTS times in a row, the programs in turn,
 * ROUNDS rounds, and prints one line per program and round:
 *
 *	PROGRAM ROUND TO_MAIN_US TO_EXIT_US
 *
 * the means over the STARTS runs of the time from just before posix_spawn() to main() (the
 * program prints CLOCK_MONOTONIC's nanoseconds as its main() begins, peer-event.c) and to
 * waitpid()'s return: exec, dynamic loading and constructors; then everything to the end,
 * atexit handlers and the tear-down included.  posix_spawn() rather than a shell loop: the
 * shell's own fork would be counted with every start.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "peer-number.h"

extern char **environ;

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* One start of @path: its time to main() and to its end, in ns; 0, or -1 if it failed. */
static int start_once(const char *path, int64_t *to_main, int64_t *to_exit)
{
	char mode[] = "--start-time", *argv[] = { (char *)path, mode, NULL };
	posix_spawn_file_actions_t actions;
	char buf[64];
	int pipe_fd[2], status;
	long long at_main;
	int64_t t0;
	ssize_t n;
	pid_t pid;
	int ret;

	if (pipe(pipe_fd))
		return -1;
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_adddup2(&actions, pipe_fd[1], STDOUT_FILENO);
	posix_spawn_file_actions_addclose(&actions, pipe_fd[0]);
	t0 = now_ns();
	ret = posix_spawn(&pid, path, &actions, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&actions);
	close(pipe_fd[1]);
	if (ret) {
		close(pipe_fd[0]);
		fprintf(stderr, "start-time: %s: %s\n", path, strerror(ret));
		return -1;
	}
	n = read(pipe_fd[0], buf, sizeof(buf) - 1);
	close(pipe_fd[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	*to_exit = now_ns() - t0;
	buf[n > 0 ? n : 0] = 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) || sscanf(buf, "%lld", &at_main) != 1) {
		fprintf(stderr, "start-time: %s --start-time: no time printed, or it failed\n", path);
		return -1;
	}
	*to_main = (int64_t)at_main - t0;
	return 0;
}

int main(int argc, char **argv)
{
	long starts, rounds, round, i;
	int p;

	if (argc < 4) {
		fprintf(stderr, "usage: start-time STARTS ROUNDS PROGRAM...\n");
		return 2;
	}
	starts = peer_number("start-time", argv[1], 1, 100000, "starts");
	rounds = peer_number("start-time", argv[2], 1, 1000, "rounds");
	for (round = 1; round <= rounds; round++)
		for (p = 3; p < argc; p++) {
			int64_t to_main = 0, to_exit = 0, m, e;

			for (i = 0; i < starts; i++) {
				if (start_once(argv[p], &m, &e))
					return 1;
				to_main += m;
				to_exit += e;
			}
			printf("%s %ld %.1f %.1f\n", argv[p], round, to_main / 1e3 / starts,
			       to_exit / 1e3 / starts);
		}
	return 0;
}
