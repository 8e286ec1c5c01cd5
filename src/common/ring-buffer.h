/* SPDX-License-Identifier: MIT */
/*
 * ring-buffer.h - private to libusertp: per-CPU ring buffers in the kernel's page format.
 *
 * One region of shared memory (a memfd, so that another process can map it) holds a header,
 * then per CPU a control block and its pages:
 *
 *	region:  struct usertp__rb_region | cpu 0 area | cpu 1 area | ...
 *	cpu area: struct usertp__rb_cpu | commit[nr_pages] | lost_before[nr_pages] | pad | pages
 *	page:    u64 timestamp | u64 commit | data[4080]          (the kernel's sub-buffer)
 *
 * Everything is found by offsets from the region start, never by pointers, and a reader
 * checks every offset and length it reads: the region may have been written by another
 * process, a dead one, or a hostile one.
 *
 * Writing (lock-free, no syscall, no allocation), in one of two modes (region flag RSEQ):
 *   - rseq mode (x86-64, glibc's rseq area, a buffer for every CPU): the restartable
 *     sequence of usertp__rb_rseq_try_reserve() reserves on the CPU the thread runs on with
 *     plain loads and stores, the entry's pending header written before one 16-byte store
 *     moves {pos, last_ts}; the kernel restarts it if the thread is preempted, migrated or
 *     signalled in between, so only threads of that CPU ever move its position (the opener
 *     of a page publishes it from OPENING, which nobody else moves, with a plain store);
 *   - CAS mode (anything else, ThreadSanitizer builds, USERTP_RSEQ=0): the CPU comes from the
 *     rseq area or sched_getcpu() (a thread may be preempted or migrate while writing:
 *     several writers can then share one CPU's buffer, which is correct, only rarer and
 *     slower), and a 16-byte compare-and-exchange moves {pos, last_ts} together;
 *   - pos is the logical byte position (page_no * 4096 + offset), last_ts the time of the
 *     event before.  Taking the time inside the sequence (or the CAS loop) keeps timestamps
 *     in buffer order: never backwards on a CPU;
 *   - events are laid out as the kernel lays them out (usertp__kpage_record_header()):
 *     4-byte aligned, a header word alone before a payload of up to 112 bytes, else a header
 *     word of type_len 0 and a length word (CAS mode always takes that long form: its commit
 *     needs the length).  An entry is written pending, with bit 31 of the word just before
 *     its payload set (USERTP_RB_PENDING): the header word's (the delta's top bit, left clear
 *     by the deltas a pending entry takes, below 2^26) or the length word's.  It is committed
 *     by one byte store that clears that bit (usertp__rb_commit_entry()), after the payload's:
 *     the type, the length and the delta are final from the start.  Readers of live pages
 *     (usertp__rb_live_entry()) skip pending entries, or stop at them; a copy of a page whose
 *     writer died has them made padding (usertp__rb_page_settle()) before anything else
 *     reads it.  An event's delta is never 0 (a header word of zeros is where a page's entries
 *     end): timestamps strictly increase on each CPU (a clock reading equal to or behind the
 *     CPU's last timestamp is taken as one tick after it), the first event of a page is one
 *     tick after the page's timestamp, and an event after a time extend is one tick after
 *     it;
 *   - a page is opened in steps (open_page(), ring-buffer.c): claimed (rseq mode: the word
 *     after the last entry of the page left cleared at once), zeroed in CAS mode (zeros read
 *     as the kernel's end-of-page entry: either way, bytes of the slot's earlier use are
 *     never taken for events), given its header, the page before it sealed, and only then
 *     made writable;
 *   - page completeness.  CAS mode: commit[slot] counts, cumulatively over all uses of that
 *     page slot, the bytes committed (low 32 bits) and the events (high 32 bits); a page is
 *     complete when its slot's byte count reaches (use + 1) * 4080 (the writer that leaves a
 *     page adds its unused tail).  rseq mode, no per-event counter: a page is complete when
 *     walking it finds no pending entry (every reserved entry has its header before pos
 *     covers it, and the sequence that leaves a page clears the word after its last entry),
 *     and the events of a page whose slot is reused are added to `retired`.  A slot is
 *     reused only once its previous page is complete, so a writer that is slow (or dead) can
 *     never have its bytes overwritten by another.  Entries take 8 bytes at least, so fewer
 *     left at a page's end are past its entries.
 *
 * Modes: overwrite (the oldest page goes), or producer/consumer (new events are dropped while
 * the consumer has not freed a page).  Lost events are counted per CPU: dropped ones in
 * `dropped`, overwritten ones as written minus what is still in the buffer.
 */
