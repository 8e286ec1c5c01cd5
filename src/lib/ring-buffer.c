/* SPDX-License-Identifier: MIT */
/*
 * ring-buffer.c - per-CPU ring buffers in the kernel's page format: the lock-free writer and
 * a reader that trusts nothing it reads.  ring-buffer.h describes the layout and protocol.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "ring-buffer.h"

enum usertp_rb_clock usertp_rb_clock_id = USERTP_RB_CLOCK_MONO;

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

static size_t cpu_area_header(unsigned int nr_pages)
{
	return round_up(sizeof(struct usertp_rb_cpu) + 2 * (size_t)nr_pages * sizeof(uint64_t),
			USERTP_RB_PAGE);
}

int usertp_rb_create(struct usertp_rb *rb, unsigned int nr_cpus, unsigned long kb, bool overwrite)
{
	size_t header, area, size;
	unsigned int nr_pages, i;
	unsigned char *base;
	int fd;

	memset(rb, 0, sizeof(*rb));
	rb->fd = -1;
	if (!nr_cpus || nr_cpus > 4096 || !kb || kb > (1ul << 30))
		return -EINVAL;
	/* Whole pages of 4080 data bytes, as the kernel rounds buffer_size_kb. */
	nr_pages = (unsigned int)((kb * 1024 + USERTP_RB_PAGE_DATA - 1) / USERTP_RB_PAGE_DATA);
	if (nr_pages < 2)
		nr_pages = 2;
	header = round_up(sizeof(struct usertp_rb_region) + nr_cpus * sizeof(uint64_t),
			  USERTP_RB_PAGE);
	area = cpu_area_header(nr_pages) + (size_t)nr_pages * USERTP_RB_PAGE;
	size = header + (size_t)nr_cpus * area;

	fd = memfd_create("usertp-buffers", MFD_CLOEXEC);
	if (fd >= 0 && ftruncate(fd, (off_t)size) == 0)
		base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	else
		base = MAP_FAILED;
	if (base == MAP_FAILED) {
		/* No memfd (old kernel, seccomp): still record, only nobody else can map it. */
		if (fd >= 0)
			close(fd);
		fd = -1;
		base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (base == MAP_FAILED)
			return -ENOMEM;
	}
	rb->cpus = calloc(nr_cpus, sizeof(*rb->cpus));
	rb->pages = calloc(nr_cpus, sizeof(*rb->pages));
	if (!rb->cpus || !rb->pages) {
		free(rb->cpus);
		free(rb->pages);
		munmap(base, size);
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	rb->region = (struct usertp_rb_region *)base;
	rb->size = size;
	rb->fd = fd;
	rb->nr_cpus = nr_cpus;
	rb->nr_pages = nr_pages;
	rb->overwrite = overwrite;
	rb->region->page_size = USERTP_RB_PAGE;
	rb->region->nr_cpus = nr_cpus;
	rb->region->nr_pages = nr_pages;
	rb->region->flags = overwrite ? USERTP_RB_OVERWRITE : 0;
	rb->region->size = size;
	for (i = 0; i < nr_cpus; i++) {
		size_t off = header + i * area;

		rb->region->cpu_offset[i] = off;
		rb->cpus[i] = (struct usertp_rb_cpu *)(base + off);
		rb->cpus[i]->pages_offset = off + cpu_area_header(nr_pages);
		rb->pages[i] = base + rb->cpus[i]->pages_offset;
	}
	rb->region->version = USERTP_RB_VERSION;
	__atomic_store_n(&rb->region->magic, USERTP_RB_MAGIC, __ATOMIC_RELEASE);
	return 0;
}

void usertp_rb_destroy(struct usertp_rb *rb)
{
	if (rb->region)
		munmap(rb->region, rb->size);
	if (rb->fd >= 0)
		close(rb->fd);
	free(rb->cpus);
	free(rb->pages);
	memset(rb, 0, sizeof(*rb));
	rb->fd = -1;
}

/* --- reading ------------------------------------------------------------------------------ */

