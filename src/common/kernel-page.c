/* SPDX-License-Identifier: MIT */
/*
 * kernel-page.c - the kernel's ring-buffer page: records encoded into it, its commit word
 * sealed and read, its entries walked, in this host's layout or another's (kernel-page.h).
 */
#include <errno.h>
#include <string.h>

#include "kernel-page.h"

static void put32(unsigned char *at, uint32_t v)
{
	memcpy(at, &v, 4);
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

void usertp__kpage_open(struct usertp__kpage *p, unsigned char *data, uint64_t ts)
{
	p->data = data;
	p->used = 0;
	p->ts = ts;
	memcpy(data, &ts, 8);
}

void *usertp__kpage_add(struct usertp__kpage *p, uint64_t ts, uint32_t size, uint32_t room)
{
	uint32_t len, hdr = usertp__kpage_record_header(size, &len);
	uint64_t delta = ts > p->ts ? ts - p->ts : 0;
	uint32_t ext = delta >> USERTP__KPAGE_DELTA_BITS ? 8 : 0;
	unsigned char *at;

	/* A time extend holds 27 + 32 bits; a longer gap needs a page of its own. */
	if (delta >> (USERTP__KPAGE_DELTA_BITS + 32) || room > USERTP__KPAGE_DATA ||
	    (uint64_t)p->used + ext + hdr + len > room)
		return NULL;
	at = p->data + USERTP__KPAGE_HEADER + p->used;
	if (ext) {
		put32(at, usertp__kpage_entry_word(USERTP__KPAGE_TYPE_TIME_EXTEND,
						   delta & ((1u << USERTP__KPAGE_DELTA_BITS) - 1)));
		put32(at + 4, (uint32_t)(delta >> USERTP__KPAGE_DELTA_BITS));
		at += 8;
		delta = 0;
	}
	put32(at, usertp__kpage_entry_word(hdr == 4 ? len / 4 : 0, delta));
	if (hdr == 8)
		put32(at + 4, len + 4);
	memset(at + hdr + size, 0, len - size);
	p->used += ext + hdr + len;
	if (ts > p->ts)
		p->ts = ts;
	return at + hdr;
}

void usertp__kpage_seal(unsigned char *data, uint32_t used, uint64_t lost)
{
	uint64_t commit;

	if (used > USERTP__KPAGE_DATA)
		used = USERTP__KPAGE_DATA;
	commit = used;
	memset(data + USERTP__KPAGE_HEADER + used, 0, USERTP__KPAGE_DATA - used);
	if (lost) {
		commit |= USERTP__KPAGE_LOST_EVENTS;
		if (lost != USERTP__KPAGE_LOST_UNKNOWN && used + 8 <= USERTP__KPAGE_DATA) {
			commit |= USERTP__KPAGE_LOST_COUNT;
			memcpy(data + USERTP__KPAGE_HEADER + used, &lost, 8);
		}
	}
	memcpy(data + 8, &commit, 8);
}

const struct usertp__kpage_format usertp__kpage_native = {
	.page_size = USERTP__KPAGE_SIZE,
	.long_size = 8,
	.big_endian = false,
};

/* A number of @n bytes (4 or 8) in byte order @big_endian. */
static uint64_t load(const unsigned char *p, unsigned int n, bool big_endian)
{
	uint64_t v = 0;

	if (!big_endian && n == 8)
		return get64(p);
	if (!big_endian)
		return get32(p);
	for (unsigned int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static uint32_t load32(const unsigned char *p, bool big_endian)
{
	return big_endian ? (uint32_t)load(p, 4, true) : get32(p);
}

bool usertp__kpage_header_as(const struct usertp__kpage_format *f, const unsigned char *data,
			     uint32_t *used, uint64_t *lost)
{
	uint32_t room = f->page_size - 8 - f->long_size;
	uint64_t commit = load(data + 8, f->long_size, f->big_endian);
	uint64_t size = commit & USERTP__KPAGE_COMMIT_MASK;
	bool counted = commit & USERTP__KPAGE_LOST_COUNT;

	if (size > room || (counted && size + f->long_size > room))
		return false;
	*used = (uint32_t)size;
	*lost = 0;
	if (commit & USERTP__KPAGE_LOST_EVENTS)
		*lost = counted ? load(data + 8 + f->long_size + size, f->long_size, f->big_endian)
				: USERTP__KPAGE_LOST_UNKNOWN;
	return true;
}

bool usertp__kpage_header(const unsigned char *data, uint32_t *used, uint64_t *lost)
{
	return usertp__kpage_header_as(&usertp__kpage_native, data, used, lost);
}

void usertp__kpage_iter_init_as(struct usertp__kpage_iter *it, const struct usertp__kpage_format *f,
				const unsigned char *page, uint32_t used)
{
	uint32_t room = f->page_size - 8 - f->long_size;

	it->page = page;
	it->entries = page + 8 + f->long_size;
	it->used = used < room ? used : room;
	it->off = 0;
	it->ts = load(page, 8, f->big_endian);
	it->big_endian = f->big_endian;
}

void usertp__kpage_iter_init(struct usertp__kpage_iter *it, const unsigned char *page, uint32_t used)
{
	usertp__kpage_iter_init_as(it, &usertp__kpage_native, page, used);
}

int usertp__kpage_iter_next(struct usertp__kpage_iter *it, struct usertp__kpage_entry *entry)
{
	const unsigned char *data = it->entries;
	uint32_t used = it->used;
	bool be = it->big_endian;

	while (it->off + 4 <= used) {
		const unsigned char *p = data + it->off;
		uint32_t word = load32(p, be), arg, len;
		uint32_t type = be ? word >> USERTP__KPAGE_DELTA_BITS : word & 31;
		uint32_t delta = be ? word & ((1u << USERTP__KPAGE_DELTA_BITS) - 1) : word >> 5;

		switch (type) {
		case USERTP__KPAGE_TYPE_PADDING:
			if (!delta)
				return 0; /* the kernel's null entry: nothing more on the page */
			if (it->off + 8 > used)
				return -EINVAL;
			arg = load32(p + 4, be);
			if (arg < 4 || arg > used - it->off - 4)
				return -EINVAL;
			it->ts += delta;
			it->off += 4 + arg;
			continue;
		case USERTP__KPAGE_TYPE_TIME_EXTEND:
			if (it->off + 8 > used)
				return -EINVAL;
			it->ts += ((uint64_t)load32(p + 4, be) << USERTP__KPAGE_DELTA_BITS) + delta;
			it->off += 8;
			continue;
		case USERTP__KPAGE_TYPE_TIME_STAMP:
			/* 59 bits: the 5 above them are the page's. */
			if (it->off + 8 > used)
				return -EINVAL;
			it->ts = (((uint64_t)load32(p + 4, be) << USERTP__KPAGE_DELTA_BITS) | delta) +
				 (load(it->page, 8, be) & (~0ull << 59));
			it->off += 8;
			continue;
		case 0:
			if (it->off + 8 > used)
				return -EINVAL;
			arg = load32(p + 4, be);
			if (arg < 4)
				return -EINVAL;
			len = arg - 4;
			if (((uint64_t)len + 3) / 4 * 4 > (uint64_t)used - it->off - 8)
				return -EINVAL;
			it->ts += delta;
			entry->ts = it->ts;
			entry->data = p + 8;
			entry->size = len;
			entry->off = it->off;
			it->off += 8 + ((len + 3) & ~3u);
			return 1;
		default:
			len = type * 4;
			if (len > used - it->off - 4)
				return -EINVAL;
			it->ts += delta;
			entry->ts = it->ts;
			entry->data = p + 4;
			entry->size = len;
			entry->off = it->off;
			it->off += 4 + len;
			return 1;
		}
	}
	return 0;
}

int usertp__kpage_records(const unsigned char *page, uint32_t used,
			  struct usertp__kpage_entry *out, unsigned int max)
{
	struct usertp__kpage_iter it;
	unsigned int n = 0;
	int ret;

	usertp__kpage_iter_init(&it, page, used);
	while (n < max && (ret = usertp__kpage_iter_next(&it, &out[n])) == 1)
		n++;
	if (n == max)
		ret = 0; /* (no page holds more) */
	return ret < 0 ? ret : (int)n;
}

int usertp__kpage_split(const unsigned char *data, uint32_t used, uint32_t room,
			unsigned char *first, uint32_t *used1, unsigned char *second, uint32_t *used2)
{
	struct usertp__kpage_iter it;
	struct usertp__kpage_entry e;
	struct usertp__kpage p = { 0 };
	unsigned char *at;
	bool in_second = false;
	int ret;

	*used1 = *used2 = 0;
	usertp__kpage_iter_init(&it, data, used);
	while ((ret = usertp__kpage_iter_next(&it, &e)) == 1) {
		if (!p.data || !(at = usertp__kpage_add(&p, e.ts, e.size, in_second ? USERTP__KPAGE_DATA : room))) {
			if (in_second)
				return -EINVAL; /* (the rest of one page fits in one) */
			if (p.data) {
				*used1 = p.used;
				in_second = true;
			}
			usertp__kpage_open(&p, in_second ? second : first, e.ts);
			at = usertp__kpage_add(&p, e.ts, e.size, in_second ? USERTP__KPAGE_DATA : room);
			if (!at)
				return -EINVAL;
		}
		memcpy(at, e.data, e.size);
	}
	if (ret < 0)
		return ret;
	if (in_second)
		*used2 = p.used;
	else if (p.data)
		*used1 = p.used;
	return 0;
}
