/* SPDX-License-Identifier: MIT */
/* number.h - reading numbers that come from outside (number.c). */
#ifndef USERTP_NUMBER_H
#define USERTP_NUMBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * @text, all of it, as a decimal number from @min to @max into *out.
 * Return: 0, -EINVAL when it is not a number (empty, a sign, a space, other characters),
 * -ERANGE when it is one outside [@min, @max] (however many digits it has).
 */
int usertp__parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out);
/* The same for the digits at the start of @text; *end gets where they stop. */
int usertp__parse_u64_prefix(const char *text, const char **end, uint64_t min, uint64_t max,
			     uint64_t *out);
/*
 * The kernel's kstrtoull() of the @len bytes at @text, in @base (0: "0x" hex, a leading 0
 * octal, else decimal): a '+' may lead and one '\n' follow, nothing else.  What tracefs's
 * number files, its pid lists and the filters' values take.
 * Return: 0, -EINVAL (not such a number), -ERANGE (above 2^64 - 1).
 */
int usertp__kstrtoull(const char *text, size_t len, unsigned int base, uint64_t *out);

#endif
