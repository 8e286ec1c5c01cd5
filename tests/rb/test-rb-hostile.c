/* SPDX-License-Identifier: MIT */
/*
 * test-rb-hostile.c - the reader against a region that lies.  A valid region with events on
 * 3 CPUs (wrapped in overwrite mode) is copied into a heap block of exactly the size given to
 * the reader, then corrupted in one or several random ways: random bytes anywhere, header
 * fields, cpu_offset, pages_offset, pos, last_ts, read_page, commit and lost_before counts,
 * page headers (commit field > 4080, timestamps), entry headers (lengths past the page, every
 * type), a truncated size.  Thousands of rounds from a fixed seed: usertp__rb_snapshot() must
 * return -EINVAL (or -ENOMEM), or a snapshot whose pages say at most 4080 used bytes and whose
 * entries iterate with results 1, 0 or -EINVAL only, each entry inside its page's used bytes.
 * Under AddressSanitizer (the CI script runs every test there too), any read outside the
 * block is caught.
 */
#define _GNU_SOURCE
#include "rb-test.h"

#define ROUNDS 10000
#define NR_CPUS 3

static uint64_t rnd = 0x5eed;

static uint64_t rand_below(uint64_t n)
{
	return n ? rbt_rand(&rnd) % n : 0;
}

/* A value for a field: near a valid one, a boundary, or anything. */
static uint64_t nasty(uint64_t valid, uint64_t size)
{
	static const uint64_t special[] = { 0, 1, 7, 8, 15, 16, 63, 64, 4080, 4095, 4096, 4097,
					    1ull << 31, 1ull << 32, UINT32_MAX, UINT64_MAX,
					    UINT64_MAX - 4095, 1ull << 63, 1ull << 52 };

	switch (rand_below(6)) {
	case 0:
		return special[rand_below(sizeof(special) / sizeof(special[0]))];
	case 1:
		return valid + rand_below(9) - 4;
	case 2:
		return valid + (rand_below(2) ? USERTP__KPAGE_SIZE : -(uint64_t)USERTP__KPAGE_SIZE) *
				       (1 + rand_below(8));
	case 3:
		return size - rand_below(2 * USERTP__KPAGE_SIZE);
	case 4:
		return rand_below(size + 1);
	default:
		return rbt_rand(&rnd);
	}
}

