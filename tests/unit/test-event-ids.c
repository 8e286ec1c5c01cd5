/* SPDX-License-Identifier: MIT */
/*
 * test-event-ids - one id space for the events of several programs (src/consumer/event-ids.c),
 * the rule the trace.dat merge and the session's reader share: the same event (system, name,
 * format but for its ID line) gets one id, the one it first wanted where free; another event
 * that wants a taken id gets the lowest free one; format texts come back with their id; bad
 * texts and a full space are refused.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "event-ids.h"
#include "../harness.h"

static char *format(const char *name, unsigned int id, const char *fields)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "name: %s\nID: %u\nformat:\n%s\nprint fmt: \"x\"\n", name, id,
		 fields);
	return buf;
}

static void same_and_different(void)
{
	struct usertp__ids ids = { 0 };
	bool added;
	int a, b, c, d, e;
	char *text;

	/* Program 1: job_done wants 7; program 2: the same event as 9, another event as 7. */
	a = usertp__ids_add(&ids, "jobs", format("job_done", 7, "\tfield:int id;"), 7, &added);
	CHECK(a >= 0 && added, "%d", a);
	b = usertp__ids_add(&ids, "jobs", format("job_done", 9, "\tfield:int id;"), 9, &added);
	CHECK(b == a && !added, "the same event, declared again: %d (%d)", b, a);
	c = usertp__ids_add(&ids, "jobs", format("job_queued", 7, "\tfield:int q;"), 7, &added);
	CHECK(c >= 0 && c != a && added, "another event: %d", c);
	/* Same name, another format: another event. */
	d = usertp__ids_add(&ids, "jobs", format("job_done", 7, "\tfield:long id;"), 7, &added);
	CHECK(d >= 0 && d != a && d != c && added, "same name, other format: %d", d);
	/* Same name and format, another system: another event. */
	e = usertp__ids_add(&ids, "other", format("job_done", 3, "\tfield:int id;"), 3, &added);
	CHECK(e >= 0 && e != a && added, "same name, other system: %d", e);
	usertp__ids_assign(&ids);
	CHECK(ids.events[a].id == 7, "the first wanted 7: %u", ids.events[a].id);
	CHECK(ids.events[c].id != 7 && ids.events[d].id != 7 && ids.events[c].id != ids.events[d].id,
	      "7 is taken: %u, %u", ids.events[c].id, ids.events[d].id);
	CHECK(ids.events[e].id == 3, "3 was free: %u", ids.events[e].id);
	text = usertp__ids_format(&ids, (unsigned int)c);
	CHECK(text && strstr(text, "name: job_queued\n") == text && strstr(text, "\tfield:int q;"),
	      "the format back: %s", text ? text : "(null)");
	{
		char want[32];

		snprintf(want, sizeof(want), "\nID: %u\n", ids.events[c].id);
		CHECK(text && strstr(text, want), "its new ID line: %s", text ? text : "(null)");
	}
	free(text);
	usertp__ids_free(&ids);
}

static void refused(void)
{
	struct usertp__ids ids = { 0 };
	bool added;
	unsigned int n = 0;
	int ret;

	CHECK(usertp__ids_add(&ids, "s", "no name line\n", 1, &added) == -EINVAL, "no name line");
	CHECK(usertp__ids_add(&ids, "s", "name: x\nformat:\n", 1, &added) == -EINVAL, "no ID line");
	CHECK(usertp__ids_add(&ids, "s", format("x", 1, ""), USERTP__IDS_MAX + 1, &added) == -EINVAL,
	      "an id out of range");
	/* The whole space: 65535 events (id 0 is never used), then E2BIG. */
	for (unsigned int i = 0; i < USERTP__IDS_MAX + 2; i++) {
		char name[32];

		snprintf(name, sizeof(name), "e%u", i);
		ret = usertp__ids_add(&ids, "s", format(name, 1, ""), 1, &added);
		if (ret < 0)
			break;
		n++;
	}
	CHECK(ret == -E2BIG && n == USERTP__IDS_MAX, "%u events, then %d", n, ret);
	usertp__ids_assign(&ids);
	{
		bool seen_zero = false, dup = false;
		static unsigned char taken[USERTP__IDS_MAX + 1];

		memset(taken, 0, sizeof(taken));
		for (unsigned int i = 0; i < ids.nr; i++) {
			seen_zero |= !ids.events[i].id;
			dup |= ids.events[i].id <= USERTP__IDS_MAX && taken[ids.events[i].id]++;
		}
		CHECK(!seen_zero && !dup, "every event one id of its own, none 0");
	}
	usertp__ids_free(&ids);
}

int main(void)
{
	same_and_different();
	refused();
	return harness_done();
}
