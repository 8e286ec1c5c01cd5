/* SPDX-License-Identifier: MIT */
/*
 * test-proc - what /proc says (src/common/proc.c): a process's parent, start time, state and
 * owner from the one reader of /proc/PID/stat, also when its name holds what would mislead a
 * naive parser (") (", spaces, digits: the name sits between parentheses, and the numbers
 * follow the last ')'); threads' names; command lines; and a worker child's end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "../harness.h"

/* A child named @name that waits; its pid. */
static pid_t child_named(const char *name, int *go)
{
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		char c;

		close(fds[1]);
		prctl(PR_SET_NAME, name);
		(void)!read(fds[0], &c, 1);
		_exit(0);
	}
	close(fds[0]);
	*go = fds[1];
	return pid;
}

int main(void)
{
	static const char *const names[] = { "plain", "a) (b", ") 9 9 9 (", "x y z", "))))" };
	unsigned long long v, start_self;
	uid_t uid;

	CHECK(usertp__proc_parent(getpid()) == getppid(), "parent %d",
	      (int)usertp__proc_parent(getpid()));
	CHECK(!usertp__proc_stat_field(getpid(), 4, &v) && v == (unsigned long long)getppid(),
	      "field 4: %llu", v);
	CHECK(!usertp__proc_stat_field(getpid(), 22, &start_self) && start_self > 0, "start time");
	CHECK(!usertp__proc_owner(getpid(), &uid) && uid == geteuid(), "owner %u", (unsigned)uid);
	CHECK(usertp__proc_stat_field(getpid(), 2, &v) == -EINVAL, "field 2 (the name) is no number");
	CHECK(usertp__proc_stat_field(getpid(), 999, &v) == -EINVAL, "no field 999");
	/* No such process (pid_max is at most 2^22). */
	CHECK(usertp__proc_stat_field(1 << 23, 4, &v) == -ENOENT, "no such process");
	CHECK(usertp__proc_parent(1 << 23) == 0, "no parent of no process");
	CHECK(usertp__proc_owner(1 << 23, &uid) == -ENOENT, "no owner of no process");
	CHECK(usertp__proc_state(getpid()) == 'R', "our state '%c'", usertp__proc_state(getpid()));
	CHECK(usertp__proc_state(1 << 23) == 0, "no state of no process");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int go = -1;
		pid_t pid = child_named(names[i], &go);
		char comm[64] = "";

		if (pid <= 0)
			continue;
		/* Its name set (read back from comm: usertp__proc_comm()), then its stat read. */
		for (int tries = 0; tries < 1000 && strncmp(comm, names[i], strlen(names[i])); tries++)
			if (usertp__proc_comm(pid, 0, comm, sizeof(comm)) ||
			    strncmp(comm, names[i], strlen(names[i])))
				usleep(1000);
		CHECK(!strcmp(comm, names[i]), "'%s': comm '%s'", names[i], comm);
		CHECK(!usertp__proc_comm(pid, pid, comm, sizeof(comm)) && !strcmp(comm, names[i]),
		      "'%s': its main thread's comm '%s'", names[i], comm);
		CHECK(usertp__proc_parent(pid) == getpid(), "'%s': parent %d", names[i],
		      (int)usertp__proc_parent(pid));
		CHECK(!usertp__proc_stat_field(pid, 22, &v) && v >= start_self, "'%s': start %llu",
		      names[i], v);
		/* Waiting in read(): asleep; stopped: 'T' (what control.c's joins look for). */
		for (int tries = 0; tries < 1000 && usertp__proc_state(pid) != 'S'; tries++)
			usleep(1000);
		CHECK(usertp__proc_state(pid) == 'S', "'%s': state '%c'", names[i],
		      usertp__proc_state(pid));
		kill(pid, SIGSTOP);
		for (int tries = 0; tries < 1000 && usertp__proc_state(pid) != 'T'; tries++)
			usleep(1000);
		CHECK(usertp__proc_state(pid) == 'T', "'%s': stopped, state '%c'", names[i],
		      usertp__proc_state(pid));
		kill(pid, SIGCONT);
		close(go);
		waitpid(pid, NULL, 0);
	}
	/* Our own command line (argv[0], nothing after it), and none of no process. */
	{
		char arg[4096];

		CHECK(!usertp__proc_arg(getpid(), 0, arg, sizeof(arg)) && strstr(arg, "test-proc"),
		      "argv[0] '%s'", arg);
		CHECK(usertp__proc_arg(getpid(), 1, arg, sizeof(arg)) == -ENOENT, "no argv[1]");
		CHECK(usertp__proc_arg(getpid(), 0, arg, 2) == -ERANGE, "argv[0] in 2 bytes");
		CHECK(usertp__proc_arg(1 << 23, 0, arg, sizeof(arg)) == -ENOENT, "no process");
	}
	/* Our own name, and none of no process. */
	{
		char comm[17] = "x";

		CHECK(!usertp__proc_comm(0, 0, comm, sizeof(comm)) && !strcmp(comm, "test-proc"),
		      "our comm '%s'", comm);
		CHECK(usertp__proc_comm(1 << 23, 0, comm, sizeof(comm)) == -ENOENT && !comm[0],
		      "comm of no process");
	}
	/*
	 * A worker child's end: nothing of what the parent's stdio held is written again (under
	 * ThreadSanitizer, _exit() flushed it: usertp stream printed records twice).
	 */
	{
		int fds[2], status = 0;
		char buf[64];
		ssize_t n;
		pid_t pid;

		if (pipe(fds))
			return 1;
		pid = fork();
		if (pid == 0) {
			dup2(fds[1], STDOUT_FILENO);
			setvbuf(stdout, NULL, _IOFBF, 4096);
			printf("held in the buffer");
			usertp__child_exit(3);
		}
		close(fds[1]);
		n = read(fds[0], buf, sizeof(buf));
		waitpid(pid, &status, 0);
		CHECK(n == 0, "the child wrote %zd bytes of its stdio buffer", n);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 3, "status %#x", (unsigned)status);
		close(fds[0]);
	}
	return harness_done();
}