#ifndef USERTP_RING_BUFFER_H
#define USERTP_RING_BUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <usertp/compiler.h>

#include "io.h"
#include "kernel-page.h" /* each CPU's buffer is a ring of the kernel's pages */

#define USERTP_RB_MAGIC 0x42525455u /* "UTRB" */
#define USERTP_RB_VERSION 3 /* 3: the kernel's 4-byte layout and the pending bit */
/* Buffer sizes per CPU, in KiB, as users give them (rounded up to whole pages of data). */
#define USERTP_RB_DEFAULT_KB 1408u /* the kernel's buffer_size_kb */
#define USERTP_RB_MAX_KB 4194304u  /* 4 GiB */
#define USERTP_RB_POPULATE_MAX (64ul << 20) /* per CPU: faulted in at creation */
#define USERTP_RB_OVERWRITE 0x1u
#define USERTP_RB_RSEQ 0x2u /* written in rseq mode: completeness by walking pages */

struct usertp__rb_region {
	uint32_t magic;
	uint32_t version;
	uint32_t page_size;
	uint32_t nr_cpus;
	uint32_t nr_pages; /* per CPU */
	uint32_t flags;
	uint64_t size;	   /* of the whole region */
	uint64_t cpu_offset[]; /* nr_cpus entries: where each struct usertp__rb_cpu is */
};

struct usertp__rb_cpu {
	uint64_t pos;	   /* next reservation; with last_ts, changed by one 16-byte CAS */
	uint64_t last_ts;
	uint64_t read_page; /* producer/consumer: pages below it are consumed */
	uint64_t dropped;   /* events not recorded (full, could not overwrite, too big) */
	uint64_t lost_pending; /* dropped since the last page was opened */
	uint64_t pages_offset; /* from the region start */
	uint64_t retired;   /* rseq mode: events of pages whose slot was taken for a newer page */
	uint64_t reader_wait; /* set by a consumer about to sleep: wake it past the watermark */
	uint64_t commit[];  /* nr_pages entries, then lost_before[nr_pages] */
} __attribute__((aligned(64)));

/*
 * What a writer needs of one CPU, in process memory (never read from the shared region, so a
 * hostile region cannot send a writer outside its own pages): its control block, and its
 * newest page.  The opener of a page sets page before it makes the page writable, so a
 * writer that reads it *after* an open position (and, in CAS mode, reserves with a
 * compare-and-exchange of that position) gets the one of that position's page (in rseq mode
 * the opener may publish from another CPU: read before the position, page could be the
 * previous one).  32 bytes: indexed by a shift (rb-rseq-x86_64.S relies on the layout).
 */
struct usertp__rb_wcpu {
	struct usertp__rb_cpu *c;
	unsigned char *page;
	uint64_t pad[2];
};

/* The writer's process-local view: pointers computed once from the region. */
struct usertp__rb {
	struct usertp__rb_region *region;
	size_t size;
	int fd; /* the memfd, for other processes (its identity: fd_id) */
	unsigned int nr_cpus, nr_pages;
	bool overwrite;
	bool rseq; /* written in rseq mode (see the top of this file) */
	struct usertp__rb_cpu **cpus;
	unsigned char **pages; /* per CPU, the first page */
	struct usertp__rb_wcpu *w;
	/* CAS mode: for each 4 KiB of the region, the commit counter of the page slot there */
	uint64_t **slot_commit;
	/*
	 * Producer/consumer mode: the consumer's wake socket (-1: none), sent a word when a page opens with usertp__rb_wake_pages() or more
	 * unconsumed and the consumer said it waits (reader_wait), as the kernel wakes
	 * trace_pipe_raw readers: once per wait, not per event.  wake_id is checked before each
	 * send: the program may have closed it (a socket's inode is its own; every eventfd has
	 * the same one).  Both may be replaced while writers read them (usertp__rb_set_wake_fd():
	 * a session resumed); wake_seq, odd meanwhile, tells a writer to leave them.
	 */
	int wake_fd;
	struct usertp__fd_id wake_id;
	struct usertp__fd_id fd_id; /* fd's: closed only if still that (io.h) */
	bool populated; /* its pages faulted in (usertp__rb_populate()) */
	unsigned int wake_seq;
};


/* Clocks: CLOCK_MONOTONIC nanoseconds (the kernel's "mono"), or the raw TSC ("x86-tsc"). */
enum usertp__rb_clock { USERTP_RB_CLOCK_MONO, USERTP_RB_CLOCK_TSC };

