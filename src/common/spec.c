/* SPDX-License-Identifier: MIT */
/*
 * spec.c - event specifications in the language of tracefs' set_event file: "sys:event",
 * "sys:*" or "sys:", "*:event" or ":event", "*:*", and a bare "name" that selects a whole
 * system or every event of that name.  In set_event's own form (the mount's) matching is
 * exact and a star is only ever a whole side of the colon; trace-cmd's -e form
 * (USERTP__SPEC_GLOB) takes shell globs on either side.  A leading '!' disables.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec.h"

int usertp__spec_parse(const char *tok, size_t len, unsigned int flags, struct usertp__spec *spec)
{
	const char *colon;
	size_t slen;

	memset(spec, 0, sizeof(*spec));
	spec->glob = flags & USERTP__SPEC_GLOB;
	spec->tracefs = flags & USERTP__SPEC_TRACEFS;
	if (len && tok[0] == '!') {
		spec->disable = true;
		tok++;
		len--;
	}
	if (!len || len > USERTP__SPEC_MAX || (len == 1 && tok[0] == '*'))
		return -EINVAL;
	colon = memchr(tok, ':', len);
	if (colon && memchr(colon + 1, ':', len - (size_t)(colon + 1 - tok)))
		return -EINVAL;
	/*
	 * set_event's: a star is a whole side of the colon or nothing, no globbing.  trace-cmd's
	 * -e (USERTP__SPEC_GLOB): shell globs on either side ("sys:io_*", "sched:sched_*").
	 */
	for (const char *p = tok; p < tok + len; p++) {
		if (isspace((unsigned char)*p) || !*p)
			return -EINVAL;
		if (*p != '*' || spec->glob)
			continue;
		if (!colon || !((p == tok && p + 1 == colon) || (p == colon + 1 && p + 1 == tok + len)))
			return -EINVAL;
	}
	if (!colon) {
		spec->either = true;
		memcpy(spec->system, tok, len);
		return 0;
	}
	slen = (size_t)(colon - tok);
	if (!(slen == 1 && tok[0] == '*'))
		memcpy(spec->system, tok, slen);
	if (!(len - slen - 1 == 1 && colon[1] == '*'))
		memcpy(spec->event, colon + 1, len - slen - 1);
	return 0;
}

/* One side: "" any, a glob where the spec takes them, else the exact name. */
static bool side_matches(const struct usertp__spec *spec, const char *pattern, const char *value)
{
	if (!pattern[0])
		return true;
	if (spec->glob && strpbrk(pattern, "*?["))
		return !fnmatch(pattern, value, 0);
	return !strcmp(pattern, value);
}

bool usertp__spec_selects(const struct usertp__spec *spec, const char *system, const char *name)
{
	/* As the kernel's set_event, which ignores its own ftrace events (the markers). */
	if (spec->tracefs && !strcmp(system, "ftrace"))
		return false;
	if (spec->either)
		return !strcmp(spec->system, system) || !strcmp(spec->system, name);
	return side_matches(spec, spec->system, system) && side_matches(spec, spec->event, name);
}

bool usertp__spec_covers(const struct usertp__spec *later, const struct usertp__spec *earlier)
{
	if (later->either)
		return earlier->either && !strcmp(later->system, earlier->system);
	if (earlier->either)
		return !later->system[0] && !later->event[0];
	/* (A glob is taken to cover only what it is the same text as.) */
	return (!later->system[0] || !strcmp(later->system, earlier->system)) &&
	       (!later->event[0] || !strcmp(later->event, earlier->event));
}

int usertp__spec_check(const char *spec, unsigned int flags)
{
	struct usertp__spec parsed;

	if (spec[0] == '!')
		return -EINVAL;
	return usertp__spec_parse(spec, strlen(spec), flags, &parsed);
}

bool usertp__spec_match(const char *spec, const char *system, const char *name)
{
	struct usertp__spec parsed;

	/* (Specs are checked when they are given; globs only where they were taken.) */
	return !usertp__spec_parse(spec, strlen(spec), USERTP__SPEC_GLOB, &parsed) &&
	       usertp__spec_selects(&parsed, system, name);
}

/* --- did you mean ------------------------------------------------------------------------- */

static unsigned int edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
	unsigned int row[128], prev, tmp;

	if (lb >= 128 || la >= 128)
		return 1000;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned int)j;
	for (size_t i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = (unsigned int)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned int best = prev + (a[i - 1] != b[j - 1]);

			tmp = row[j];
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = tmp;
		}
	}
	return row[lb];
}

/* The next "sys:event" line of @names (a leading "id " is skipped); false at the end. */
static bool next_name(const char **names, const char **line, size_t *len, const char **colon)
{
	const char *p = *names;

	while (*p) {
		size_t n = strcspn(p, "\n");
		const char *start = p, *c;

		*names = p + n + (p[n] == '\n');
		while (start < p + n && isdigit((unsigned char)*start))
			start++;
		if (start > p && start < p + n && *start == ' ')
			start++;
		else
			start = p;
		c = memchr(start, ':', (size_t)(p + n - start));
		if (c && c > start && c + 1 < p + n) {
			*line = start;
			*len = (size_t)(p + n - start);
			*colon = c;
			return true;
		}
		p = *names;
	}
	return false;
}

