/* SPDX-License-Identifier: MIT */
/*
 * test-rb-consumer.c - producer/consumer mode (no overwrite) on one CPU.
 *
 * Phase 1 writes many more events than a small buffer holds: the snapshot must give exactly
 * the oldest events, 0, 1, ..., entries - 1, intact, every other one counted as dropped and
 * none as overrun.  Phase 2 plays the consumer: it frees the oldest page (read_page = 1) and
 * writes more: the events that follow go to the freed slot, whose page says how many events
 * were lost just before it (all of phase 1's drops), and the counts still add up.
 *
 *	test-rb-consumer fixed	every event has the same size
 *	test-rb-consumer mixed	sizes vary, so a small event fits where a bigger one was
 *				dropped: it must still be dropped (the kernel pads the page
 *				out at the first event that does not fit), or the recorded
 *				events are not the oldest range and the loss is reported at
 *				the wrong place
 */
#define _GNU_SOURCE
#include "rb-test.h"

#define TAG 0x7063u

static bool mixed;
static uint64_t rnd = 42;

static uint32_t next_size(void)
{
	return mixed ? PAYLOAD_HEAD + (uint32_t)(rbt_rand(&rnd) % 256) : 100;
}

/* Check the entries of pages [from, to) hold seqs first, first + 1, ...; return the count. */
static size_t check_range(const struct rbt_walk *w, size_t *k, unsigned int to, uint64_t first)
{
	size_t n = 0;
	unsigned int bad = 0;

	for (; *k < w->n && w->e[*k].page < to; (*k)++, n++) {
		uint32_t tag;
		uint64_t seq;

		if (!payload_check(w->e[*k].data, w->e[*k].size, &tag, &seq) || tag != TAG ||
		    seq != first + n) {
			if (bad++ < 5)
				fprintf(stderr, "entry %zu (page %u): %s seq %llu, expected %llu\n", *k,
					w->e[*k].page, tag == TAG ? "" : "bad", (unsigned long long)seq,
					(unsigned long long)(first + n));
		}
		if (*k && w->e[*k].ts < w->e[*k - 1].ts)
			bad++;
	}
	CHECK_INT(bad, ==, 0);
	return n;
}

int main(int argc, char **argv)
{
	const uint64_t n1 = 20000, n2 = 20000;
	struct usertp__rb_snapshot snap;
	const struct usertp__rb_cpu_snapshot *c;
	uint64_t seq, recorded1 = 0, page0_events = 0, tail1;
	struct usertp__rb rb;
	struct rbt_walk w;
	size_t k = 0, n;
	unsigned int i;

	if (argc != 2 || (strcmp(argv[1], "fixed") && strcmp(argv[1], "mixed"))) {
		fprintf(stderr, "usage: %s fixed|mixed\n", argv[0]);
		return 2;
	}
	mixed = !strcmp(argv[1], "mixed");
	CHECK_INT(usertp__rb_create(&rb, 1, 8, false), ==, 0);
	CHECK_INT(rb.nr_pages, ==, 3);

	/* Phase 1: fill up, and go on writing. */
	for (seq = 0; seq < n1; seq++)
		recorded1 += rbt_write(&rb, 0, next_size(), TAG, seq, NULL, NULL);
	CHECK_INT(usertp__rb_snapshot(rb.region, rb.size, &snap), ==, 0);
	c = &snap.cpus[0];
	rbt_walk_cpu(c, &w);
	CHECK_INT(w.einval + w.bad_ret + w.out_of_page, ==, 0);
	CHECK_INT(c->nr_pages, ==, rb.nr_pages);
	CHECK_INT(w.n, ==, c->entries);
	CHECK_INT(c->entries, ==, recorded1);
	CHECK_INT(c->written, ==, recorded1);
	CHECK_INT(c->overrun, ==, 0);
	CHECK_INT(c->dropped, ==, n1 - c->entries);
	CHECK_INT(c->entries + c->dropped, ==, n1);
	/* The oldest events: 0, 1, ..., entries - 1. */
	n = check_range(&w, &k, c->nr_pages, 0);
	CHECK_INT(n, ==, c->entries);
	for (i = 0; i < c->nr_pages; i++) {
		CHECK_INT(c->pages[i].page_no, ==, i);
		CHECK_INT(c->pages[i].lost_before, ==, 0);
	}
	for (k = 0; k < w.n && w.e[k].page == 0; k++)
		page0_events++;
	tail1 = c->entries;
	free(w.e);
	usertp__rb_snapshot_free(&snap);

	/* Phase 2: the consumer frees page 0; the writer goes on. */
	__atomic_store_n(&rb.cpus[0]->read_page, 1, __ATOMIC_RELEASE);
	for (seq = n1; seq < n1 + n2; seq++)
		rbt_write(&rb, 0, next_size(), TAG, seq, NULL, NULL);
	CHECK_INT(usertp__rb_snapshot(rb.region, rb.size, &snap), ==, 0);
	c = &snap.cpus[0];
	rbt_walk_cpu(c, &w);
	CHECK_INT(w.einval + w.bad_ret + w.out_of_page, ==, 0);
	/* Pages 1 .. nr_pages: the old ones but page 0, and one new page in slot 0. */
	CHECK_INT(c->nr_pages, ==, rb.nr_pages);
	for (i = 0; i < c->nr_pages; i++)
		CHECK_INT(c->pages[i].page_no, ==, i + 1);
	CHECK_INT(w.n, ==, c->entries);
	k = 0;
	n = check_range(&w, &k, rb.nr_pages - 1, page0_events);
	CHECK_INT(n, ==, tail1 - page0_events);
	/* Everything phase 1 dropped was lost just before the new page. */
	CHECK_INT(c->pages[rb.nr_pages - 1].lost_before, ==, n1 - tail1);
	n = check_range(&w, &k, rb.nr_pages, n1);
	CHECK(n > 0);
	CHECK_INT(k, ==, w.n);
	/* Consumed events count as overrun; all others were dropped. */
	CHECK_INT(c->written, ==, c->entries + page0_events);
	CHECK_INT(c->overrun, ==, page0_events);
	CHECK_INT(c->entries + c->overrun + c->dropped, ==, n1 + n2);
	free(w.e);
	usertp__rb_snapshot_free(&snap);
	usertp__rb_destroy(&rb);
	return harness_done();
}