/*
 * The buffers' settings as users give them (USERTP_BUFFER_KB and USERTP_CLOCK, usertp record
 * -b and -C, the control protocol, sessions): the one place they are read.  Each returns 0,
 * or -EINVAL with what is wrong in *why ("not a number of KiB from 1 to 4194304", ...).
 */
int usertp__rb_parse_kb(const char *text, unsigned long *kb, const char **why);
int usertp__rb_parse_clock(const char *text, enum usertp__rb_clock *clock, const char **why);
const char *usertp__rb_clock_name(enum usertp__rb_clock clock);

/**
 * usertp__rb_create() - allocate buffers of @kb KiB of data per CPU (rounded up to whole
 * pages, as the kernel does) for @nr_cpus CPUs.
 * Return: 0 or a negative errno.
 */
int usertp__rb_create(struct usertp__rb *rb, unsigned int nr_cpus, unsigned long kb, bool overwrite);
/*
 * usertp__rb_create_sparse() - the same, but only the headers' pages are in memory: the data
 * pages take no memory until usertp__rb_populate() (or the writers' first touch).  For a
 * session that may never record (a mount's instance with nothing enabled: every program that
 * starts joins it), which must cost a starting program next to nothing.
 */
int usertp__rb_create_sparse(struct usertp__rb *rb, unsigned int nr_cpus, unsigned long kb,
			     bool overwrite);
/*
 * usertp__rb_populate() - fault in the data pages (up to USERTP_RB_POPULATE_MAX per CPU),
 * without changing what they hold, so that the writers meet no page fault: before the first
 * event is enabled.  Once; later calls return at once.
 */
void usertp__rb_populate(struct usertp__rb *rb);
void usertp__rb_destroy(struct usertp__rb *rb);

extern enum usertp__rb_clock usertp__rb_clock_id;

/* Largest payload one event can have. */
#define USERTP_RB_MAX_PAYLOAD (USERTP__KPAGE_DATA - 8u)

/*
 * The writer's fast paths.  usertp__rb_this_cpu(): the CPU the calling thread runs on (may be
 * stale by the time it is used: that is fine).
 */
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

/*
 * Where the calling thread's CPU number is, as an offset from the thread pointer (the same
 * for every thread): the cpu_id of the rseq area that glibc (2.35 and later) registers per
 * thread, or, without rseq (older glibc, valgrind), a thread-local -1 that sends
 * usertp__rb_this_cpu() to sched_getcpu(), whose answer it then keeps until the thread opens
 * a page or meets another writer (usertp__rb_cpu_stale()): a CPU's buffer is only where a
 * thread writes, so an old answer costs nothing but contention, and sched_getcpu() costs a
 * system call where there is no vDSO (valgrind).  Set by usertp__rb_create(), so that finding
 * the CPU is one load.
 */
extern ptrdiff_t usertp__rb_cpu_offset;
/* glibc's __rseq_offset, or 0 when the process has no rseq area (set with the above). */
extern ptrdiff_t usertp__rb_rseq_offset;

/* Slow paths of the writer, out of line (ring-buffer.c). */
int usertp__rb_getcpu(void);
void usertp__rb_cpu_stale(void);
bool usertp__rb_wait_opened(struct usertp__rb_cpu *c, uint64_t pos);
#define USERTP_RB_RETRY ((void *)1)

/*
 * Offsets within a page that are not a place to write:
 *   0	no page opened yet (pos is 0);
 *   1	a writer is opening the page (zeroing it): others wait a little (spinning, then
 *	yielding), then write into another CPU's buffer (CAS mode) or drop their event,
 *	counted (rseq mode);
 *   FULL	the page was closed early, the next page being unavailable: nothing fits;
 *   EXACT	the last event ended exactly at the end of the page (pos cannot say "offset
 *	4096", which would be the next page's start).
 */
#define USERTP_RB_OFF_OPENING 1u
#define USERTP_RB_OFF_FULL (USERTP__KPAGE_SIZE - 8u)
#define USERTP_RB_OFF_EXACT (USERTP__KPAGE_SIZE - 1u)

/* The position after an event that ends at @end bytes into page @page. */
static inline uint64_t usertp__rb_pos_after(uint64_t page, uint32_t end)
{
	return page * USERTP__KPAGE_SIZE + (end == USERTP__KPAGE_SIZE ? USERTP_RB_OFF_EXACT : end);
}

