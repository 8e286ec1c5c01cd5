/* SPDX-License-Identifier: MIT */
/*
 * rb-reader.c - the ring buffer's reading side (ring-buffer.h): snapshots of a region for the
 * program's own output, and, from another process, consuming, peeking and waiting on the
 * pages of a region it maps, trusting nothing it reads.  The writer is ring-buffer.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "number.h"
#include "ring-buffer.h"

/* --- reading ------------------------------------------------------------------------------ */

void usertp__rb_quiesce(const struct usertp__rb *rb, unsigned int ms)
{
	struct timespec tick = { 0, 100000 }; /* 0.1 ms */
	unsigned int cpu, waited = 0;

	for (cpu = 0; cpu < rb->nr_cpus; cpu++) {
		const struct usertp__rb_cpu *c = rb->cpus[cpu];

		while (waited < ms * 10) {
			uint64_t pos = __atomic_load_n(&c->pos, __ATOMIC_ACQUIRE), page, n;
			uint32_t off = (uint32_t)(pos % USERTP__KPAGE_SIZE);

			page = pos / USERTP__KPAGE_SIZE;
			if (!pos)
				break;
			/* Everything reserved on the newest page is committed. */
			if (rb->rseq && off >= USERTP__KPAGE_HEADER &&
			    usertp__rb_page_walk(rb->pages[cpu] + (page % rb->nr_pages) * USERTP__KPAGE_SIZE +
					      USERTP__KPAGE_HEADER,
				      usertp__rb_used(off), &n, NULL))
				break;
			if (!rb->rseq && off >= USERTP__KPAGE_HEADER &&
			    (uint32_t)__atomic_load_n(&c->commit[page % rb->nr_pages],
						      __ATOMIC_ACQUIRE) ==
				    (uint32_t)(page / rb->nr_pages * USERTP__KPAGE_DATA +
					       usertp__rb_used(off)))
				break;
			nanosleep(&tick, NULL);
			waited++;
		}
	}
}

/*
 * Snapshots take their memory from mmap(), not malloc(): the recorder writes its output from
 * fatal-signal handlers too, where the heap may be broken or locked.
 */
