/* SPDX-License-Identifier: MIT */
/*
 * harness.h - the one assertion header of the C tests: checks that print both sides (or the
 * message given) and go on, and a final "N passed, N failed" line (harness_done(), whose
 * result is the exit status: non-zero on failure).
 * A test that cannot run here (missing tool, no privilege) calls SKIP(), exit status 77,
 * which ctest reports as skipped.
 */
#ifndef USERTP_TEST_HARNESS_H
#define USERTP_TEST_HARNESS_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int harness_passed, harness_failed;

/* (A failed check's line: where, what, and the message given, if any.) */
static void harness_fail(const char *file, int line, const char *cond, const char *fmt, ...)
	__attribute__((format(printf, 4, 5), unused));
static void harness_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
	va_list ap;

	harness_failed++;
	fprintf(stderr, "%s:%d: CHECK(%s) failed", file, line, cond);
	if (fmt[1]) { /* (" " alone: no message) */
		fputc(':', stderr);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
	}
	fputc('\n', stderr);
}

/* CHECK(cond) or CHECK(cond, fmt, ...): a message says what was found instead. */
#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (cond)                                                                          \
			harness_passed++;                                                          \
		else                                                                               \
			harness_fail(__FILE__, __LINE__, #cond, " " __VA_ARGS__);                  \
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

/* A fault the test found itself, said in its own words (printf-style). */
#define FAIL(...) harness_failf(__FILE__, __LINE__, __VA_ARGS__)
static void harness_failf(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), unused));
static void harness_failf(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	harness_failed++;
	fprintf(stderr, "%s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

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