bool usertp__spec_matches_any(const char *spec, const char *names)
{
	const char *line, *colon;
	size_t len;

	while (next_name(&names, &line, &len, &colon)) {
		char system[256], name[256];
		size_t slen = (size_t)(colon - line), nlen = len - slen - 1;

		if (slen >= sizeof(system) || nlen >= sizeof(name))
			continue;
		memcpy(system, line, slen);
		system[slen] = 0;
		memcpy(name, colon + 1, nlen);
		name[nlen] = 0;
		if (usertp__spec_match(spec, system, name))
			return true;
	}
	return false;
}

unsigned int usertp__spec_close_matches(const char *spec, const char *names, char *out,
					size_t size)
{
	const char *best[3] = { NULL, NULL, NULL }, *line, *colon;
	size_t best_len[3] = { 0, 0, 0 }, len, slen = strlen(spec), used = 0;
	unsigned int best_d[3] = { 1000, 1000, 1000 }, n = 0, k;

	while (next_name(&names, &line, &len, &colon)) {
		unsigned int d = edit_distance(spec, slen, line, len);

		/* A spec without a system is compared with the event's name too. */
		if (!strchr(spec, ':')) {
			unsigned int dn = edit_distance(spec, slen, colon + 1,
							len - (size_t)(colon + 1 - line));

			d = dn < d ? dn : d;
		}
		for (k = 0; k < 3 && best_d[k] <= d; k++)
			if (best_len[k] == len && !memcmp(best[k], line, len))
				k = 3; /* listed already (several programs) */
		if (k >= 3 || d > slen / 2 + 1)
			continue;
		for (unsigned int m = 2; m > k; m--) {
			best[m] = best[m - 1];
			best_len[m] = best_len[m - 1];
			best_d[m] = best_d[m - 1];
		}
		best[k] = line;
		best_len[k] = len;
		best_d[k] = d;
	}
	if (size)
		out[0] = 0;
	for (k = 0; k < 3 && best[k]; k++) {
		int w = snprintf(out + used, size > used ? size - used : 0, "%s%.*s", k ? ", " : "",
				 (int)best_len[k], best[k]);

		if (w < 0 || used + (size_t)w >= size)
			break;
		used += (size_t)w;
		n++;
	}
	return n;
}

/* --- lists of specs ----------------------------------------------------------------------- */

void usertp__spec_list_free(struct usertp__spec_list *list)
{
	while (list->nr)
		free(list->specs[--list->nr]);
	free(list->specs);
	list->specs = NULL;
}

/* The longest spec a list may hold (a system and an event name, each far shorter). */
#define SPEC_MAX 511

int usertp__spec_list_check(const char *text, unsigned int flags)
{
	const char *p = text;

	while (*p) {
		char spec[SPEC_MAX + 1];
		size_t len;

		p += strspn(p, ", \t\n\v\f\r");
		if (!*p)
			break;
		len = strcspn(p, ", \t\n\v\f\r");
		if (len > SPEC_MAX)
			return -EINVAL;
		memcpy(spec, p, len);
		spec[len] = 0;
		if (usertp__spec_check(spec + (spec[0] == '!'), flags))
			return -EINVAL;
		p += len;
	}
	return 0;
}

int usertp__spec_list_parse(const char *text, unsigned int flags, struct usertp__spec_list *out,
			    unsigned int *bad)
{
	const char *p = text;

	*out = (struct usertp__spec_list){ NULL, 0 };
	while (*p) {
		const char *start;
		char **more, *spec;

		while (*p == ',' || isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		for (start = p; *p && *p != ',' && !isspace((unsigned char)*p); p++)
			;
		more = realloc(out->specs, (out->nr + 1) * sizeof(*more));
		if (more)
			out->specs = more;
		spec = more ? strndup(start, (size_t)(p - start)) : NULL;
		if (!spec) {
			usertp__spec_list_free(out);
			return -ENOMEM;
		}
		out->specs[out->nr++] = spec;
		if (usertp__spec_check(spec + (spec[0] == '!'), flags)) {
			if (bad)
				*bad = out->nr - 1;
			usertp__spec_list_free(out);
			return -EINVAL;
		}
	}
	return 0;
}

char *usertp__spec_list_text(const char *const *specs, unsigned int nr)
{
	size_t len = 1, at = 0;
	char *text;

	for (unsigned int i = 0; i < nr; i++)
		len += strlen(specs[i]) + 1;
	text = malloc(len);
	for (unsigned int i = 0; text && i < nr; i++)
		at += (size_t)sprintf(text + at, "%s%s", i ? "," : "", specs[i]);
	if (text)
		text[at] = 0;
	return text;
}
