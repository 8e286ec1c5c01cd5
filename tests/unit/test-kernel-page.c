/* SPDX-License-Identifier: MIT */
/*
 * test-kernel-page - the kernel's page codec (src/common/kernel-page.c) on its own: records of
 * every size and gap encoded and walked back (round trip), the commit word sealed with known
 * and unknown losses, hostile pages walked without reading outside them, and pages of other
 * hosts' layouts (4-byte longs, big-endian) walked as libtraceevent's kbuffer walks them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <kbuffer.h>

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
				/* Records come back in whole words, as the kernel's do. */
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
		want_size[n] = (size + 3) & ~3u;
		n++;
		size = size % 300 + 1;
	}
	/* A gap longer than a time extend holds does not fit: a page of its own. */
	usertp__kpage_open(&p, page, 5);
	CHECK(usertp__kpage_add(&p, 5 + (1ull << 59), 8, USERTP__KPAGE_DATA) == NULL,
	      "a gap of 2^59 was taken");
	CHECK(p.used == 0, "a refused record left %u bytes", p.used);
	/* A record as long as a page holds, and one byte more (a whole word more, rounded up). */
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

/* Store @v as @n bytes (4 or 8) in byte order @be. */
static void store(unsigned char *p, unsigned int n, uint64_t v, bool be)
{
	for (unsigned int i = 0; i < n; i++)
		p[be ? n - 1 - i : i] = (unsigned char)(v >> (8 * i));
}

/*
 * Page @in (this host's, @used bytes of entries, records in the short form, with length words
 * and time extends, as the encoder writes them) rewritten in layout @f into @out (of
 * f->page_size bytes): header, commit word, entry words and the lost count in its long size
 * and byte order; payloads as they are.
 */
static void relayout(const unsigned char *in, uint32_t used, uint64_t flags, uint64_t lost,
		     const struct usertp__kpage_format *f, unsigned char *out)
{
	unsigned int hdr = 8 + f->long_size;
	uint32_t off = 0;

	memset(out, 0, f->page_size);
	store(out, 8, get64(in), f->big_endian);
	store(out + 8, f->long_size, used | flags, f->big_endian);
	while (off + 4 <= used) {
		const unsigned char *from = in + USERTP__KPAGE_HEADER + off;
		unsigned char *to = out + hdr + off;
		uint32_t word, type, delta, arg = 0, head, body;

		memcpy(&word, from, 4);
		type = word & 31;
		delta = word >> 5;
		store(to, 4, f->big_endian ? type << 27 | delta : word, f->big_endian);
		/* A length word (type 0) or the delta's high bits (a time extend) follow. */
		head = type == 0 || type == USERTP__KPAGE_TYPE_TIME_EXTEND ? 8 : 4;
		if (head == 8) {
			memcpy(&arg, from + 4, 4);
			store(to + 4, 4, arg, f->big_endian);
		}
		body = type == USERTP__KPAGE_TYPE_TIME_EXTEND ? 0
		       : type == 0			       ? (arg - 4 + 3) & ~3u
							       : type * 4;
		memcpy(to + head, from + head, body);
		off += head + body;
	}
	if (flags & USERTP__KPAGE_LOST_COUNT)
		store(out + hdr + used, f->long_size, lost, f->big_endian);
}

/*
 * Pages of the four layouts (long 8 or 4, little- or big-endian) with records of every size,
 * gaps that need time extends, and each kind of loss mark: walked by the codec and by
 * kbuffer (what trace-cmd reads with), the same records, times, sizes and losses.
 */
static void other_hosts(void)
{
	static const struct usertp__kpage_format formats[] = {
		{ 4096, 8, false }, { 4096, 4, false }, { 4096, 8, true }, { 8192, 4, true },
	};
	static const uint64_t marks[][2] = {
		{ 0, 0 }, /* flags, count */
		{ USERTP__KPAGE_LOST_EVENTS, 0 },
		{ USERTP__KPAGE_LOST_EVENTS | USERTP__KPAGE_LOST_COUNT, 1234 },
		{ USERTP__KPAGE_LOST_COUNT, 99 }, /* the count's flag alone: nothing lost */
	};
	static unsigned char page[USERTP__KPAGE_SIZE], out[8192];
	unsigned int checked = 0;

	for (unsigned int pg = 0; pg < 24; pg++) {
		const struct usertp__kpage_format *f = &formats[pg % 4];
		const uint64_t *mark = marks[pg / 4 % 4];
		struct kbuffer *kb = kbuffer_alloc(f->long_size == 8 ? KBUFFER_LSIZE_8 : KBUFFER_LSIZE_4,
						   f->big_endian ? KBUFFER_ENDIAN_BIG : KBUFFER_ENDIAN_LITTLE);
		struct usertp__kpage_iter it;
		struct usertp__kpage_entry e;
		struct usertp__kpage p;
		uint64_t ts = 1ull << 40, lost, want_lost;
		uint32_t used, size = pg * 7 % 150 + 1;
		unsigned long long kts;
		unsigned int k = 0;
		void *kdata;
		int ret;

		usertp__kpage_open(&p, page, ts);
		for (unsigned int i = 0;; i++) {
			unsigned char *at;

			ts += i % 9 == 4 ? (1ull << 28) + i : i;
			at = usertp__kpage_add(&p, ts, size, USERTP__KPAGE_DATA - 8);
			if (!at)
				break;
			memset(at, (int)i, size);
			size = size % 150 + 1;
		}
		relayout(page, p.used, mark[0], mark[1], f, out);
		want_lost = !(mark[0] & USERTP__KPAGE_LOST_EVENTS) ? 0
			    : mark[0] & USERTP__KPAGE_LOST_COUNT ? mark[1]
								  : USERTP__KPAGE_LOST_UNKNOWN;
		CHECK(usertp__kpage_header_as(f, out, &used, &lost) && used == p.used &&
		      lost == want_lost,
		      "page %u: header: used %u of %u, lost %llu", pg, used, p.used,
		      (unsigned long long)lost);
		kbuffer_load_subbuffer(kb, out);
		usertp__kpage_iter_init_as(&it, f, out, used);
		while ((ret = usertp__kpage_iter_next(&it, &e)) == 1) {
			kdata = kbuffer_read_event(kb, &kts);
			CHECK(kdata == e.data && kts == e.ts &&
			      kbuffer_event_size(kb) == (int)((e.size + 3) & ~3u) &&
			      kbuffer_curr_size(kb) == (int)(it.off - e.off) &&
			      kbuffer_missed_events(kb) ==
				      (e.off ? 0 : lost == USERTP__KPAGE_LOST_UNKNOWN ? -1 : (int)lost),
			      "page %u (long %u, %s-endian) record %u: ours at %td ts %llu size %u, "
			      "kbuffer's at %td ts %llu size %d missed %d", pg, f->long_size,
			      f->big_endian ? "big" : "little", k, e.data - out,
			      (unsigned long long)e.ts, e.size, kdata ? (unsigned char *)kdata - out : -1,
			      kts, kbuffer_event_size(kb), kbuffer_missed_events(kb));
			kbuffer_next_event(kb, NULL);
			k++;
		}
		CHECK(ret == 0 && kbuffer_read_event(kb, NULL) == NULL && k > 10,
		      "page %u: %d after %u records; kbuffer has more: %d", pg, ret, k,
		      kbuffer_read_event(kb, NULL) != NULL);
		checked += k;
		kbuffer_free(kb);
	}
	CHECK(checked > 240, "only %u records compared", checked);
}

int main(void)
{
	round_trip();
	seal();
	hostile();
	other_hosts();
	return harness_done();
}
