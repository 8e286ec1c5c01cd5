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

int usertp__kstrtoull(const char *text, size_t len, unsigned int base, uint64_t *out)
{
	size_t i = 0, end = len;
	uint64_t v = 0;

	if (end && text[end - 1] == '\n')
		end--;
	if (i < end && text[i] == '+')
		i++;
	if (base == 0) {
		base = 10;
		if (i + 1 < end && text[i] == '0' && (text[i + 1] == 'x' || text[i + 1] == 'X')) {
			base = 16;
			i += 2;
		} else if (i + 1 < end && text[i] == '0') {
			base = 8;
			i++;
		}
	}
	if (i == end)
		return -EINVAL;
	for (; i < end; i++) {
		char c = text[i];
		unsigned int d = c >= '0' && c <= '9'   ? (unsigned int)(c - '0')
				 : c >= 'a' && c <= 'f' ? (unsigned int)(c - 'a' + 10)
				 : c >= 'A' && c <= 'F' ? (unsigned int)(c - 'A' + 10)
							: 16;

		if (d >= base)
			return -EINVAL;
		if (v > (UINT64_MAX - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	*out = v;
	return 0;
}