/* Bytes of entries on a page whose position offset is @off (a page being written). */
static inline uint32_t usertp__rb_used(uint32_t off)
{
	if (off == USERTP_RB_OFF_EXACT)
		return USERTP__KPAGE_DATA;
	return off >= USERTP__KPAGE_HEADER && off <= USERTP__KPAGE_SIZE ? off - USERTP__KPAGE_HEADER
								    : 0;
}

static inline unsigned int usertp__rb_this_cpu(const struct usertp__rb *rb)
{
	ptrdiff_t off = __atomic_load_n(&usertp__rb_cpu_offset, __ATOMIC_RELAXED);
	int cpu = __atomic_load_n((const int *)((const char *)__builtin_thread_pointer() + off),
				  __ATOMIC_RELAXED);

	if (usertp_unlikely(cpu < 0))
		cpu = usertp__rb_getcpu();
	return (unsigned int)cpu < rb->nr_cpus ? (unsigned int)cpu : (unsigned int)cpu % rb->nr_cpus;
}

static inline uint64_t usertp__rb_clock_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t usertp__rb_clock_tsc(void)
{
#if defined(__x86_64__)
	return __rdtsc();
#else
	return usertp__rb_clock_mono();
#endif
}

static inline uint64_t usertp__rb_clock(void)
{
#if defined(__x86_64__)
	if (__atomic_load_n(&usertp__rb_clock_id, __ATOMIC_RELAXED) == USERTP_RB_CLOCK_TSC)
		return __rdtsc();
#endif
	return usertp__rb_clock_mono();
}

typedef unsigned __int128 __attribute__((may_alias)) usertp__rb_u128;

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#endif

/*
 * Move {pos, last_ts} from {pos0, ts0} to {pos1, ts1} at once.  ThreadSanitizer does not see
 * inline assembly: its builds say what the instruction does (acquire and release on pos).
 * (Its own 16-byte atomics take a global lock, which a fork() can leave held in the child.)
 */
static inline bool usertp__rb_cas_pos(struct usertp__rb_cpu *c, uint64_t pos0, uint64_t ts0,
				     uint64_t pos1, uint64_t ts1)
{
#if defined(__x86_64__)
	bool ok;

#if defined(__SANITIZE_THREAD__)
	__tsan_release(&c->pos);
#endif
	__asm__ __volatile__("lock cmpxchg16b %1"
			     : "=@ccz"(ok), "+m"(*(volatile usertp__rb_u128 *)&c->pos), "+a"(pos0),
			       "+d"(ts0)
			     : "b"(pos1), "c"(ts1)
			     : "memory");
#if defined(__SANITIZE_THREAD__)
	__tsan_acquire(&c->pos);
#endif
	return ok;
#else
	unsigned __int128 old = ((unsigned __int128)ts0 << 64) | pos0;
	unsigned __int128 new = ((unsigned __int128)ts1 << 64) | pos1;

	return __sync_bool_compare_and_swap((usertp__rb_u128 *)&c->pos, old, new);
#endif
}

static inline void usertp__rb_drop(struct usertp__rb_cpu *c)
{
	__atomic_fetch_add(&c->dropped, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->lost_pending, 1, __ATOMIC_RELAXED);
}

/*
 * The pending flag: bit 31 of the word before an entry's payload (see the top of this file).
 * A pending entry's delta is below USERTP_RB_DELTA_LIMIT, so that the flag is not one of its
 * bits; a longer gap takes a time extend.
 */
#define USERTP_RB_PENDING 0x80000000u
#define USERTP_RB_DELTA_LIMIT (1u << (USERTP__KPAGE_DELTA_BITS - 1))

/*
 * The entry of an event of @size bytes of payload, being written: its bytes (*total), where
 * its payload starts in it (the return: 4 or 8) and its first 8 bytes without the delta
 * (*pending: the header word, and the length word or the payload's first bytes, flagged
 * pending).  The short form only when @short_ok (rseq mode).
 */
static inline uint32_t usertp__rb_entry_shape(size_t size, bool short_ok, uint32_t *total,
					      uint64_t *pending)
{
	uint32_t len, hdr = usertp__kpage_record_header((uint32_t)size, &len);

	if (hdr == 4 && short_ok) {
		*pending = (len / 4) | USERTP_RB_PENDING;
	} else {
		hdr = 8;
		*pending = (uint64_t)((len + 4) | USERTP_RB_PENDING) << 32;
	}
	*total = hdr + len;
	return hdr;
}

/* The pending entry's first 8 bytes, @delta (1 <= delta < USERTP_RB_DELTA_LIMIT) after the one
 * before. */
