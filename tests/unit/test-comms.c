/* SPDX-License-Identifier: MIT */
/*
 * test-comms - the names of a program's threads as a session keeps them (src/consumer/comms.c,
 * usertp__source_keep_comms()): merged as the program tells more (a new thread added, a thread
 * id used again by another thread renamed, the others kept), and at most
 * USERTP__COMMS_MAX_BYTES of them from one program, whatever it sends (another user's program
 * may send names without end), the refusal said once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "comms.h"
#include "session-core.h"
#include "../harness.h"

static void merged(void)
{
	char *text = NULL;

	CHECK(!usertp__comms_merge(&text, "100 main\n101 worker\n"), " ");
	CHECK(text && !strcmp(text, "100 main\n101 worker\n"), "first: %s", text);
	/* A thread id used again by another thread, a new thread, a line naming none. */
	CHECK(!usertp__comms_merge(&text, "101 pool-1\n102 pool-2\nnot a line\n"), " ");
	CHECK(text && !strcmp(text, "100 main\n101 pool-1\n102 pool-2\n"), "merged: %s", text);
	/* Nothing new: unchanged. */
	CHECK(!usertp__comms_merge(&text, ""), " ");
	CHECK(text && !strcmp(text, "100 main\n101 pool-1\n102 pool-2\n"), "after none: %s", text);
	free(text);
}

static unsigned int said;

static void logged(const char *line, void *arg)
{
	(void)arg;
	if (strstr(line, "MiB of thread names"))
		said++;
}

/* Parts of 4 MiB of new threads, past the most a source keeps. */
static void bounded(void)
{
	struct usertp_session *s = calloc(1, sizeof(*s));
	struct usertp__source *src = calloc(1, sizeof(*src));
	const size_t part = 4u << 20;
	char *lines = malloc(part + 64);
	int tid = 1;

	if (!s || !src || !lines)
		exit(1);
	s->log = logged; /* (no sink: the names are only kept) */
	snprintf(src->name, sizeof(src->name), "flood[1]");
	for (unsigned int round = 0; round < 12; round++) {
		size_t len = 0;

		while (len < part)
			len += (size_t)sprintf(lines + len, "%d thread-%d\n", tid, tid), tid++;
		usertp__source_keep_comms(s, src, lines);
	}
	CHECK(src->comms && strlen(src->comms) <= USERTP__COMMS_MAX_BYTES &&
	      strlen(src->comms) > USERTP__COMMS_MAX_BYTES - part - 64,
	      "kept %zu bytes", src->comms ? strlen(src->comms) : 0);
	CHECK(src->comms_full && said == 1, "full %d, said %u times", src->comms_full, said);
	/* What was kept stays whole: the first thread, and the last of the last part taken. */
	CHECK(src->comms && !strncmp(src->comms, "1 thread-1\n", 11), " ");
	free(src->comms);
	free(src);
	free(s);
	free(lines);
}

int main(void)
{
	merged();
	bounded();
	return harness_done();
}