void *usertp__rb_alloc(size_t size)
{
	size_t *p = mmap(NULL, size + 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	p[0] = size + 16;
	return (char *)p + 16;
}

void usertp__rb_free(void *ptr)
{
	if (ptr) {
		size_t *p = (size_t *)((char *)ptr - 16);

		munmap(p, p[0]);
	}
}

void usertp__rb_snapshot_free(struct usertp__rb_snapshot *snap)
{
	unsigned int i;

	if (snap->cpus)
		for (i = 0; i < snap->nr_cpus; i++)
			usertp__rb_free(snap->cpus[i].pages);
	usertp__rb_free(snap->cpus);
	memset(snap, 0, sizeof(*snap));
}

/*
 * Count the events of a copied page, make its pending entries padding, and cut its used size
 * to the end of its last well-formed entry: a page closed early, or being written, or whose
 * writer died, ends in zeros (the kernel's end-of-page entry) or in something that does not
 * parse.
 */
static uint64_t page_settle(struct usertp__rb_page_copy *page)
{
	uint64_t n;

	page->used = usertp__rb_page_settle(page->data + USERTP__KPAGE_HEADER, page->used, &n);
	return n;
}

/*
 * Events ever committed in one slot.  Its counter holds bytes (low 32 bits) and events (high)
 * in one word, so every 4 GiB the byte count carries into the event count.  The bytes are
 * known from the page the slot holds: k complete uses of 4080 bytes and part of one more.
 */
static uint64_t slot_events(uint64_t word, uint64_t latest_page, unsigned int nr)
{
	uint64_t base = latest_page / nr * USERTP__KPAGE_DATA;
	uint64_t bytes = base + (uint32_t)((uint32_t)word - (uint32_t)base);

	return (word - bytes) >> 32;
}

/* The control block of a CPU at @off, if it and its pages lie within the region. */
static const struct usertp__rb_cpu *cpu_area(const unsigned char *base, size_t size, uint64_t off,
					    unsigned int nr, uint64_t *pages_offset)
{
	const struct usertp__rb_cpu *c;

	if (off % 64 || off > size || size - off < usertp__rb_cpu_area_header(nr))
		return NULL;
	c = (const struct usertp__rb_cpu *)(base + off);
	*pages_offset = __atomic_load_n(&c->pages_offset, __ATOMIC_RELAXED);
	if (*pages_offset % USERTP__KPAGE_SIZE || *pages_offset > size ||
	    (size - *pages_offset) / USERTP__KPAGE_SIZE < nr)
		return NULL;
	return c;
}

static int snapshot_cpu(const unsigned char *base, size_t size, uint64_t off, unsigned int nr,
			bool overwrite, bool rseq, struct usertp__rb_cpu_snapshot *out)
{
	uint64_t pos, head, first, p, s;
	const struct usertp__rb_cpu *c;
	const uint64_t *commit, *lost_before;
	const unsigned char *pages;
	uint64_t pages_offset;
	uint32_t head_off;

	c = cpu_area(base, size, off, nr, &pages_offset);
	if (!c)
		return -EINVAL;
	commit = c->commit;
	lost_before = c->commit + nr;
	pages = base + pages_offset;

	out->dropped = __atomic_load_n(&c->dropped, __ATOMIC_RELAXED);
	out->written = rseq ? __atomic_load_n(&c->retired, __ATOMIC_RELAXED) : 0;
	pos = __atomic_load_n(&c->pos, __ATOMIC_ACQUIRE);
	if (!pos)
		return 0;
	head = pos / USERTP__KPAGE_SIZE;
	head_off = (uint32_t)(pos % USERTP__KPAGE_SIZE);
	for (s = 0; s < nr && s <= head; s++) {
		/* rseq mode: the pages the slots hold, the older ones being retired. */
		if (rseq) {
			uint64_t n;

			usertp__rb_page_walk(pages + ((head - s) % nr) * USERTP__KPAGE_SIZE + USERTP__KPAGE_HEADER,
				  s ? USERTP__KPAGE_DATA : usertp__rb_used(head_off), &n, NULL);
			out->written += n;
			continue;
		}
		out->written += slot_events(__atomic_load_n(&commit[s], __ATOMIC_ACQUIRE),
					    head - (head - s) % nr, nr);
	}
	first = overwrite ? 0 : __atomic_load_n(&c->read_page, __ATOMIC_ACQUIRE);
	/* At most nr pages exist, whatever the region claims. */
	if (first > head || head - first >= nr)
		first = head + 1 - (head + 1 < nr ? head + 1 : nr);
	out->pages = usertp__rb_alloc((size_t)(head - first + 1) * sizeof(*out->pages));
	if (!out->pages)
		return -ENOMEM;
	for (p = first; p <= head; p++) {
		struct usertp__rb_page_copy *copy = &out->pages[out->nr_pages];
		unsigned int slot = (unsigned int)(p % nr);
		uint64_t now;

		memcpy(copy->data, pages + (size_t)slot * USERTP__KPAGE_SIZE, USERTP__KPAGE_SIZE);
		/* The copy before the checks below (a seqlock read). */
#if defined(__SANITIZE_THREAD__)
		__atomic_load_n(&c->pos, __ATOMIC_SEQ_CST);
#else
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
#endif
		now = __atomic_load_n(&c->pos, __ATOMIC_ACQUIRE) / USERTP__KPAGE_SIZE;
		if (now >= p + nr)
			continue; /* reused while we copied: it counts as overwritten */
		/*
		 * A page left behind is read up to its first zero entry (CAS mode zeroes pages
		 * when opened; rseq mode clears the word after the last entry when leaving a
		 * page): its sealed size is not needed (and a page filled exactly is complete
		 * before anyone seals it).
		 */
		copy->used = p < head ? USERTP__KPAGE_DATA : usertp__rb_used(head_off);
		copy->page_no = p;
		copy->lost_before = __atomic_load_n(&lost_before[slot], __ATOMIC_RELAXED);
		out->entries += page_settle(copy);
		out->nr_pages++;
	}
	out->overrun = out->written > out->entries ? out->written - out->entries : 0;
	return 0;
}

/* Does the region's header hold together?  Each field is read once: it may change under us. */
static bool region_check(const struct usertp__rb_region *region, size_t size, unsigned int *nr_cpus,
			 unsigned int *nr_pages, bool *overwrite, bool *rseq)
{
	if (size < sizeof(*region))
		return false;
	*nr_cpus = __atomic_load_n(&region->nr_cpus, __ATOMIC_RELAXED);
	*nr_pages = __atomic_load_n(&region->nr_pages, __ATOMIC_RELAXED);
	*overwrite = __atomic_load_n(&region->flags, __ATOMIC_RELAXED) & USERTP_RB_OVERWRITE;
	*rseq = __atomic_load_n(&region->flags, __ATOMIC_RELAXED) & USERTP_RB_RSEQ;
	return region->magic == USERTP_RB_MAGIC && region->version == USERTP_RB_VERSION &&
	       region->page_size == USERTP__KPAGE_SIZE && *nr_cpus && *nr_cpus <= 4096 &&
	       *nr_pages >= 2 && *nr_pages <= (1u << 24) &&
	       (size - sizeof(*region)) / sizeof(uint64_t) >= *nr_cpus;
}

int usertp__rb_snapshot(const void *base_ptr, size_t size, struct usertp__rb_snapshot *snap)
{
	const unsigned char *base = base_ptr;
	const struct usertp__rb_region *region = base_ptr;
	unsigned int i, nr_cpus, nr_pages;
	bool overwrite, rseq;
	int ret;

	memset(snap, 0, sizeof(*snap));
	if (!region_check(region, size, &nr_cpus, &nr_pages, &overwrite, &rseq))
		return -EINVAL;
	snap->cpus = usertp__rb_alloc(nr_cpus * sizeof(*snap->cpus));
	if (!snap->cpus)
		return -ENOMEM;
	snap->nr_cpus = nr_cpus;
	for (i = 0; i < nr_cpus; i++) {
		ret = snapshot_cpu(base, size, region->cpu_offset[i], nr_pages, overwrite, rseq,
				   &snap->cpus[i]);
		if (ret) {
			usertp__rb_snapshot_free(snap);
			return ret;
		}
	}
	return 0;
}

/* --- consuming, from another process ------------------------------------------------------- */

int usertp__rb_view_init(struct usertp__rb_view *view, void *base, size_t size)
{
	const struct usertp__rb_region *region = base;
	unsigned int i;

	memset(view, 0, sizeof(*view));
	if (!region_check(region, size, &view->nr_cpus, &view->nr_pages, &view->overwrite,
			  &view->rseq) ||
	    view->nr_cpus > USERTP_RB_VIEW_MAX_CPUS)
		return -EINVAL;
	view->base = base;
	view->size = size;
	for (i = 0; i < view->nr_cpus; i++) {
		uint64_t off = __atomic_load_n(&region->cpu_offset[i], __ATOMIC_RELAXED);

		if (!cpu_area(base, size, off, view->nr_pages, &view->pages_offset[i]))
			return -EINVAL;
		view->cpu_offset[i] = off;
	}
	return 0;
}

/*
 * The pages of @cpu not consumed yet: from *first up to *head, the page being written.
 * Return: 1, 0 when nothing was ever written, -EINVAL when the positions are impossible.
 */
static int unconsumed(const struct usertp__rb_view *view, unsigned int cpu, uint64_t *first,
		      uint64_t *head, uint32_t *head_off)
{
	const struct usertp__rb_cpu *c = (const struct usertp__rb_cpu *)((const unsigned char *)view->base +
								       view->cpu_offset[cpu]);
	uint64_t pos;

	if (view->overwrite)
		return -EINVAL;
	pos = __atomic_load_n(&c->pos, __ATOMIC_ACQUIRE);
	if (!pos)
		return 0;
	*head = pos / USERTP__KPAGE_SIZE;
	*head_off = (uint32_t)(pos % USERTP__KPAGE_SIZE);
	*first = __atomic_load_n(&c->read_page, __ATOMIC_ACQUIRE);
	if (*first > *head || *head - *first >= view->nr_pages)
		return -EINVAL; /* the writer could not have got there: not a buffer we made */
	return 1;
}

int usertp__rb_consume(const struct usertp__rb_view *view, unsigned int cpu,
		      int (*fn)(const struct usertp__rb_page_copy *page, uint64_t events, void *arg),
		      void *arg, uint64_t *consumed)
{
	struct usertp__rb_cpu *c = (struct usertp__rb_cpu *)((unsigned char *)view->base +
							   view->cpu_offset[cpu]);
	const unsigned char *pages = (const unsigned char *)view->base + view->pages_offset[cpu];
	unsigned int nr = view->nr_pages;
	struct usertp__rb_page_copy copy;
	uint64_t p, head, n;
	uint32_t head_off;
	int ret;

	*consumed = 0;
	ret = unconsumed(view, cpu, &p, &head, &head_off);
	if (ret <= 0)
		return ret;
	/* Complete pages only: the writer has left them and every event on them is committed. */
	for (; p < head && usertp__rb_page_complete(c, pages, nr, view->rseq, p, &n, NULL); p++) {
		unsigned int slot = (unsigned int)(p % nr);

		memcpy(copy.data, pages + (size_t)slot * USERTP__KPAGE_SIZE, USERTP__KPAGE_SIZE);
		copy.used = USERTP__KPAGE_DATA;
		copy.page_no = p;
		copy.lost_before = __atomic_load_n(&c->commit[nr + slot], __ATOMIC_RELAXED);
		ret = fn(&copy, page_settle(&copy), arg);
		if (ret)
			return ret;
		/* The slot is the writer's again. */
		__atomic_store_n(&c->read_page, p + 1, __ATOMIC_RELEASE);
		++*consumed;
	}
	return 0;
}

int usertp__rb_consume_pages(const struct usertp__rb_view *view, unsigned int cpu,
			     int (*fn)(const struct usertp__rb_page_ref *pages, unsigned int n, void *arg),
			     void *arg, uint64_t *consumed)
{
	struct usertp__rb_cpu *c = (struct usertp__rb_cpu *)((unsigned char *)view->base +
							   view->cpu_offset[cpu]);
	const unsigned char *pages = (const unsigned char *)view->base + view->pages_offset[cpu];
	unsigned int nr = view->nr_pages, n = 0;
	struct usertp__rb_page_ref refs[USERTP_RB_CONSUME_BATCH], *ref;
	uint64_t p, head;
	uint32_t head_off;
	int ret;

	*consumed = 0;
	ret = unconsumed(view, cpu, &p, &head, &head_off);
	if (ret <= 0)
		return ret;
	for (;;) {
		bool complete = p < head;

		ref = &refs[n];
		if (complete)
			complete = usertp__rb_page_complete(c, pages, nr, view->rseq, p, &ref->events,
							   &ref->used);
		if (complete) {
			unsigned int slot = (unsigned int)(p % nr);

			ref->page = pages + (size_t)slot * USERTP__KPAGE_SIZE;
			/* CAS mode: complete by the slot's counter; the entries' end is walked. */
			if (!view->rseq)
				usertp__rb_page_walk(ref->page + USERTP__KPAGE_HEADER, USERTP__KPAGE_DATA,
						  &ref->events, &ref->used);
			ref->page_no = p++;
			ref->lost_before = __atomic_load_n(&c->commit[nr + slot], __ATOMIC_RELAXED);
			n++;
		}
		if (n && (!complete || n == USERTP_RB_CONSUME_BATCH)) {
			ret = fn(refs, n, arg);
			if (ret < 0)
				return ret;
			if ((unsigned int)ret > n)
				ret = (int)n;
			/* The slots taken are the writer's again. */
			if (ret)
				__atomic_store_n(&c->read_page, refs[ret - 1].page_no + 1,
						 __ATOMIC_RELEASE);
			*consumed += (unsigned int)ret;
			if ((unsigned int)ret < n)
				return 0;
			n = 0;
		}
		if (!complete)
			return 0;
	}
}

/*
 * The bytes of @page's entries before the first one still being written.  Past something
 * this writer does not write, the page is left whole: its reader's checked walk finds it,
 * says so and counts the loss.
 */
static uint32_t committed_prefix(const struct usertp__rb_page_copy *page)
{
	const unsigned char *data = page->data + USERTP__KPAGE_HEADER;
	uint32_t off = 0, next = 0;

	for (;;) {
		switch (usertp__rb_live_entry(data, off, page->used, &next)) {
		case USERTP_RB_ENTRY_EVENT:
		case USERTP_RB_ENTRY_SKIP:
			off = next;
			continue;
		case USERTP_RB_ENTRY_BAD:
			return page->used;
		default:
			return off;
		}
	}
}

int usertp__rb_peek(const struct usertp__rb_view *view, unsigned int cpu,
		   struct usertp__rb_page_copy *copy)
{
	const struct usertp__rb_cpu *c = (const struct usertp__rb_cpu *)((const unsigned char *)view->base +
								       view->cpu_offset[cpu]);
	const unsigned char *pages = (const unsigned char *)view->base + view->pages_offset[cpu];
	unsigned int nr = view->nr_pages, slot;
	uint64_t head, p;
	uint32_t head_off;
	int ret = unconsumed(view, cpu, &p, &head, &head_off);

	if (ret <= 0)
		return ret;
	slot = (unsigned int)(p % nr);
	/* Page p stays in its slot: only the consumer (we) can give the slot back. */
	memcpy(copy->data, pages + (size_t)slot * USERTP__KPAGE_SIZE, USERTP__KPAGE_SIZE);
	copy->page_no = p;
	copy->used = p < head ? USERTP__KPAGE_DATA : usertp__rb_used(head_off);
	copy->lost_before = __atomic_load_n(&c->commit[nr + slot], __ATOMIC_RELAXED);
	copy->used = committed_prefix(copy);
	return 1;
}
