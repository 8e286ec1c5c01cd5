/* SPDX-License-Identifier: MIT */
/*
 * number.c - the one way numbers from outside are read (environment variables, command-line
 * options, control messages): decimal digits only, no sign, no spaces, no overflow, and a
 * range.  Compiled into libusertp and the usertp command.
 */
#include <errno.h>

#include "number.h"

int usertp__parse_u64_prefix(const char *text, const char **end, uint64_t min, uint64_t max,
			     uint64_t *out)
{
	const char *p = text;
	uint64_t v = 0;
	bool range = false;

	*end = text;
	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned int d = (unsigned int)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			range = true; /* the digits are read on: the number ends where they do */
		else
			v = v * 10 + d;
	}
	*end = p;
	if (range || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int usertp__parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *end;
	int ret = usertp__parse_u64_prefix(text, &end, min, max, out);

	if (*end)
		return -EINVAL;
	return ret;
}
