/* SPDX-License-Identifier: MIT */
/*
 * test-pid-list - the pid lists of set_event_pid (src/common/pid-list.c): a table of writes
 * (docs/tracefs.md section 12 and what this machine's kernel does), each appended to a list
 * holding "7", with the list or the errno it must give; then, where tracefs can be written
 * (root), the same writes to set_event_pid of a private instance, which must give the same
 * (but for the kernel's bug noted in the table).  Exit 0, or 1 with what differed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pid-list.h"

#include "../harness.h"

#define TRACEFS "/sys/kernel/tracing"
#define SPACES " \t\n\r\v\f"

static const struct {
	const char *write;
	int err;		/* 0 or the negative errno */
	const char *list;	/* after it, from "7" (one pid a line) */
	bool kernel_differs;	/* a kernel bug, said in the comment */
} cases[] = {
	{ "5", 0, "5\n7\n", false },
	{ "5 3 5 3", 0, "3\n5\n7\n", false },		/* duplicates ignored */
	{ "\t12\n 4 ", 0, "4\n7\n12\n", false },
	{ "", 0, "7\n", false },			/* nothing: no change */
	{ "   ", 0, "7\n", false },
	{ "0", 0, "0\n7\n", false },			/* 0 is taken */
	{ "4194305", 0, "7\n4194305\n", false },	/* above pid_max: taken */
	{ "1073741823", 0, "7\n1073741823\n", false },	/* the last the kernel's lists hold */
	{ "1073741824", -EPERM, "7\n", false },
	{ "2147483647", -EPERM, "7\n", false },
	/* The kernel keeps 32 bits of the number: this one becomes pid 0.  Refused here. */
	{ "4294967296", -EPERM, "7\n", true },
	{ "99999999999999999999", -EINVAL, "7\n", false },
	{ "+5", 0, "5\n7\n", false },			/* kstrtoul(): a '+', octal, hex */
	{ "010", 0, "7\n8\n", false },
	{ "0x10", 0, "7\n16\n", false },
	{ "08", -EINVAL, "7\n", false },
	{ "0x", -EINVAL, "7\n", false },
	{ "abc", -EINVAL, "7\n", false },
	{ "-5", -EINVAL, "7\n", false },
	{ "!100", -EINVAL, "7\n", false },
	{ "7 x", -EINVAL, "7\n", false },		/* one bad token: nothing added */
	{ "1 2 x 3", -EINVAL, "7\n", false },
	{ "1,2", -EINVAL, "7\n", false },
	{ " - ", -EINVAL, "7\n", false },
};

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	int err = 0;

	if (fd < 0)
		return errno;
	/* (A write of nothing is not made: as echo -n '' > file.) */
	if (*text && write(fd, text, strlen(text)) < 0)
		err = errno;
	close(fd);
	return err;
}

/* The kernel's answer for each case, appended to "7" in a private instance. */
static void kernel_compare(void)
{
	char inst[256], path[300], list[4096];
	struct stat st;

	if (stat(TRACEFS "/instances", &st) || access(TRACEFS "/instances", W_OK)) {
		printf("test-pid-list: tracefs cannot be written here: the kernel comparison is skipped\n");
		return;
	}
	snprintf(inst, sizeof(inst), TRACEFS "/instances/usertp-pid-list-%d", (int)getpid());
	if (mkdir(inst, 0755)) {
		printf("test-pid-list: cannot make an instance (%s): skipped\n", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/set_event_pid", inst);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int fd, err;
		ssize_t n;

		if (write_file(path, "7")) {
			harness_failed++;
			break;
		}
		fd = open(path, O_WRONLY | O_APPEND);
		err = fd < 0 ? errno : 0;
		if (fd >= 0 && *cases[i].write && write(fd, cases[i].write, strlen(cases[i].write)) < 0)
			err = errno;
		if (fd >= 0)
			close(fd);
		fd = open(path, O_RDONLY);
		n = fd >= 0 ? read(fd, list, sizeof(list) - 1) : -1;
		if (fd >= 0)
			close(fd);
		list[n > 0 ? n : 0] = 0;
		if (cases[i].kernel_differs) {
			CHECK(!err && strcmp(list, cases[i].list),
			      "kernel: '%s': the bug noted is gone (errno %d, list [%s])", cases[i].write,
			      err, list);
			continue;
		}
		CHECK(-err == cases[i].err && !strcmp(list, cases[i].list),
		      "kernel: '%s': errno %d list [%s], usertp: %d [%s]", cases[i].write, err, list,
		      -cases[i].err, cases[i].list);
	}
	write_file(path, "");
	rmdir(inst);
	printf("test-pid-list: %zu writes compared with the kernel's set_event_pid\n",
	       sizeof(cases) / sizeof(cases[0]));
}

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct usertp__pid_list list = { NULL, 0 };
		char *text;
		int ret;

		usertp__pid_list_add(&list, 7);
		ret = usertp__pid_list_parse(&list, cases[i].write, SPACES);
		text = usertp__pid_list_text(&list, '\n');
		CHECK(ret == cases[i].err && text && !strcmp(text, cases[i].list),
		      "'%s': %d [%s], expected %d [%s]", cases[i].write, ret, text ? text : "",
		      cases[i].err, cases[i].list);
		CHECK(usertp__pid_list_check(cases[i].write, SPACES) == cases[i].err,
		      "check '%s' differs from parse", cases[i].write);
		free(text);
		usertp__pid_list_free(&list);
	}
	/* The protocol's form: commas; and removing. */
	{
		struct usertp__pid_list list = { NULL, 0 };
		char *text;

		CHECK(!usertp__pid_list_parse(&list, "30,10,20,10", ","), "commas");
		usertp__pid_list_remove(&list, 20);
		usertp__pid_list_remove(&list, 99);
		text = usertp__pid_list_text(&list, ',');
		CHECK(text && !strcmp(text, "10,30"), "commas: [%s]", text ? text : "");
		CHECK(usertp__pid_list_has(&list, 30) && !usertp__pid_list_has(&list, 20), "has");
		free(text);
		usertp__pid_list_free(&list);
	}
	kernel_compare();
	if (harness_failed)
		fprintf(stderr, "test-pid-list: %d harness_failed\n", harness_failed);
	return harness_failed != 0;
}