static inline uint64_t usertp__rb_pending_header(uint64_t pending, uint64_t delta)
{
	return pending | delta << 5;
}

/*
 * CAS mode: the long form's two words, written after the position covers them (a reader
 * bounded by the position may find them zero, the end of the entries, meanwhile): the
 * length first, so that a reader that sees the header word sees the length too.
 */
static inline void usertp__rb_put_header(unsigned char *entry, uint64_t header)
{
	__atomic_store_n((uint32_t *)(entry + 4), (uint32_t)(header >> 32), __ATOMIC_RELAXED);
	__atomic_store_n((uint32_t *)entry, (uint32_t)header, __ATOMIC_RELEASE);
}

/* The general writer, out of line. */
void *usertp__rb_reserve_slow(struct usertp__rb *rb, unsigned int cpu, size_t size);

/*
 * CAS mode, the common case, inline: the event fits on the open page, needs no time extend,
 * and the compare-and-exchange succeeds at the first try.  @ts is the clock, read by the
 * caller (first, so that fewer values are live across clock_gettime()).  Return: where to
 * write the payload, or NULL with nothing done: anything else (a page to open, a clock behind
 * the last event or far ahead of it, another writer moving first, an event too big) is for
 * usertp__rb_reserve_slow().
 */
static inline void *usertp__rb_try_reserve(struct usertp__rb *rb, unsigned int cpu, size_t size,
					  uint64_t ts)
{
	const struct usertp__rb_wcpu *w = &rb->w[cpu];
	struct usertp__rb_cpu *c = w->c;
	uint64_t pos, last, delta, pending;
	unsigned char *page;
	uint32_t total, off;

	if (usertp_unlikely(size > USERTP_RB_MAX_PAYLOAD))
		return NULL;
	usertp__rb_entry_shape(size, false, &total, &pending); /* the long form */
	pos = __atomic_load_n(&c->pos, __ATOMIC_ACQUIRE);
	last = __atomic_load_n(&c->last_ts, __ATOMIC_RELAXED);
	page = __atomic_load_n(&w->page, __ATOMIC_RELAXED);
	/* 1 <= delta < the limit; a clock equal to last gives 0, one behind it a huge delta. */
	delta = ts - last;
	if (usertp_unlikely(delta - 1 >= USERTP_RB_DELTA_LIMIT - 1))
		return NULL;
	/* The header <= off and off + total <= the page's end, in one unsigned comparison. */
	off = (uint32_t)(pos % USERTP__KPAGE_SIZE);
	if (usertp_unlikely(off - USERTP__KPAGE_HEADER > USERTP__KPAGE_DATA - total))
		return NULL;
	/* usertp__rb_pos_after(): an exact fit ends at OFF_EXACT, one byte short of the page. */
	if (usertp_unlikely(!usertp__rb_cas_pos(c, pos, last,
					       pos + total - (off + total == USERTP__KPAGE_SIZE), ts))) {
		usertp__rb_cpu_stale(); /* another writer on this buffer: maybe ours is stale */
		return NULL;
	}
	page += off;
	usertp__rb_put_header(page, usertp__rb_pending_header(pending, delta));
	return page + 8;
}

/*
 * rseq mode: usertp__rb_rseq_reserve_tsc() and usertp__rb_rseq_reserve_at() (rb-rseq-x86_64.S)
 * reserve @size bytes on the CPU the thread runs on, in a restartable sequence (the kernel's
 * rseq(2); glibc registers the area, with the x86 signature 0x53053053): between its start
 * and its last instruction the kernel moves the thread to the abort handler (which starts
 * again) if it is preempted, migrated or interrupted by a signal; so, with plain loads and
 * stores, it reads cpu_id, that CPU's {pos, last_ts} and newest page, the clock (TSC: rdtsc
 * inside, so that events of one CPU are in clock order; _at: @ts, read by the caller before),
 * checks that the event fits and needs no time extend, writes the entry's pending header,
 * and moves {pos, last_ts} with one 16-byte store (movdqa: it happened or it did not).  A
 * header written by an attempt that was aborted lies past pos: the next reservation there
 * overwrites it, and whoever closes the page clears it.  No locked instruction: on this
 * machine class a 16-byte compare-and-exchange costs 10-20 ns.  Anything else (another page,
 * a time extend, a clock not after last_ts, no rseq area) goes to usertp__rb_rseq_reserve_slow().
 * The payload's first 8 bytes are set to @first (the record's common header; 0 when the caller
 * writes its own).  They use only call-clobbered registers and no stack.  Return: the
 * payload, or NULL when the event was dropped (counted).
 */
