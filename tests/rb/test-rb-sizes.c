/* SPDX-License-Identifier: MIT */
/*
 * test-rb-sizes.c - payloads of every size from 1 to USERTP_RB_MAX_PAYLOAD come back with their
 * size (rounded up to 8) and content; larger ones are refused and counted as dropped.  Every
 * timestamp lies between clock readings taken around its write, including after gaps of more
 * than 2^27 ns (which need a time-extend entry) within a page and across pages.
 */
#define _GNU_SOURCE
#include <time.h>

#include "rb-test.h"

static void fill(unsigned char *p, uint32_t size, uint64_t key)
{
	rbt_filler(p, size, rbt_mix(key));
}

static bool same(const unsigned char *p, uint32_t size, uint64_t key)
{
	unsigned char expect[USERTP__KPAGE_SIZE];

	fill(expect, size, key);
	return !memcmp(p, expect, size);
}

struct written {
	uint32_t size;
	uint64_t key, before, after;
};

static bool write_one(struct usertp__rb *rb, struct written *w, uint32_t size, uint64_t key)
{
	unsigned char *p;

	w->size = size;
	w->key = key;
	w->before = usertp__rb_clock();
	p = usertp__rb_reserve(rb, 0, size);
	if (!p)
		return false;
	CHECK_INT((uintptr_t)p % 4, ==, 0);
	fill(p, size, key);
	usertp__rb_commit(rb, p);
	w->after = usertp__rb_clock();
	return true;
}

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Read everything back and compare with @w[0 .. n). */
static void check_all(const struct usertp__rb *rb, const struct written *w, size_t n,
		      uint64_t dropped)
{
	struct usertp__rb_snapshot snap;
	const struct usertp__rb_cpu_snapshot *c;
	struct rbt_walk walk;
	unsigned int bad = 0;
	size_t k;

	CHECK_INT(usertp__rb_snapshot(rb->region, rb->size, &snap), ==, 0);
	c = &snap.cpus[0];
	rbt_walk_cpu(c, &walk);
	CHECK_INT(walk.einval + walk.bad_ret + walk.out_of_page, ==, 0);
	CHECK_INT(walk.n, ==, n);
	CHECK_INT(c->entries, ==, n);
	CHECK_INT(c->written, ==, n);
	CHECK_INT(c->overrun, ==, 0);
	CHECK_INT(c->dropped, ==, dropped);
	for (k = 0; k < walk.n && k < n; k++) {
		const struct rbt_entry *e = &walk.e[k];

		if (e->size != ((w[k].size + 3) & ~3u) || !same(e->data, w[k].size, w[k].key) ||
		    e->ts < w[k].before || e->ts > w[k].after || (k && e->ts < walk.e[k - 1].ts)) {
			if (bad++ < 5)
				fprintf(stderr,
					"event %zu: size %u (wrote %u), ts %llu (written in [%llu, %llu])\n",
					k, e->size, w[k].size, (unsigned long long)e->ts,
					(unsigned long long)w[k].before, (unsigned long long)w[k].after);
		}
	}
	CHECK_INT(bad, ==, 0);
	free(walk.e);
	usertp__rb_snapshot_free(&snap);
}

int main(void)
{
	static const uint32_t too_big[] = { USERTP_RB_MAX_PAYLOAD + 1, USERTP_RB_MAX_PAYLOAD + 8,
					    USERTP__KPAGE_DATA, USERTP__KPAGE_SIZE, 1u << 20,
					    1u << 31 };
	struct written *w = calloc(USERTP_RB_MAX_PAYLOAD + 64, sizeof(*w));
	struct usertp__rb rb;
	size_t n = 0;
	uint32_t size;
	unsigned int i, dropped = 0;

	if (!w)
		return 2;
	/* Room for all of them (about 2600 pages) without overwriting. */
	CHECK_INT(usertp__rb_create(&rb, 1, 16384, false), ==, 0);
	for (size = 1; size <= USERTP_RB_MAX_PAYLOAD; size++) {
		if (!write_one(&rb, &w[n], size, size))
			dropped++;
		n++;
	}
	CHECK_INT(dropped, ==, 0);
	for (i = 0; i < sizeof(too_big) / sizeof(too_big[0]); i++)
		CHECK(!usertp__rb_reserve(&rb, 0, too_big[i]));
	check_all(&rb, w, n, sizeof(too_big) / sizeof(too_big[0]));
	usertp__rb_destroy(&rb);

	/*
	 * Gaps of 150 ms (> 2^27 ns): between small events on one page (a time extend), and
	 * before an event that opens a page (the page's own timestamp).
	 */
	CHECK_INT(usertp__rb_create(&rb, 1, 64, false), ==, 0);
	n = 0;
	CHECK(write_one(&rb, &w[n++], 16, 1));
	pause_ms(150);
	CHECK(write_one(&rb, &w[n++], 16, 2));
	CHECK(write_one(&rb, &w[n++], 16, 3));
	pause_ms(150);
	CHECK(write_one(&rb, &w[n++], 40, 4));
	CHECK(write_one(&rb, &w[n++], 3000, 5)); /* still on page 0 */
	pause_ms(150);
	CHECK(write_one(&rb, &w[n++], 3000, 6)); /* opens page 1 */
	CHECK(write_one(&rb, &w[n++], 8, 7));
	pause_ms(150);
	CHECK(write_one(&rb, &w[n++], 8, 8));
	CHECK_INT(w[1].before - w[0].after, >=, 1ull << USERTP__KPAGE_DELTA_BITS);
	check_all(&rb, w, n, 0);
	usertp__rb_destroy(&rb);
	free(w);
	return harness_done();
}
