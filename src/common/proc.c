/* SPDX-License-Identifier: MIT */
/*
 * proc.c - what /proc says about a process: the one reader of /proc/PID/stat and of threads'
 * names (proc.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proc.h"

/* /proc/@pid/stat into @buf: return where its field 3 (the state) begins, or NULL (-errno in *@err). */
static const char *stat_fields(pid_t pid, char *buf, size_t size, int *err)
{
	char path[64];
	const char *at;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	n = read(fd, buf, size - 1);
	*err = n < 0 ? -errno : -EINVAL;
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = 0;
	/* "pid (comm) state ppid ...": the comm may hold anything, up to the last ')'. */
	at = strrchr(buf, ')');
	return at && at[1] == ' ' && at[2] ? at + 2 : NULL;
}

int usertp__proc_stat_field(pid_t pid, int field, unsigned long long *value)
{
	char buf[1024], *end;
	const char *at;
	int err;

	if (field < 3)
		return -EINVAL; /* (the pid is known, the comm is not a number) */
	at = stat_fields(pid, buf, sizeof(buf), &err);
	if (!at)
		return err;
	/* Each further field one word on. */
	for (int f = 4; at && f <= field; f++)
		at = strchr(at, ' ') ? strchr(at, ' ') + 1 : NULL;
	if (!at)
		return -EINVAL;
	errno = 0;
	*value = strtoull(at, &end, 10);
	return errno || end == at ? -EINVAL : 0;
}

char usertp__proc_state(pid_t pid)
{
	char buf[1024];
	int err;
	const char *at = stat_fields(pid, buf, sizeof(buf), &err);

	return at ? *at : 0;
}

bool usertp__proc_runs(pid_t pid)
{
	char state = usertp__proc_state(pid);

	return state && !strchr("ZXx", state);
}

int usertp__proc_comm(pid_t pid, pid_t tid, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	if (!size)
		return -EINVAL;
	if (pid)
		snprintf(path, sizeof(path), tid ? "/proc/%d/task/%d/comm" : "/proc/%d/comm",
			 (int)pid, (int)tid);
	else
		snprintf(path, sizeof(path), tid ? "/proc/self/task/%d/comm" : "/proc/self/comm",
			 (int)tid);
	buf[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int usertp__proc_arg(pid_t pid, unsigned int n, char *buf, size_t size)
{
	char path[64], text[4096];
	const char *at = text, *end;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, text, sizeof(text));
	close(fd);
	if (len < 0)
		return -EIO;
	end = text + len;
	for (; n && at < end; n--)
		at += strnlen(at, (size_t)(end - at)) + 1;
	if (at >= end || memchr(at, 0, (size_t)(end - at)) == NULL)
		return -ENOENT;
	if (strlen(at) >= size)
		return -ERANGE;
	strcpy(buf, at);
	return 0;
}

void usertp__child_exit(int status)
{
	for (;;)
		syscall(SYS_exit_group, status);
}

int usertp__proc_owner(pid_t pid, uid_t *uid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st))
		return -errno;
	*uid = st.st_uid;
	return 0;
}

pid_t usertp__proc_parent(pid_t pid)
{
	unsigned long long ppid;

	return usertp__proc_stat_field(pid, 4, &ppid) || ppid > (unsigned long long)INT32_MAX
		       ? 0
		       : (pid_t)ppid;
}

int usertp__proc_boot_id(char *buf, size_t size)
{
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC), err;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = size > 36 ? read(fd, buf, 36) : -1;
	err = n < 0 ? errno : 0;
	close(fd);
	if (n != 36)
		return err ? -err : -EINVAL;
	buf[36] = 0;
	return 0;
}
