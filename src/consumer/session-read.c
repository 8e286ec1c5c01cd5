/* SPDX-License-Identifier: MIT */
/*
 * session-read.c - a reading session's pull API: usertp_session_next() and
 * usertp_session_next_page() give what the reader (reader.c) holds, and run the session
 * (usertp_session_process()) while it holds nothing, until the caller's time is up or
 * nothing more can come.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include <event-parse.h>

#include "ctl-proto.h"
#include "session.h"
#include "sinks.h"

#define POLL_MS 10 /* how often a waiting reader looks at the pages being written */

/* Can more records come?  Not once every program has ended and none can join any more. */
static bool more_can_come(const struct usertp_session *s)
{
	if (s->all || s->ran || !s->nr_sources)
		return true;
	for (unsigned int i = 0; i < s->nr_sources; i++)
		if (!s->sources[i]->ended)
			return true;
	return false;
}

/*
 * Nothing to give now: wait for more, until @deadline (@timeout_ms < 0: no limit).
 * Return: 1 to look again, 0 when the time is up, -ENODATA when nothing more can come, or
 * another negative errno.
 */
static int wait_for_more(struct usertp_session *s, long long deadline, int timeout_ms)
{
	long long left;
	int ret;

	if (!more_can_come(s)) {
		/* A child forked at the end may be waiting on our socket still. */
		ret = usertp_session_process(s, 0);
		if (ret)
			return ret;
		/* (The kernel's last pages, taken just now, are read before the end.) */
		return more_can_come(s) || s->kernel_took ? 1 : -ENODATA;
	}
	left = deadline - usertp__mono_ms();
	if (timeout_ms >= 0 && left <= 0)
		return 0;
	ret = usertp_session_process(s, timeout_ms < 0 || left > POLL_MS ? POLL_MS : (int)left);
	return ret ? ret : 1;
}

/* Can the session be read (a session in reading mode, not overwriting)? */
static int readable(struct usertp_session *s)
{
	if (!s->reader)
		return usertp__session_fail(s, -EINVAL, "the session writes a file: no records to read");
	if (s->overwrite)
		return usertp__session_fail(s, -EOPNOTSUPP, "an overwrite session is read at its end "
							    "(usertp_session_write_dat())");
	return 0;
}

/*
 * (Given whole to the caller's, as far as its struct_size goes.)  A record of a thread the
 * session cannot name yet: its program is asked first, so that the caller can print the name
 * (usertp_session_tep()), as the kernel names a thread that has ended since it recorded.
 */
static bool give_record(struct usertp_session *s, void *out)
{
	struct usertp_record rec;
	struct usertp__source *src;

	if (!usertp__reader_give_record(s, &rec))
		return false;
	if (rec.pid > 0 && rec.tid > 0 && !tep_is_pid_registered(usertp_session_tep(s), rec.tid) &&
	    (src = usertp__ses_source_of_pid(s, rec.pid)))
		usertp__ses_source_comms_now(s, src, rec.tid);
	usertp__struct_give(out, &rec, sizeof(rec));
	return true;
}

/*
 * Give one thing with @give (true: given) or wait for more, until @timeout_ms has passed.
 * Return: 1 when given, or what wait_for_more() says.
 */
static int read_loop(struct usertp_session *s, int timeout_ms,
		     bool (*give)(struct usertp_session *s, void *out), void *out)
{
	long long deadline = usertp__mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	int ret = readable(s);

	while (!ret) {
		uint64_t ts;

		/*
		 * The programs' records are read where they are committed, but the kernel's only
		 * when its pages are read, and those of a program that joined or forked since the
		 * session last looked only once it looks again.  With the kernel's events, a record
		 * newer than that look waits for one more, which may bring older ones (a forked
		 * child says so before its first event, and a look takes every such word waiting).  (Not without them: a look per record of
		 * a program that fires as fast as it is read costs too much, and the programs'
		 * records alone are ordered among those readable, as the man page says.)
		 */
		if (give == give_record && s->kernel && usertp__reader_next_ts(s, &ts) &&
		    ts >= s->looked_at && (ret = usertp_session_process(s, 0)))
			return ret;
		if (give(s, out))
			return 1;
		ret = wait_for_more(s, deadline, timeout_ms);
		if (ret != 1)
			return ret;
		ret = 0;
	}
	return ret;
}


static bool give_page(struct usertp_session *s, void *out)
{
	struct usertp_page page;

	if (!usertp__reader_give_page(s, &page))
		return false;
	usertp__struct_give(out, &page, sizeof(page));
	return true;
}

int usertp_session_next(struct usertp_session *s, struct usertp_record *rec, int timeout_ms)
{
	if (!USERTP__STRUCT_OK(rec, usertp_record, lost_before))
		return usertp__session_fail(s, -EINVAL, "a struct usertp_record without its size "
					    "(USERTP_STRUCT_INIT)");
	return read_loop(s, timeout_ms, give_record, rec);
}

int usertp_session_next_page(struct usertp_session *s, struct usertp_page *page, int timeout_ms)
{
	if (!USERTP__STRUCT_OK(page, usertp_page, events))
		return usertp__session_fail(s, -EINVAL, "a struct usertp_page without its size "
					    "(USERTP_STRUCT_INIT)");
	usertp__reader_page_done();
	return read_loop(s, timeout_ms, give_page, page);
}
