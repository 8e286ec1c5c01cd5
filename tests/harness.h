/* SPDX-License-Identifier: MIT */
/*
 * harness.h - the small test harness every test binary uses: checks that print both sides
 * and go on, and a final "N passed, N failed" line; the exit status is non-zero on failure.
 * A test that cannot run here (missing tool, no privilege) calls SKIP(), exit status 77,
 * which ctest reports as skipped.
 */
#ifndef USERTP_TEST_HARNESS_H
#define USERTP_TEST_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int harness_passed, harness_failed;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (cond) {                                                                        \
			harness_passed++;                                                          \
		} else {                                                                           \
			harness_failed++;                                                          \
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);  \
		}                                                                                  \
	} while (0)

#define CHECK_INT(a, op, b)                                                                        \
	do {                                                                                       \
		long long va_ = (long long)(a), vb_ = (long long)(b);                              \
		if (va_ op vb_) {                                                                  \
			harness_passed++;                                                          \
		} else {                                                                           \
			harness_failed++;                                                          \
			fprintf(stderr, "%s:%d: %s %s %s failed: %lld vs %lld\n", __FILE__,        \
				__LINE__, #a, #op, #b, va_, vb_);                                  \
		}                                                                                  \
	} while (0)

#define CHECK_STR(a, b)                                                                            \
	do {                                                                                       \
		const char *sa_ = (a), *sb_ = (b);                                                 \
		if (sa_ && sb_ && !strcmp(sa_, sb_)) {                                             \
			harness_passed++;                                                          \
		} else {                                                                           \
			harness_failed++;                                                          \
			fprintf(stderr, "%s:%d: %s == %s failed:\n  \"%s\"\n  \"%s\"\n", __FILE__, \
				__LINE__, #a, #b, sa_ ? sa_ : "(null)", sb_ ? sb_ : "(null)");     \
		}                                                                                  \
	} while (0)

#define SKIP(why)                                                                                  \
	do {                                                                                       \
		printf("SKIP: %s\n", why);                                                         \
		exit(77);                                                                          \
	} while (0)

static inline int harness_done(void)
{
	printf("%d passed, %d failed\n", harness_passed, harness_failed);
	return harness_failed ? 1 : 0;
}

#endif
