/* SPDX-License-Identifier: MIT */
/* grow.h - an array grown (doubling) to hold at least @need elements: the one helper of it. */
#ifndef USERTP_GROW_H
#define USERTP_GROW_H

#include <stdbool.h>
#include <stdlib.h>

/* *@array of *@cap elements of @elem bytes, made to hold @need.  Return: false (it is left as
 * it was) when memory runs out. */
static inline bool usertp__grow(void **array, unsigned int *cap, unsigned int need, size_t elem)
{
	void *bigger;
	unsigned int n;

	if (need <= *cap)
		return true;
	n = *cap ? *cap * 2 : 16;
	while (n < need)
		n *= 2;
	bigger = realloc(*array, (size_t)n * elem);
	if (!bigger)
		return false;
	*array = bigger;
	*cap = n;
	return true;
}

#endif