#define USERTP_RB_RSEQ_SIG 0x53053053
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
#define USERTP_RB_HAVE_RSEQ 1
void *usertp__rb_rseq_reserve_tsc(struct usertp__rb *rb, size_t size, uint64_t first);
void *usertp__rb_rseq_reserve_at(struct usertp__rb *rb, size_t size, uint64_t first, uint64_t ts);
#else
#define USERTP_RB_HAVE_RSEQ 0
#endif
void *usertp__rb_rseq_reserve_slow(struct usertp__rb *rb, size_t size, uint64_t first);

/*
 * Reserve @size bytes of payload on @cpu (rseq mode: on the CPU the thread runs on, whatever
 * @cpu says); returns where to write the payload (4-byte aligned, as in the kernel), or NULL when the event is
 * dropped (counted); the event is then committed with usertp__rb_commit().
 */
static inline void *usertp__rb_reserve(struct usertp__rb *rb, unsigned int cpu, size_t size)
{
	void *p;

#if USERTP_RB_HAVE_RSEQ
	if (rb->rseq)
		return __atomic_load_n(&usertp__rb_clock_id, __ATOMIC_RELAXED) == USERTP_RB_CLOCK_TSC
			       ? usertp__rb_rseq_reserve_tsc(rb, size, 0)
			       : usertp__rb_rseq_reserve_at(rb, size, 0, usertp__rb_clock());
#endif
	p = usertp__rb_try_reserve(rb, cpu, size, usertp__rb_clock());
	return usertp_likely(p) ? p : usertp__rb_reserve_slow(rb, cpu, size);
}

/* CAS mode: the commit counter of the page slot that holds @p. */
static inline uint64_t *usertp__rb_slot_commit(const struct usertp__rb *rb, const void *p)
{
	return rb->slot_commit[(size_t)((const unsigned char *)p -
					(const unsigned char *)rb->region) /
			       USERTP__KPAGE_SIZE];
}

/* The commit proper: clear the pending flag of the event whose payload is at @payload (the
 * top byte of the word before it; one byte store, after the payload's).  All rseq mode needs. */
static inline void usertp__rb_commit_entry(void *payload)
{
	unsigned char *flag = (unsigned char *)payload - 1;

	__atomic_store_n(flag, (unsigned char)(*flag & (USERTP_RB_PENDING >> 24 ^ 0xffu)),
			 __ATOMIC_RELEASE);
}

/* Commit, and in CAS mode count the event in its page slot's counter (after the event: the
 * count is what completes a page).  CAS mode's entries are all of the long form. */
static inline void usertp__rb_commit(const struct usertp__rb *rb, void *payload)
{
	uint32_t len;

	usertp__rb_commit_entry(payload);
	if (rb->rseq)
		return;
	memcpy(&len, (unsigned char *)payload - 4, 4);
	__atomic_fetch_add(usertp__rb_slot_commit(rb, payload), (1ull << 32) + len + 4,
			   __ATOMIC_RELEASE);
}

/*
 * Reading, from a possibly hostile or half-written region.  A snapshot copies each CPU's
 * readable pages (complete ones, and the committed prefix of the others) and gives their
 * events in order.
 */
struct usertp__rb_page_copy {
	uint64_t page_no;
	uint32_t used;	       /* data bytes to parse */
	uint64_t lost_before;  /* events lost just before this page */
	unsigned char data[USERTP__KPAGE_SIZE];
};

struct usertp__rb_cpu_snapshot {
	struct usertp__rb_page_copy *pages;
	unsigned int nr_pages;
	uint64_t written;      /* events ever committed on this CPU */
	uint64_t dropped;      /* events dropped (not written) */
	uint64_t entries;      /* events in the snapshot */
	uint64_t overrun;      /* written events no longer in the buffer */
};

struct usertp__rb_snapshot {
	unsigned int nr_cpus;
	struct usertp__rb_cpu_snapshot *cpus;
};

/**
 * usertp__rb_snapshot() - copy what can be read of the region at @base, of @size bytes.
 * Return: 0, -EINVAL when the region does not hold together (nothing is read outside it),
 * -ENOMEM.
 */
int usertp__rb_snapshot(const void *base, size_t size, struct usertp__rb_snapshot *snap);
void usertp__rb_snapshot_free(struct usertp__rb_snapshot *snap);

