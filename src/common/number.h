/* SPDX-License-Identifier: MIT */
/* number.h - reading numbers that come from outside (number.c). */
#ifndef USERTP_NUMBER_H
#define USERTP_NUMBER_H

#include <stdbool.h>
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

#endif
