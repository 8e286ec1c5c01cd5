/* SPDX-License-Identifier: MIT */
/*
 * rb-test.h - what the ring-buffer tests share: self-checking payloads, and a walk of a
 * snapshot that collects every entry of one CPU in buffer order.
 *
 * A payload of at least PAYLOAD_HEAD bytes is
 *	u64 seq | u32 tag | u32 size | u64 checksum | filler
 * where the filler is a pseudo-random stream seeded by (tag, seq) and the checksum covers
 * seq, tag, size and the filler, so a torn, stale or shifted payload does not check.
 */
#ifndef USERTP_RB_TEST_H
#define USERTP_RB_TEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring-buffer.h"

#include "../harness.h"

#define PAYLOAD_HEAD 24u

/*
 * The writer under test: USERTP_RSEQ=0 the compare-and-exchange one, USERTP_RSEQ=1 the rseq
 * one (ring-buffer.c), which writes on the CPU the thread runs on: these tests write into
 * CPU 0's buffer, so the process is pinned to CPU 0 (a test that pins its threads itself
 * defines RBT_NO_PIN).  Skipped where rseq mode cannot be had (ThreadSanitizer, no rseq).
 */
#include <sched.h>

static void __attribute__((constructor)) rbt_writer_mode(void)
{
	const char *env = getenv("USERTP_RSEQ");
	struct usertp__rb rb;
	bool rseq;

	if (!env || strcmp(env, "1"))
		return;
#ifndef RBT_NO_PIN
	{
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(0, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			printf("cannot run on CPU 0\n");
			exit(77);
		}
	}
#endif
	if (usertp__rb_create(&rb, 1, 4, true))
		exit(2);
	rseq = rb.rseq;
	usertp__rb_destroy(&rb);
	if (!rseq) {
		printf("no rseq writer in this build or process\n");
		exit(77);
	}
}

static inline uint64_t rbt_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* A small deterministic generator (tests use fixed seeds). */
static inline uint64_t rbt_rand(uint64_t *state)
{
	*state += 0x9e3779b97f4a7c15ull;
	return rbt_mix(*state);
}

static inline uint64_t rbt_fnv(uint64_t h, const unsigned char *p, size_t n)
{
	while (n--)
		h = (h ^ *p++) * 0x100000001b3ull;
	return h;
}

static inline void rbt_filler(unsigned char *p, size_t n, uint64_t seed)
{
	size_t i;

	for (i = 0; i < n; i += 8) {
		uint64_t v = rbt_mix(seed + i);

		memcpy(p + i, &v, n - i < 8 ? n - i : 8);
	}
}

static inline uint64_t rbt_seed(uint32_t tag, uint64_t seq)
{
	return rbt_mix(((uint64_t)tag << 48) ^ seq);
}

/* Fill @size (>= PAYLOAD_HEAD) bytes at @p. */
static inline void payload_fill(unsigned char *p, uint32_t size, uint32_t tag, uint64_t seq)
{
	uint64_t sum;

	memcpy(p, &seq, 8);
	memcpy(p + 8, &tag, 4);
	memcpy(p + 12, &size, 4);
	rbt_filler(p + PAYLOAD_HEAD, size - PAYLOAD_HEAD, rbt_seed(tag, seq));
	sum = rbt_fnv(0xcbf29ce484222325ull, p, 16);
	sum = rbt_fnv(sum, p + PAYLOAD_HEAD, size - PAYLOAD_HEAD);
	memcpy(p + 16, &sum, 8);
}

/*
 * Check a payload read back from an entry of @entry_size bytes (the written size rounded up
 * to 4, as the kernel's records are).  Return: true with *tag and *seq set when it is intact.
 */
