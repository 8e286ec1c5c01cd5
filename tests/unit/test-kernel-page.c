/* SPDX-License-Identifier: MIT */
/*
 * test-kernel-page - the kernel's page codec (src/common/kernel-page.c) on its own: records of
 * every size and gap encoded and walked back (round trip), the commit word sealed with known
 * and unknown losses, and hostile pages walked without reading outside them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel-page.h"
#include "../harness.h"

static uint64_t get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* Fill pages with records of sizes 1..300 and growing gaps; walk each back and compare. */
static void round_trip(void)
{
	static unsigned char page[USERTP__KPAGE_SIZE];
	unsigned char payload[300];
	struct usertp__kpage p;
	uint64_t ts = 1000, want_ts[USERTP__KPAGE_DATA / 8];
	uint32_t want_size[USERTP__KPAGE_DATA / 8], size = 1, pages = 0, records = 0;
	unsigned int n = 0;

	memset(page, 0xaa, sizeof(page)); /* the encoder zeroes what it leaves as padding */
	usertp__kpage_open(&p, page, ts);
	CHECK(get64(page) == ts && p.used == 0, "open: ts %llu used %u",
	      (unsigned long long)get64(page), p.used);
	for (unsigned int i = 0; pages < 40; i++) {
		unsigned char *at;
		/* Small deltas, then some over 2^27 (a time extend), one of 2^40. */
		uint64_t gap = i % 7 == 3 ? (1ull << 27) + i : i % 101 == 50 ? 1ull << 40 : i % 5;

		for (uint32_t b = 0; b < size; b++)
			payload[b] = (unsigned char)(i + b);
		at = usertp__kpage_add(&p, ts + gap, size, USERTP__KPAGE_DATA);
		if (!at) {
			struct usertp__kpage_iter it;
			struct usertp__kpage_entry e;
			unsigned int k = 0;
			int ret;

			CHECK(n > 0, "a record of %u bytes does not fit an empty page", size);
			usertp__kpage_seal(page, p.used, 0);
			CHECK((get64(page + 8) & USERTP__KPAGE_COMMIT_MASK) == p.used, "commit");
			usertp__kpage_iter_init(&it, page, p.used);
			while ((ret = usertp__kpage_iter_next(&it, &e)) == 1 && k < n) {
				/* The short form holds whole words: a size of 4n is exact. */
				CHECK(e.ts == want_ts[k] && e.size == want_size[k],
				      "page %u record %u: ts %llu size %u, want %llu %u", pages, k,
				      (unsigned long long)e.ts, e.size, (unsigned long long)want_ts[k],
				      want_size[k]);
				CHECK(e.data[0] == (unsigned char)(records + k), "record %u's bytes", k);
				k++;
			}
			CHECK(ret == 0 && k == n, "page %u: %u of %u records walked (%d)", pages, k, n, ret);
			{
				static struct usertp__kpage_entry all[USERTP__KPAGE_MAX_RECORDS];
				int got = usertp__kpage_records(page, p.used, all, USERTP__KPAGE_MAX_RECORDS);

				CHECK(got == (int)n && (!n || (all[n - 1].ts == want_ts[n - 1] &&
							       all[n - 1].size == want_size[n - 1])),
				      "page %u: usertp__kpage_records() gave %d of %u", pages, got, n);
			}
			records += n;
			pages++;
			n = 0;
			usertp__kpage_open(&p, page, ts + gap);
			at = usertp__kpage_add(&p, ts + gap, size, USERTP__KPAGE_DATA);
		}
		CHECK(at != NULL, "record %u (%u bytes) on an empty page", i, size);
		if (!at)
			return;
		memcpy(at, payload, size);
		payload[0] = (unsigned char)i;
		at[0] = (unsigned char)(records + n);
		ts += gap;
		want_ts[n] = ts;
		want_size[n] = size;
		n++;
		size = size % 300 + 1;
	}
	/* A gap longer than a time extend holds does not fit: a page of its own. */
	usertp__kpage_open(&p, page, 5);
	CHECK(usertp__kpage_add(&p, 5 + (1ull << 59), 8, USERTP__KPAGE_DATA) == NULL,
	      "a gap of 2^59 was taken");
	CHECK(p.used == 0, "a refused record left %u bytes", p.used);
	/* A record as long as a page holds, and one byte more. */
	CHECK(usertp__kpage_add(&p, 5, USERTP__KPAGE_DATA - 8, USERTP__KPAGE_DATA) != NULL,
	      "the longest record");
	usertp__kpage_open(&p, page, 5);
	CHECK(usertp__kpage_add(&p, 5, USERTP__KPAGE_DATA - 7, USERTP__KPAGE_DATA) == NULL,
	      "a record longer than a page");
}

