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

#include "bprint.h"
#include "format-field.h"
#include "grow.h"
#include "comms.h"
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

/*
 * More names of the threads of @src ("tid comm" lines), merged into those it told before: at
 * most USERTP__COMMS_MAX_BYTES of them (another user's program could send names without
 * end); past that, its new threads are not named (said once).
 */
void usertp__source_keep_comms(struct usertp_session *s, struct usertp__source *src,
			       const char *comms)
{
	if (!*comms)
		return;
	if ((src->comms ? strlen(src->comms) : 0) + strlen(comms) > USERTP__COMMS_MAX_BYTES) {
		if (!src->comms_full)
			usertp__session_log(s, "%s: more than %u MiB of thread names: those of its "
					    "newer threads are not kept", src->name,
					    USERTP__COMMS_MAX_BYTES >> 20);
		src->comms_full = true;
		return;
	}
	if (usertp__comms_merge(&src->comms, comms))
		return;
	if (s->sink)
		s->sink->comms(s, src, comms);
}

/* --- usertp_printk()'s formats and call sites --------------------------------------------- */

static bool printk_append(char **text, size_t *len, const char *line, size_t n)
{
	char *more = realloc(*text, *len + n + 2);

	if (!more)
		return false;
	memcpy(more + *len, line, n);
	more[*len + n] = '\n';
	*len += n + 1;
	more[*len] = 0;
	*text = more;
	return true;
}

void usertp__session_keep_printk(struct usertp_session *s, struct usertp__source *src,
				 const char *text)
{
	struct usertp__session_printk *p = &s->printk;
	size_t f0 = p->formats_len, k0 = p->sites_len;
	unsigned int bad = 0;

	for (const char *line = text; *line; line += strcspn(line, "\n"), line += *line == '\n') {
		size_t n = strcspn(line, "\n");
		uint64_t fkey = usertp__printk_format_parse(line, n, NULL, 0);
		uint64_t skey = fkey ? 0 : usertp__printk_site_parse(line, n, NULL, 0);
		uint64_t key = fkey ? fkey : skey, tagged;
		unsigned int i;

		if (!n)
			continue;
		if (!key) {
			bad++;
			continue;
		}
		tagged = key | (fkey ? 1ull << 63 : 0); /* (formats' and sites' keys apart) */
		for (i = 0; i < p->nr_keys && p->keys[i] != tagged; i++)
			;
		if (i < p->nr_keys)
			continue;
		if (p->formats_len + p->sites_len + n + 1 > USERTP__PRINTK_TEXT_MAX ||
		    !usertp__grow((void **)&p->keys, &p->cap, p->nr_keys + 1, sizeof(*p->keys)) ||
		    !(fkey ? printk_append(&p->formats, &p->formats_len, line, n)
			   : printk_append(&p->sites, &p->sites_len, line, n))) {
			bad++;
			continue;
		}
		p->keys[p->nr_keys++] = tagged;
	}
	if (bad)
		usertp__session_log(s, "%s: %u of its usertp_printk() formats are not kept (not "
				       "well-formed, or too many)", src->name, bad);
	if (s->sink && s->sink->printk && (p->formats_len > f0 || p->sites_len > k0))
		s->sink->printk(s, src, p->formats + f0, p->formats_len - f0,
				p->sites ? p->sites + k0 : "", p->sites_len - k0);
}

char *usertp__session_printk_formats(const struct usertp_session *s)
{
	return strdup(s->printk.formats ? s->printk.formats : "");
}

void usertp__session_printk_free(struct usertp_session *s)
{
	free(s->printk.formats);
	free(s->printk.sites);
	free(s->printk.keys);
	memset(&s->printk, 0, sizeof(s->printk));
}
