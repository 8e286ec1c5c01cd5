/* SPDX-License-Identifier: MIT */
/*
 * test-rb-overwrite.c - overwrite mode on one CPU: write many more events than a small buffer
 * holds; the snapshot must give exactly the newest events, a contiguous range ending at the
 * last one written, each payload intact and its timestamp within the clock readings taken
 * around its write, and count the others as overrun (never as dropped).
 */
#define _GNU_SOURCE
#include "rb-test.h"

#define TAG 0x6f76u

static void run(uint64_t n, uint64_t seed)
{
	uint64_t *before = calloc(n + 1, 8), *after = calloc(n + 1, 8), seq, prev_ts = 0;
	uint64_t rnd = seed, first = 0, used = 0;
	struct usertp__rb_snapshot snap;
	const struct usertp__rb_cpu_snapshot *c;
	struct usertp__rb rb;
	struct rbt_walk w;
	unsigned int bad = 0, dropped = 0, i;
	size_t k;

	printf("n=%llu\n", (unsigned long long)n);
	if (!before || !after)
		exit(2);
	CHECK_INT(usertp__rb_create(&rb, 1, 8, true), ==, 0);
	/* 8 KiB in whole pages of 4080 data bytes, as the kernel rounds buffer_size_kb. */
	CHECK_INT(rb.nr_pages, ==, 3);
	for (seq = 0; seq < n; seq++) {
		/* 24..279 bytes, not all multiples of 8, so pages end with various tails. */
		uint32_t size = PAYLOAD_HEAD + (uint32_t)(rbt_rand(&rnd) % 256);

		if (!rbt_write(&rb, 0, size, TAG, seq, &before[seq], &after[seq]))
			dropped++;
	}
	CHECK_INT(dropped, ==, 0);

	CHECK_INT(usertp__rb_snapshot(rb.region, rb.size, &snap), ==, 0);
	CHECK_INT(snap.nr_cpus, ==, 1);
	c = &snap.cpus[0];
	rbt_walk_cpu(c, &w);
	CHECK_INT(w.einval, ==, 0);
	CHECK_INT(w.bad_ret, ==, 0);
	CHECK_INT(w.out_of_page, ==, 0);
	CHECK_INT(c->entries, ==, w.n);
	CHECK_INT(c->written, ==, n);
	CHECK_INT(c->entries + c->overrun, ==, n);
	CHECK_INT(c->dropped, ==, 0);
	if (n)
		CHECK(w.n > 0);
	if (w.n)
		first = n - w.n;
	for (k = 0; k < w.n; k++) {
		uint32_t tag;

		if (!payload_check(w.e[k].data, w.e[k].size, &tag, &seq) || tag != TAG) {
			bad++;
			continue;
		}
		/* Exactly the newest events: first, first + 1, ..., n - 1. */
		if (seq != first + k) {
			if (bad++ < 5)
				fprintf(stderr, "entry %zu: seq %llu, expected %llu\n", k,
					(unsigned long long)seq, (unsigned long long)(first + k));
			continue;
		}
		if (w.e[k].ts < prev_ts || w.e[k].ts < before[seq] || w.e[k].ts > after[seq]) {
			if (bad++ < 5)
				fprintf(stderr, "seq %llu: ts %llu, previous %llu, written in [%llu, %llu]\n",
					(unsigned long long)seq, (unsigned long long)w.e[k].ts,
					(unsigned long long)prev_ts, (unsigned long long)before[seq],
					(unsigned long long)after[seq]);
		}
		prev_ts = w.e[k].ts;
	}
	CHECK_INT(bad, ==, 0);

	/* Pages: consecutive, nothing lost before any of them, and all of the buffer in use. */
	for (i = 0; i < c->nr_pages; i++) {
		if (i)
			CHECK_INT(c->pages[i].page_no, ==, c->pages[i - 1].page_no + 1);
		CHECK_INT(c->pages[i].lost_before, ==, 0);
		used += c->pages[i].used;
	}
	if (n > 1000) {
		/* Wrapped: every page slot holds a page, and all but the head page are full up
		 * to less than one event (8 + 280 bytes). */
		CHECK_INT(c->nr_pages, ==, rb.nr_pages);
		CHECK_INT(used, >=, (uint64_t)(rb.nr_pages - 1) * (USERTP__KPAGE_DATA - 288));
	}

	free(w.e);
	usertp__rb_snapshot_free(&snap);
	usertp__rb_destroy(&rb);
	free(before);
	free(after);
}

int main(void)
{
	static const uint64_t sizes[] = { 0, 1, 2, 40, 90, 150, 1000, 100000 };
	unsigned int i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		run(sizes[i], 0x1234 + i);
	return harness_done();
}
