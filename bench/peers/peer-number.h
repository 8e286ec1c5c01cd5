/* SPDX-License-Identifier: MIT */
/* peer-number.h - a number of bench/peers' command lines, range-checked (one includer each). */
#ifndef USERTP_PEER_NUMBER_H
#define USERTP_PEER_NUMBER_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* @text as a number from @lo to @hi, or @prog says what is wrong and ends with status 2. */
static long peer_number(const char *prog, const char *text, long lo, long hi, const char *what)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(text, &end, 10);
	if (errno || end == text || *end || n < lo || n > hi) {
		fprintf(stderr, "%s: %s: '%s' is not a number from %ld to %ld\n", prog, what, text,
			lo, hi);
		exit(2);
	}
	return n;
}

#endif