/*
 * Snapshots take their memory from mmap(), not malloc(): the recorder writes its output from
 * fatal-signal handlers too, where the heap may be broken or locked.
 */
void *usertp_rb_alloc(size_t size)
{
	size_t *p = mmap(NULL, size + 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	p[0] = size + 16;
	return (char *)p + 16;
}

void usertp_rb_free(void *ptr)
{
	if (ptr) {
		size_t *p = (size_t *)((char *)ptr - 16);

		munmap(p, p[0]);
	}
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

void usertp_rb_iter_init(struct usertp_rb_iter *it, const struct usertp_rb_page_copy *page)
{
	it->page = page;
	it->off = 0;
	it->ts = get64(page->data);
	it->started = true;
}

int usertp_rb_iter_next(struct usertp_rb_iter *it, struct usertp_rb_entry *entry)
{
	const unsigned char *data = it->page->data + USERTP_RB_PAGE_HEADER;
	uint32_t used = it->page->used;

	while (it->off + 4 <= used) {
		const unsigned char *p = data + it->off;
		uint32_t word = get32(p), type = word & 31, delta = word >> 5, arg, len;

		switch (type) {
		case USERTP_RB_TYPE_PADDING:
			if (!delta)
				return 0; /* the kernel's null entry: nothing more on the page */
			if (it->off + 8 > used)
				return -EINVAL;
			arg = get32(p + 4);
			if (arg < 4 || arg > used - it->off - 4)
				return -EINVAL;
			it->ts += delta;
			it->off += 4 + arg;
			continue;
		case USERTP_RB_TYPE_TIME_EXTEND:
			if (it->off + 8 > used)
				return -EINVAL;
			it->ts += ((uint64_t)get32(p + 4) << USERTP_RB_DELTA_BITS) + delta;
			it->off += 8;
			continue;
		case USERTP_RB_TYPE_TIME_STAMP:
			if (it->off + 8 > used)
				return -EINVAL;
			it->ts = (((uint64_t)get32(p + 4) << USERTP_RB_DELTA_BITS) | delta) +
				 (get64(it->page->data) & (~0ull << 59));
			it->off += 8;
			continue;
		case 0:
			if (it->off + 8 > used)
				return -EINVAL;
			arg = get32(p + 4);
			if (arg < 4)
				return -EINVAL;
			len = arg - 4;
			if (((uint64_t)len + 3) / 4 * 4 > (uint64_t)used - it->off - 8)
				return -EINVAL;
			it->ts += delta;
			entry->ts = it->ts;
			entry->data = p + 8;
			entry->size = len;
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
			it->off += 4 + len;
			return 1;
		}
	}
	return 0;
}

void usertp_rb_snapshot_free(struct usertp_rb_snapshot *snap)
{
	unsigned int i;

	if (snap->cpus)
		for (i = 0; i < snap->nr_cpus; i++)
			usertp_rb_free(snap->cpus[i].pages);
	usertp_rb_free(snap->cpus);
	memset(snap, 0, sizeof(*snap));
}

/* Count the events of a copied page (stopping at anything malformed). */
static uint64_t page_events(const struct usertp_rb_page_copy *page)
{
	struct usertp_rb_iter it;
	struct usertp_rb_entry e;
	uint64_t n = 0;

	usertp_rb_iter_init(&it, page);
	while (usertp_rb_iter_next(&it, &e) == 1)
		n++;
	return n;
}

static int snapshot_cpu(const unsigned char *base, size_t size,
			const struct usertp_rb_region *region, unsigned int cpu,
			struct usertp_rb_cpu_snapshot *out)
{
	unsigned int nr = region->nr_pages, i;
	uint64_t off = region->cpu_offset[cpu], pos, head, first, p;
	const struct usertp_rb_cpu *c;
	const uint64_t *commit, *lost_before;
	const unsigned char *pages;

	if (off % 64 || off > size || size - off < cpu_area_header(nr))
		return -EINVAL;
	c = (const struct usertp_rb_cpu *)(base + off);
	commit = c->commit;
	lost_before = c->commit + nr;
	if (c->pages_offset % USERTP_RB_PAGE || c->pages_offset > size ||
	    (size - c->pages_offset) / USERTP_RB_PAGE < nr)
		return -EINVAL;
	pages = base + c->pages_offset;

	for (i = 0; i < nr; i++)
		out->written += __atomic_load_n(&commit[i], __ATOMIC_ACQUIRE) >> 32;
	out->dropped = __atomic_load_n(&c->dropped, __ATOMIC_RELAXED);
	pos = __atomic_load_n(&c->pos, __ATOMIC_ACQUIRE);
	if (!pos)
		return 0;
	head = pos / USERTP_RB_PAGE;
	first = region->flags & USERTP_RB_OVERWRITE ? (head + 1 >= nr ? head + 1 - nr : 0)
						    : __atomic_load_n(&c->read_page, __ATOMIC_ACQUIRE);
	if (first > head)
		first = head;
	out->pages = usertp_rb_alloc((head - first + 1) * sizeof(*out->pages));
	if (!out->pages)
		return -ENOMEM;
	for (p = first; p <= head; p++) {
		struct usertp_rb_page_copy *copy = &out->pages[out->nr_pages];
		unsigned int slot = (unsigned int)(p % nr);
		uint64_t expected = (p / nr + 1) * USERTP_RB_PAGE_DATA, now;
		uint32_t bytes;

		memcpy(copy->data, pages + (size_t)slot * USERTP_RB_PAGE, USERTP_RB_PAGE);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		bytes = (uint32_t)__atomic_load_n(&commit[slot], __ATOMIC_ACQUIRE);
		now = __atomic_load_n(&c->pos, __ATOMIC_ACQUIRE) / USERTP_RB_PAGE;
		if (now >= p + nr)
			continue; /* reused while we copied: it counts as overwritten */
		if (p < head) {
			uint64_t used = get64(copy->data + 8);

			/* Complete pages say their size; an unfinished one (a writer died or is
			 * still writing) is read as far as its entries hold together. */
			if ((uint32_t)(expected - bytes) > USERTP_RB_PAGE_DATA)
				continue; /* already reused */
			copy->used = used && used <= USERTP_RB_PAGE_DATA ? (uint32_t)used
									  : USERTP_RB_PAGE_DATA;
		} else {
			copy->used = (uint32_t)(pos % USERTP_RB_PAGE) - USERTP_RB_PAGE_HEADER;
			if (copy->used > USERTP_RB_PAGE_DATA)
				copy->used = 0;
		}
		copy->page_no = p;
		copy->lost_before = __atomic_load_n(&lost_before[slot], __ATOMIC_RELAXED);
		out->entries += page_events(copy);
		out->nr_pages++;
	}
	out->overrun = out->written > out->entries ? out->written - out->entries : 0;
	return 0;
}

int usertp_rb_snapshot(const void *base_ptr, size_t size, struct usertp_rb_snapshot *snap)
{
	const unsigned char *base = base_ptr;
	const struct usertp_rb_region *region = base_ptr;
	unsigned int i;
	int ret;

	memset(snap, 0, sizeof(*snap));
	if (size < sizeof(*region) || region->magic != USERTP_RB_MAGIC ||
	    region->version != USERTP_RB_VERSION || region->page_size != USERTP_RB_PAGE ||
	    !region->nr_cpus || region->nr_cpus > 4096 || region->nr_pages < 2 ||
	    region->nr_pages > (1u << 24) ||
	    (size - sizeof(*region)) / sizeof(uint64_t) < region->nr_cpus)
		return -EINVAL;
	snap->cpus = usertp_rb_alloc(region->nr_cpus * sizeof(*snap->cpus));
	if (!snap->cpus)
		return -ENOMEM;
	snap->nr_cpus = region->nr_cpus;
	for (i = 0; i < region->nr_cpus; i++) {
		ret = snapshot_cpu(base, size, region, i, &snap->cpus[i]);
		if (ret) {
			usertp_rb_snapshot_free(snap);
			return ret;
		}
	}
	return 0;
}
