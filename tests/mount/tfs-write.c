/* SPDX-License-Identifier: MIT */
/*
 * tfs-write - one open() and at most one write() on a tracefs file, and what they returned:
 * the shell's echo retries short writes and says nothing exact about errors, and tracefs's
 * answers are in exactly those (set_event takes one token per write).
 *
 *	tfs-write [-t] FILE [TEXT]
 *
 * -t opens with O_TRUNC.  TEXT may hold \n, \t and \\.  Prints the bytes written (or
 * "open" when there is no TEXT), or the errno's name (EINVAL, ...) of the call that failed,
 * "open: ENOENT" for the open.  Exits 0 unless used wrongly.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t unescape(const char *in, char *out)
{
	size_t n = 0;

	for (; *in; in++) {
		if (*in == '\\' && in[1]) {
			in++;
			out[n++] = *in == 'n' ? '\n' : *in == 't' ? '\t' : *in;
		} else {
			out[n++] = *in;
		}
	}
	return n;
}

int main(int argc, char **argv)
{
	int flags = O_WRONLY, fd, arg = 1;
	char *text;
	size_t len;
	ssize_t n;

	if (argc > 1 && !strcmp(argv[1], "-t")) {
		flags |= O_TRUNC;
		arg++;
	}
	if (argc - arg < 1 || argc - arg > 2) {
		fprintf(stderr, "usage: tfs-write [-t] FILE [TEXT]\n");
		return 2;
	}
	fd = open(argv[arg], flags);
	if (fd < 0) {
		printf("open: %s\n", strerrorname_np(errno));
		return 0;
	}
	if (argc - arg == 1) {
		printf("open\n");
		return 0;
	}
	text = malloc(strlen(argv[arg + 1]) + 1);
	if (!text)
		return 2;
	len = unescape(argv[arg + 1], text);
	n = write(fd, text, len);
	if (n < 0)
		printf("%s\n", strerrorname_np(errno));
	else
		printf("%zd\n", n);
	free(text);
	close(fd);
	return 0;
}