static inline bool payload_check(const unsigned char *p, uint32_t entry_size, uint32_t *tag,
				 uint64_t *seq)
{
	unsigned char expect[USERTP__KPAGE_SIZE];
	uint32_t size;
	uint64_t sum;

	if (entry_size < PAYLOAD_HEAD || entry_size > USERTP_RB_MAX_PAYLOAD)
		return false;
	memcpy(seq, p, 8);
	memcpy(tag, p + 8, 4);
	memcpy(&size, p + 12, 4);
	memcpy(&sum, p + 16, 8);
	if (size < PAYLOAD_HEAD || ((size + 3) & ~3u) != entry_size)
		return false;
	if (rbt_fnv(rbt_fnv(0xcbf29ce484222325ull, p, 16), p + PAYLOAD_HEAD, size - PAYLOAD_HEAD) !=
	    sum)
		return false;
	rbt_filler(expect, size - PAYLOAD_HEAD, rbt_seed(*tag, *seq));
	return !memcmp(expect, p + PAYLOAD_HEAD, size - PAYLOAD_HEAD);
}

/*
 * The bytes an event of @size bytes takes on @rb's pages, said here apart from the writer:
 * the kernel's layout, the payload in whole words after a header word (rseq mode, up to 112
 * bytes of payload) or a header word and a length word (CAS mode always).
 */
static inline uint32_t rbt_entry_bytes(const struct usertp__rb *rb, uint32_t size)
{
	uint32_t len = (size + 3) & ~3u;

	return (rb->rseq && len <= 112 ? 4 : 8) + len;
}

/*
 * Write one self-checking event of @size bytes on @cpu; *before and *after (when not NULL)
 * get usertp__rb_clock() readings around it.  Return: false when it was dropped.
 */
static inline bool rbt_write(struct usertp__rb *rb, unsigned int cpu, uint32_t size, uint32_t tag,
			     uint64_t seq, uint64_t *before, uint64_t *after)
{
	unsigned char *p;

	if (before)
		*before = usertp__rb_clock();
	p = usertp__rb_reserve(rb, cpu, size);
	if (!p)
		return false;
	payload_fill(p, size, tag, seq);
	usertp__rb_commit(rb, p);
	if (after)
		*after = usertp__rb_clock();
	return true;
}

/* One entry of a snapshot, in buffer order. */
struct rbt_entry {
	uint64_t ts;
	const unsigned char *data;
	uint32_t size;
	unsigned int page; /* index in the CPU's pages[] */
};

struct rbt_walk {
	struct rbt_entry *e;
	size_t n, cap;
	unsigned int einval; /* usertp__kpage_iter_next() calls that returned -EINVAL */
	unsigned int einval_page; /* the page of the first one */
	unsigned int bad_ret; /* ... that returned anything but 1, 0, -EINVAL */
	unsigned int out_of_page; /* entries whose data is not inside their page's used bytes */
};

/* Collect the entries of one CPU of a snapshot (the caller frees w->e). */
static inline void rbt_walk_cpu(const struct usertp__rb_cpu_snapshot *c, struct rbt_walk *w)
{
	unsigned int i;

	memset(w, 0, sizeof(*w));
	for (i = 0; i < c->nr_pages; i++) {
		const struct usertp__rb_page_copy *pg = &c->pages[i];
		const unsigned char *lo = pg->data + USERTP__KPAGE_HEADER;
		struct usertp__kpage_iter it;
		struct usertp__kpage_entry e;
		int ret;

		usertp__kpage_iter_init(&it, pg->data, pg->used);
		while ((ret = usertp__kpage_iter_next(&it, &e)) == 1) {
			if (pg->used > USERTP__KPAGE_DATA || e.data < lo ||
			    e.data + e.size > lo + pg->used) {
				w->out_of_page++;
				continue;
			}
			if (w->n == w->cap) {
				w->cap = w->cap ? 2 * w->cap : 1024;
				w->e = realloc(w->e, w->cap * sizeof(*w->e));
				if (!w->e) {
					perror("realloc");
					exit(2);
				}
			}
			w->e[w->n++] = (struct rbt_entry){ e.ts, e.data, e.size, i };
		}
		if (ret == -EINVAL) {
			if (!w->einval++)
				w->einval_page = i;
		}
		else if (ret != 0)
			w->bad_ret++;
	}
}

#endif
