/* SPDX-License-Identifier: MIT */
/*
 * comms.c - the names of a program's threads as a session keeps them (comms.h).  A program
 * tells them in parts (those noted since it last told: src/lib/comm.c), and all of them at its
 * exit; the session keeps every one it heard, so that a file names the threads of a pool
 * that made more threads than the program's ring holds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comms.h"

static int compare_tid(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

/* The thread of a "tid comm" line, 0 if it names none. */
static int line_tid(const char *line)
{
	long tid = strtol(line, NULL, 10);

	return tid > 0 && tid <= 0x7fffffff ? (int)tid : 0;
}

int usertp__comms_merge(char **text, const char *lines)
{
	size_t n = 0, size = 0;
	int *tids = NULL;
	char *merged = NULL;
	FILE *f;

	if (!lines || !*lines)
		return 0;
	for (const char *p = lines; *p; p += strcspn(p, "\n"), p += *p == '\n')
		n++;
	if (*text && **text) {
		if (!(tids = malloc(n * sizeof(*tids))))
			return -ENOMEM;
		n = 0;
		for (const char *p = lines; *p; p += strcspn(p, "\n"), p += *p == '\n')
			tids[n++] = line_tid(p);
		qsort(tids, n, sizeof(*tids), compare_tid);
	}
	if (!(f = open_memstream(&merged, &size))) {
		free(tids);
		return -ENOMEM;
	}
	for (const char *p = *text; tids && p && *p; p += strcspn(p, "\n"), p += *p == '\n') {
		int tid = line_tid(p);

		if (!bsearch(&tid, tids, n, sizeof(*tids), compare_tid))
			fprintf(f, "%.*s\n", (int)strcspn(p, "\n"), p);
	}
	for (const char *p = lines; *p; p += strcspn(p, "\n"), p += *p == '\n')
		if (line_tid(p))
			fprintf(f, "%.*s\n", (int)strcspn(p, "\n"), p);
	free(tids);
	if (fclose(f) || !merged) {
		free(merged);
		return -ENOMEM;
	}
	free(*text);
	*text = merged;
	return 0;
}