/*
 * Consuming a producer/consumer region while it is written, from another process: a view
 * holds the region's geometry, checked once (the region can change it afterwards, the view
 * does not), and usertp__rb_consume() hands over each complete page not consumed yet, oldest
 * first, then gives its slot back to the writer.  What is left at the end (the page being
 * written) comes from usertp__rb_snapshot(), which starts at the first unconsumed page.
 */
#define USERTP_RB_VIEW_MAX_CPUS 1024
struct usertp__rb_view {
	void *base;
	size_t size;
	unsigned int nr_cpus, nr_pages;
	bool overwrite, rseq;
	uint64_t cpu_offset[USERTP_RB_VIEW_MAX_CPUS];
	uint64_t pages_offset[USERTP_RB_VIEW_MAX_CPUS];
};

/* Return: 0, or -EINVAL when the region does not hold together. */
int usertp__rb_view_init(struct usertp__rb_view *view, void *base, size_t size);
/*
 * Pass each complete page of @cpu to @fn (with its number of events), in order; stop at the
 * first non-zero return of @fn and return it.  *consumed: pages passed.  -EINVAL when the
 * region is an overwrite one or its positions are impossible.
 */
int usertp__rb_consume(const struct usertp__rb_view *view, unsigned int cpu,
		      int (*fn)(const struct usertp__rb_page_copy *page, uint64_t events, void *arg),
		      void *arg, uint64_t *consumed);

/*
 * The same without copying: the complete pages are handed over where they are (the writer does
 * not touch them until they are consumed), up to USERTP_RB_CONSUME_BATCH at a time, in order,
 * each with the end of its entries and their number, found by walking its headers.  @fn takes
 * a prefix of them: it returns how many (those are consumed; fewer than given stops the
 * round), or a negative errno (none is consumed, and that is returned).  For a consumer that
 * moves pages as they are (to a file, several in one system call): the bytes may still be
 * anything a hostile writer put there, and are checked where they are read.
 */
struct usertp__rb_page_ref {
	const unsigned char *page; /* its USERTP__KPAGE_SIZE bytes, in the region */
	uint64_t page_no;
	uint32_t used;		   /* data bytes of its entries */
	uint64_t lost_before;	   /* events lost just before it */
	uint64_t events;
};
#define USERTP_RB_CONSUME_BATCH 256u
int usertp__rb_consume_pages(const struct usertp__rb_view *view, unsigned int cpu,
			     int (*fn)(const struct usertp__rb_page_ref *pages, unsigned int n, void *arg),
			     void *arg, uint64_t *consumed);

/*
 * Copy the oldest page of @cpu not consumed yet, whether complete or being written, cut
 * before its first event still being written, without consuming it: what a reader that must
 * not wait for whole pages takes (it skips what it has seen when the page comes complete).
 * Return: 1 with *copy filled, 0 when nothing was ever written, -EINVAL as consume.
 */
int usertp__rb_peek(const struct usertp__rb_view *view, unsigned int cpu,
		   struct usertp__rb_page_copy *copy);

/*
 * The consumer's watermark: pages unconsumed (the one just opened included) at which a writer
 * wakes a consumer that waits.  A quarter of the buffer, as LTTng's consumer is woken for each
 * of its 4 sub-buffers by default (the kernel wakes trace_pipe_raw readers at half): three
 * quarters are left to hold what comes while the consumer is on its way, a stall of the
 * machine's included (bench/RESULTS.md, 2026-11-28 evening).
 */
static inline uint64_t usertp__rb_wake_pages(unsigned int nr_pages)
{
	return nr_pages / 4 ? nr_pages / 4 : 1;
}

/*
 * Use @fd (the consumer's wake socket, ours from now on, whose identity @fd_id noted as it
 * came; if it is something else now, the program's, it is left alone and the consumer not
 * woken) to wake the consumer, in place of the one before (closed if still ours); see
 * wake_fd.  One thread calls it at a time (the control thread); writers may be waking
 * meanwhile.
 */
void usertp__rb_set_wake_fd(struct usertp__rb *rb, int fd, const struct usertp__fd_id *fd_id);
/* The consumer side: ask to be woken (on every CPU of @view) before sleeping. */
void usertp__rb_wait_request(const struct usertp__rb_view *view);

/*
 * Can the machine hold buffers of @kb KiB for @nr_cpus CPUs (at most half its available
 * memory)?  Return: 0, or -ENOMEM with the reason in @why.
 */
int usertp__rb_size_check(unsigned int nr_cpus, unsigned long kb, char *why, size_t size);

