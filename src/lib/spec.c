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
#include <string.h>

#include "internal.h"

#define SPEC_MAX 127 /* the kernel's limit for one set_event token */

int usertp__spec_check(const char *spec)
{
	size_t len = strlen(spec);
	const char *colon = strchr(spec, ':');

	if (!len || len > SPEC_MAX || !strcmp(spec, "*") || spec[0] == '!')
		return -EINVAL;
	if (colon && strchr(colon + 1, ':'))
		return -EINVAL;
	/* A star is a whole side of the colon or nothing: there is no globbing. */
	for (const char *p = spec; *p; p++) {
		if (isspace((unsigned char)*p))
			return -EINVAL;
		if (*p != '*')
			continue;
		if (!colon || !((p == spec && p + 1 == colon) || (p == colon + 1 && !p[1])))
			return -EINVAL;
	}
	return 0;
}

static bool side_matches(const char *pattern, size_t len, const char *value)
{
	if (!len || (len == 1 && pattern[0] == '*'))
		return true;
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

