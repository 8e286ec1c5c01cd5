/* SPDX-License-Identifier: MIT */
/*
 * session-specs.c - what a session's event specs select (session.h), and the names of the
 * events its programs told of, against which specs are checked.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"
#include "spec.h"

bool usertp__session_selects(const struct usertp_session *s, const char *system, const char *name)
{
	bool on = false;

	for (unsigned int i = 0; i < s->nr_specs; i++) {
		bool negate = s->specs[i][0] == '!';

		if (usertp__spec_match(s->specs[i] + negate, system, name))
			on = !negate;
	}
	return on;
}

/* "sys:event" into its parts; false if it is not that. */
bool usertp__ses_split_event(const char *line, char *system, size_t size, const char **name)
{
	const char *colon = strchr(line, ':');

	if (!colon || (size_t)(colon - line) >= size)
		return false;
	memcpy(system, line, (size_t)(colon - line));
	system[colon - line] = 0;
	*name = colon + 1;
	return **name != 0;
}

/* Keep "sys:event" (@len bytes) among the names the programs told of. */
void usertp__ses_names_add(struct usertp_session *s, const char *line, size_t len)
{
	for (const char *p = s->names.text; p && p < s->names.text + s->names.len;
	     p += strcspn(p, "\n") + 1)
		if (strcspn(p, "\n") == len && !memcmp(p, line, len))
			return;
	if (s->names.len + len + 2 > s->names.cap) {
		size_t cap = s->names.cap ? 2 * s->names.cap : 4096;
		char *p;

		while (cap < s->names.len + len + 2)
			cap *= 2;
		p = realloc(s->names.text, cap);
		if (!p)
			return;
		s->names.text = p;
		s->names.cap = cap;
	}
	memcpy(s->names.text + s->names.len, line, len);
	s->names.len += len;
	s->names.text[s->names.len++] = '\n';
	s->names.text[s->names.len] = 0;
}

int usertp_session_spec_seen(const struct usertp_session *s, const char *spec, char *close,
			     size_t size)
{
	const char *names = s->names.text ? s->names.text : "";

	if (close && size)
		close[0] = 0;
	if (usertp__spec_check(spec, USERTP__SPEC_GLOB))
		return -EINVAL;
	if (usertp__spec_matches_any(spec, names))
		return 1;
	if (close && size)
		usertp__spec_close_matches(spec, names, close, size);
	return 0;
}

/* The specs as one events= value ("a,!b,c"), allocated. */
char *usertp__ses_specs_text(const struct usertp_session *s)
{
	return usertp__spec_list_text((const char *const *)s->specs, s->nr_specs);
}

