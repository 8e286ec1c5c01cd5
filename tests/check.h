/* SPDX-License-Identifier: MIT */
/* check.h - CHECK(cond, fmt, ...) for the tests that say what they found: counted in failures. */
#ifndef USERTP_TEST_CHECK_H
#define USERTP_TEST_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "FAIL line %d: ", __LINE__);                               \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

#endif