/* Wait up to @ms milliseconds for events being written to be committed (async-signal-safe). */
void usertp__rb_quiesce(const struct usertp__rb *rb, unsigned int ms);

/* Zeroed memory from mmap() (async-signal-safe), and its release. */
void *usertp__rb_alloc(size_t size);
void usertp__rb_free(void *ptr);



/* --- between the writer (ring-buffer.c) and the reader (rb-reader.c) and sizing (rb-size.c) -- */

/* Bytes before a CPU's pages in its area: its struct and its pages' commit words. */
size_t usertp__rb_cpu_area_header(unsigned int nr_pages);
/* Bytes of memory the buffers of @nr_cpus CPUs of @kb KiB each take. */
uint64_t usertp__rb_bytes(unsigned int nr_cpus, unsigned long kb);
/*
 * One entry of a live page (@data: its data bytes) at @off, below @bound: the one reader of
 * the writer's entries (see the top of this file), every length checked.  Return: what it is,
 * with *@next the offset after it (EVENT, PENDING, SKIP).  END: a header word of zeros, the
 * kernel's null entry, or fewer than 8 bytes left; BAD: anything this writer does not write
 * (a hostile region), which ends the walk as END does.
 */
enum usertp__rb_entry_kind {
	USERTP_RB_ENTRY_END,
	USERTP_RB_ENTRY_EVENT,	 /* committed */
	USERTP_RB_ENTRY_PENDING, /* being written, or its writer died */
	USERTP_RB_ENTRY_SKIP,	 /* a time extend, or padding */
	USERTP_RB_ENTRY_BAD,
};

static inline enum usertp__rb_entry_kind usertp__rb_live_entry(const unsigned char *data,
							       uint32_t off, uint32_t bound,
							       uint32_t *next)
{
	uint32_t word, type, len;

	if (bound < off + 8)
		return USERTP_RB_ENTRY_END;
	word = __atomic_load_n((const uint32_t *)(data + off), __ATOMIC_ACQUIRE);
	type = word & 31;
	if (usertp_likely(type - 1 < USERTP__KPAGE_MAX_SMALL / 4)) {
		*next = off + 4 + type * 4;
		if (*next > bound)
			return USERTP_RB_ENTRY_BAD;
		return word & USERTP_RB_PENDING ? USERTP_RB_ENTRY_PENDING : USERTP_RB_ENTRY_EVENT;
	}
	if (type == USERTP__KPAGE_TYPE_TIME_EXTEND) {
		*next = off + 8;
		return USERTP_RB_ENTRY_SKIP;
	}
	if (!word || (type == USERTP__KPAGE_TYPE_PADDING && !(word >> 5)))
		return USERTP_RB_ENTRY_END;
	if (type && type != USERTP__KPAGE_TYPE_PADDING)
		return USERTP_RB_ENTRY_BAD;
	len = __atomic_load_n((const uint32_t *)(data + off + 4), __ATOMIC_ACQUIRE);
	*next = off + 4 + (len & ~USERTP_RB_PENDING);
	if ((len & ~USERTP_RB_PENDING) < 4 || len % 4 || *next > bound ||
	    (type && len & USERTP_RB_PENDING))
		return USERTP_RB_ENTRY_BAD;
	if (type)
		return USERTP_RB_ENTRY_SKIP;
	return len & USERTP_RB_PENDING ? USERTP_RB_ENTRY_PENDING : USERTP_RB_ENTRY_EVENT;
}

/*
 * rseq mode: walk the entries of a live page (@data: its data bytes) up to @bound bytes,
 * counting the committed events in *events; *end (if not NULL) the end of its entries.
 * Return: false when an entry is still being written (or its writer died).
 */
bool usertp__rb_page_walk(const unsigned char *data, uint32_t bound, uint64_t *events,
			  uint32_t *end);
/*
 * A copy of a live page (@data: its data bytes, @bound of them), made what any reader of the
 * kernel's pages reads: its pending entries made padding (their delta kept, so that the times
 * after them stay right); *@events its events.  Return: the end of its entries.
 */
uint32_t usertp__rb_page_settle(unsigned char *data, uint32_t bound, uint64_t *events);
/*
 * Whether page @p (held by its slot now) is complete; rseq mode: *events its events, and
 * *end (if not NULL) the end of its entries (CAS mode: 0, not known).
 */
bool usertp__rb_page_complete(const struct usertp__rb_cpu *c, const unsigned char *pages,
			      unsigned int nr, bool rseq, uint64_t p, uint64_t *events, uint32_t *end);

#endif /* USERTP_RING_BUFFER_H */