static void put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static uint64_t get64_(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static size_t cpu_off(unsigned int cpu)
{
	return offsetof(struct usertp__rb_region, cpu_offset) + 8 * (size_t)cpu;
}

/* One corruption of the region @r of @size bytes, laid out as @rb. */
static void corrupt(unsigned char *r, size_t size, const struct usertp__rb *rb)
{
	const unsigned char *base = (const unsigned char *)rb->region;
	unsigned int cpu = (unsigned int)rand_below(NR_CPUS), slot = (unsigned int)rand_below(rb->nr_pages);
	size_t c = (size_t)((const unsigned char *)rb->cpus[cpu] - base);
	size_t pages = (size_t)(rb->pages[cpu] - base), page = pages + (size_t)slot * USERTP__KPAGE_SIZE;
	size_t at;
	unsigned int i, n;

	switch (rand_below(14)) {
	case 0: /* random bytes anywhere */
		n = 1 + (unsigned int)rand_below(64);
		for (i = 0; i < n; i++)
			r[rand_below(size)] = (unsigned char)rbt_rand(&rnd);
		break;
	case 1: /* random bytes in the headers */
		n = 1 + (unsigned int)rand_below(8);
		for (i = 0; i < n; i++)
			r[rand_below(USERTP__KPAGE_SIZE)] = (unsigned char)rbt_rand(&rnd);
		break;
	case 2: /* a header field */
		at = 4 * rand_below(offsetof(struct usertp__rb_region, size) / 4);
		put32(r + at, (uint32_t)nasty(get64_(r + at) & 0xffffffff, size));
		break;
	case 3:
		put64(r + cpu_off(cpu), nasty(c, size));
		break;
	case 4:
		put64(r + c + offsetof(struct usertp__rb_cpu, pages_offset), nasty(pages, size));
		break;
	case 5: /* pos, last_ts, read_page, dropped, lost_pending */
		at = c + 8 * rand_below(5);
		put64(r + at, nasty(get64_(r + at), size));
		break;
	case 6: /* commit and lost_before counts */
		at = c + offsetof(struct usertp__rb_cpu, commit) + 8 * rand_below(2 * rb->nr_pages);
		put64(r + at, rand_below(2) ? nasty(get64_(r + at), size)
					     : get64_(r + at) + ((uint64_t)rand_below(3) << 32) +
						       rand_below(9000) - 4500);
		break;
	case 7: /* a page's commit field (its used bytes) */
		put64(r + page + 8, rand_below(2) ? USERTP__KPAGE_DATA + 1 + rand_below(64)
						  : nasty(get64_(r + page + 8), size));
		break;
	case 8: /* a page's timestamp */
		put64(r + page, rbt_rand(&rnd));
		break;
	case 9: /* an entry header of any type and any length */
		at = page + USERTP__KPAGE_HEADER + 8 * rand_below(USERTP__KPAGE_DATA / 8);
		put32(r + at, (uint32_t)rbt_rand(&rnd));
		put32(r + at + 4, (uint32_t)nasty(get64_(r + at + 4) & 0xffffffff, USERTP__KPAGE_SIZE));
		break;
	case 10: /* the type and length of an entry, as 32-bit words */
		at = page + USERTP__KPAGE_HEADER + 4 * rand_below(USERTP__KPAGE_DATA / 4);
		put32(r + at, (uint32_t)rand_below(32) | (uint32_t)(rbt_rand(&rnd) << 5));
		break;
	case 11: /* the length of a data entry only: past the page, or off by little */
		at = page + USERTP__KPAGE_HEADER + 8 * rand_below(USERTP__KPAGE_DATA / 8);
		put32(r + at + 4, rand_below(2) ? USERTP__KPAGE_DATA - (uint32_t)rand_below(64)
						: (uint32_t)nasty(4, USERTP__KPAGE_SIZE));
		break;
	case 12: /* a whole page of garbage */
		for (at = 0; at < USERTP__KPAGE_SIZE; at += 8)
			put64(r + page + at, rbt_rand(&rnd));
		break;
	default: /* zero a random range */
		at = rand_below(size);
		memset(r + at, 0, rand_below(size - at + 1));
		break;
	}
}

int main(void)
{
	unsigned int round, snapshots = 0, refused = 0, entries_seen = 0;
	unsigned char *scratch;
	struct usertp__rb rb;
	uint64_t seq = 0;
	unsigned int cpu, i;

	/* The valid region: 4 pages per CPU, wrapped on CPU 0, partly filled on the others. */
	CHECK_INT(usertp__rb_create(&rb, NR_CPUS, 16, true), ==, 0);
	for (i = 0; i < 400; i++)
		rbt_write(&rb, 0, PAYLOAD_HEAD + (uint32_t)rand_below(300), 1, seq++, NULL, NULL);
	for (i = 0; i < 40; i++)
		rbt_write(&rb, 1, PAYLOAD_HEAD + (uint32_t)rand_below(300), 1, seq++, NULL, NULL);
	rbt_write(&rb, 2, 3000, 1, seq++, NULL, NULL);

	scratch = malloc(rb.size);
	if (!scratch)
		return 2;
	for (round = 0; round < ROUNDS; round++) {
		size_t size = rb.size;
		unsigned int n = 1 + (unsigned int)rand_below(4);
		struct usertp__rb_snapshot snap;
		unsigned char *r;
		int ret;

		memcpy(scratch, rb.region, rb.size);
		for (i = 0; i < n; i++)
			corrupt(scratch, rb.size, &rb);
		if (rand_below(8) == 0) /* truncated, corrupted or not */
			size = rand_below(2) ? rand_below(rb.size) : rb.size - rand_below(3 * 4096);
		if (rand_below(8) == 0)
			memcpy(scratch, rb.region, rb.size);
		/* Exactly @size bytes, so that AddressSanitizer sees any read past them. */
		if (posix_memalign((void **)&r, 64, size ? size : 1))
			return 2;
		memcpy(r, scratch, size);
		ret = usertp__rb_snapshot(r, size, &snap);
		if (ret) {
			if (ret != -EINVAL && ret != -ENOMEM) {
				fprintf(stderr, "round %u: snapshot returned %d\n", round, ret);
				CHECK(false);
			}
			refused++;
		} else {
			snapshots++;
			for (cpu = 0; cpu < snap.nr_cpus; cpu++) {
				const struct usertp__rb_cpu_snapshot *c = &snap.cpus[cpu];
				struct rbt_walk w;

				for (i = 0; i < c->nr_pages; i++)
					if (c->pages[i].used > USERTP__KPAGE_DATA) {
						fprintf(stderr, "round %u: page used %u\n", round,
							c->pages[i].used);
						CHECK(false);
					}
				rbt_walk_cpu(c, &w);
				if (w.bad_ret || w.out_of_page) {
					fprintf(stderr, "round %u: cpu %u: %u bad results, %u entries outside\n",
						round, cpu, w.bad_ret, w.out_of_page);
					CHECK(false);
				}
				entries_seen += (unsigned int)w.n;
				free(w.e);
			}
			usertp__rb_snapshot_free(&snap);
		}
		free(r);
	}
	printf("%u rounds: %u snapshots (%u entries), %u refused\n", ROUNDS, snapshots, entries_seen,
	       refused);
	/* Both outcomes happen: the corruptions are neither all fatal nor all harmless. */
	CHECK(snapshots > ROUNDS / 10);
	CHECK(refused > ROUNDS / 10);
	free(scratch);
	usertp__rb_destroy(&rb);
	return harness_done();
}
