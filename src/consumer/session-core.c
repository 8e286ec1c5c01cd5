/* SPDX-License-Identifier: MIT */
/*
 * session-core.c - the bottom of a session (session-core.h): what it says (its error, its
 * log) and the formats of its sources' events, which the session's parts and its sinks all
 * use.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format-field.h"
#include "session-core.h"

/* --- errors and the log ------------------------------------------------------------------ */

int usertp__session_fail(struct usertp_session *s, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->error, sizeof(s->error), fmt, ap);
	va_end(ap);
	return err;
}

void usertp__session_log(struct usertp_session *s, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (!s->log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	s->log(line, s->log_arg);
}

const char *usertp_session_error(const struct usertp_session *s)
{
	return s ? s->error : "";
}

void usertp_session_set_log(struct usertp_session *s, void (*fn)(const char *line, void *arg),
			    void *arg)
{
	s->log = fn;
	s->log_arg = arg;
}

/* --- the formats of a source's events ----------------------------------------------------- */

bool usertp__source_has_event(const struct usertp__source *src, unsigned int id)
{
	for (unsigned int i = 0; i < src->nr_events; i++)
		if (src->events[i].id == id)
			return true;
	return false;
}

bool usertp__source_refused(const struct usertp__source *src, unsigned int id)
{
	for (unsigned int i = 0; i < src->nr_refused; i++)
		if (src->refused[i] == id)
			return true;
	return false;
}

void usertp__source_free_formats(struct usertp__source *src)
{
	for (unsigned int e = 0; e < src->nr_events; e++) {
		free((char *)src->events[e].system);
		free((char *)src->events[e].format);
	}
	free(src->events);
	src->events = NULL;
	src->nr_events = 0;
	free(src->refused);
	src->refused = NULL;
	src->nr_refused = 0;
}

void usertp__source_keep_format(struct usertp_session *s, struct usertp__source *src,
				unsigned int id, const char *system, const char *format)
{
	struct usertp__merge_event *ev;
	char why[160];

	/* Another user's program is not trusted: a format is checked before it goes anywhere. */
	if (!usertp__format_check(format, strlen(format), why, sizeof(why))) {
		unsigned int *more;

		if (usertp__source_refused(src, id))
			return;
		usertp__session_log(s, "%s: the format of event %u is refused (%s); its records "
				       "come without one", src->name, id, why);
		more = realloc(src->refused, (src->nr_refused + 1) * sizeof(*more));
		if (more) {
			src->refused = more;
			src->refused[src->nr_refused++] = id;
		}
		return;
	}
	ev = realloc(src->events, (src->nr_events + 1) * sizeof(*ev));
	if (!ev)
		return;
	src->events = ev;
	ev[src->nr_events++] = (struct usertp__merge_event){ id, strdup(system), strdup(format) };
	if (s->sink)
		s->sink->event(s, src, id, system, format);
}

void usertp__source_inherit(struct usertp_session *s, struct usertp__source *src)
{
	const struct usertp__source *parent = src->forked_from;

	for (unsigned int i = 0; parent && i < parent->nr_events; i++)
		if (!usertp__source_has_event(src, parent->events[i].id))
			usertp__source_keep_format(s, src, parent->events[i].id,
						   parent->events[i].system,
						   parent->events[i].format);
}

/* The names of the threads of @src ("tid comm" lines): the latest. */
void usertp__source_keep_comms(struct usertp_session *s, struct usertp__source *src,
			       const char *comms)
{
	if (src->comms && !strcmp(src->comms, comms))
		return;
	free(src->comms);
	src->comms = strdup(comms);
	if (src->comms && s->sink)
		s->sink->comms(s, src);
}
