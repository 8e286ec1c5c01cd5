/* SPDX-License-Identifier: MIT */
/*
 * spec.c - event specifications in the language of tracefs' set_event file: "sys:event",
 * "sys:*" or "sys:", "*:event" or ":event", "*:*", and a bare "name" that selects a whole
 * system or every event of that name.  Matching is exact: there is no globbing, and a star is
 * only ever a whole side of the colon.  (A leading '!' is the caller's business.)
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "spec.h"

#define SPEC_MAX 127 /* the kernel's limit for one set_event token */

int usertp__spec_check(const char *spec, unsigned int flags)
{
	size_t len = strlen(spec);
	const char *colon = strchr(spec, ':');

	if (!len || len > SPEC_MAX || !strcmp(spec, "*") || spec[0] == '!')
		return -EINVAL;
	if (colon && strchr(colon + 1, ':'))
		return -EINVAL;
	/*
	 * set_event's: a star is a whole side of the colon or nothing, no globbing.  trace-cmd's
	 * -e (USERTP__SPEC_GLOB): shell globs on either side ("sys:io_*", "sched:sched_*").
	 */
	for (const char *p = spec; *p; p++) {
		if (isspace((unsigned char)*p))
			return -EINVAL;
		if (*p != '*' || (flags & USERTP__SPEC_GLOB))
			continue;
		if (!colon || !((p == spec && p + 1 == colon) || (p == colon + 1 && !p[1])))
			return -EINVAL;
	}
	return 0;
}

static bool side_matches(const char *pattern, size_t len, const char *value)
{
	char glob[SPEC_MAX + 1];

	if (!len || (len == 1 && pattern[0] == '*'))
		return true;
	/* Only specs checked with USERTP__SPEC_GLOB have these (no event name does). */
	if (len < sizeof(glob) && (memchr(pattern, '*', len) || memchr(pattern, '?', len) ||
				   memchr(pattern, '[', len))) {
		memcpy(glob, pattern, len);
		glob[len] = 0;
		return !fnmatch(glob, value, 0);
	}
	return strlen(value) == len && !memcmp(pattern, value, len);
}

bool usertp__spec_match(const char *spec, const char *system, const char *name)
{
	const char *colon = strchr(spec, ':');

	if (!colon)
		return !strcmp(spec, system) || !strcmp(spec, name);
	return side_matches(spec, (size_t)(colon - spec), system) &&
	       side_matches(colon + 1, strlen(colon + 1), name);
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