/* The commit word: the size, the flags, a known count where it fits. */
static void seal(void)
{
	static unsigned char page[USERTP__KPAGE_SIZE];
	uint64_t commit;

	usertp__kpage_seal(page, 100, 7);
	commit = get64(page + 8);
	CHECK((commit & USERTP__KPAGE_COMMIT_MASK) == 100 &&
	      (commit & USERTP__KPAGE_LOST_EVENTS) && (commit & USERTP__KPAGE_LOST_COUNT) &&
	      get64(page + USERTP__KPAGE_HEADER + 100) == 7, "a known count: %#llx",
	      (unsigned long long)commit);
	usertp__kpage_seal(page, 100, USERTP__KPAGE_LOST_UNKNOWN);
	commit = get64(page + 8);
	CHECK((commit & USERTP__KPAGE_LOST_EVENTS) && !(commit & USERTP__KPAGE_LOST_COUNT) &&
	      get64(page + USERTP__KPAGE_HEADER + 100) == 0, "an unknown count: %#llx",
	      (unsigned long long)commit);
	usertp__kpage_seal(page, USERTP__KPAGE_DATA - 4, 3);
	commit = get64(page + 8);
	CHECK((commit & USERTP__KPAGE_LOST_EVENTS) && !(commit & USERTP__KPAGE_LOST_COUNT),
	      "a count with no room after the entries: %#llx", (unsigned long long)commit);
	usertp__kpage_seal(page, 200, 0);
	CHECK(get64(page + 8) == 200, "no loss: %#llx", (unsigned long long)get64(page + 8));
}

/*
 * Hostile pages: random words, and every type with lengths at and past the end.  The walker
 * must end (0 or -EINVAL) with every record inside the entries it was given (ASan checks the
 * reads: the page is allocated at its exact size).
 */
static void hostile(void)
{
	unsigned char *page = malloc(USERTP__KPAGE_SIZE);
	uint32_t seed = 12345;

	if (!page)
		return;
	for (unsigned int round = 0; round < 20000; round++) {
		struct usertp__kpage_iter it;
		struct usertp__kpage_entry e;
		uint32_t used = round < 100 ? USERTP__KPAGE_DATA - round : (seed >> 8) % USERTP__KPAGE_SIZE;
		unsigned int steps = 0;
		int ret;

		for (unsigned int i = 0; i < USERTP__KPAGE_SIZE; i++) {
			seed = seed * 1103515245u + 12345u;
			page[i] = (unsigned char)(seed >> 16);
		}
		if (round % 3 == 0) /* plausible headers: small types and lengths */
			for (unsigned int i = USERTP__KPAGE_HEADER; i + 8 <= USERTP__KPAGE_SIZE; i += 8) {
				page[i] = (unsigned char)(page[i] % 32);
				memset(page + i + 5, 0, 3);
			}
		usertp__kpage_iter_init(&it, page, used);
		while ((ret = usertp__kpage_iter_next(&it, &e)) == 1 && steps++ < USERTP__KPAGE_SIZE)
			CHECK(e.data >= page + USERTP__KPAGE_HEADER &&
			      e.data + e.size <= page + USERTP__KPAGE_HEADER +
						 (used < USERTP__KPAGE_DATA ? used : USERTP__KPAGE_DATA),
			      "round %u: a record outside the entries", round);
		CHECK(ret == 0 || ret == -EINVAL, "round %u: %d", round, ret);
		{
			static struct usertp__kpage_entry all[USERTP__KPAGE_MAX_RECORDS];
			int got = usertp__kpage_records(page, used, all, USERTP__KPAGE_MAX_RECORDS);

			/* All at once: the same records, or the same refusal. */
			CHECK(ret < 0 ? got == -EINVAL : got == (int)steps, "round %u: %d, walked %u (%d)",
			      round, got, steps, ret);
		}
	}
	free(page);
}

int main(void)
{
	round_trip();
	seal();
	hostile();
	return harness_done();
}
