/* SPDX-License-Identifier: MIT */
/* hash.h - the one hash of names and texts (event identities, printk keys): FNV-1a, 64 bits. */
#ifndef USERTP_HASH_H
#define USERTP_HASH_H

#include <stddef.h>
#include <stdint.h>

/* FNV-1a over @len bytes of @s, from @h (0xcbf29ce484222325 to start). */
static inline uint64_t usertp__fnv1a(uint64_t h, const void *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	while (len--)
		h = (h ^ *p++) * 0x100000001b3ull;
	return h;
}
#define USERTP_FNV1A_START 0xcbf29ce484222325ull

#endif /* USERTP_HASH_H */
