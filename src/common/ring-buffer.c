/* SPDX-License-Identifier: MIT */
/*
 * ring-buffer.c - per-CPU ring buffers in the kernel's page format: the region and the
 * lock-free writer.  ring-buffer.h describes the layout and protocol; the reading side is
 * rb-reader.c, the sizing policy rb-size.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "number.h"
#include "rb-layout.h"
#include "ring-buffer.h"

USERTP_STATIC_ASSERT(offsetof(struct usertp__rb, nr_cpus) == USERTP_RB_NR_CPUS_OFFSET &&
			     offsetof(struct usertp__rb, w) == USERTP_RB_W_OFFSET &&
			     sizeof(struct usertp__rb_wcpu) == 1u << USERTP_RB_WCPU_SHIFT &&
			     offsetof(struct usertp__rb_wcpu, c) == USERTP_RB_WCPU_C &&
			     offsetof(struct usertp__rb_wcpu, page) == USERTP_RB_WCPU_PAGE &&
			     offsetof(struct usertp__rb_cpu, pos) == USERTP_RB_CPU_POS &&
			     offsetof(struct usertp__rb_cpu, last_ts) == USERTP_RB_CPU_LAST_TS,
		     "rb-layout.h describes the structures rb-rseq-x86_64.S reads");

enum usertp__rb_clock usertp__rb_clock_id = USERTP_RB_CLOCK_MONO;

/* glibc (2.35 and later) registers an rseq area per thread; its cpu_id is the current CPU. */
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));
static __thread int no_rseq_cpu __attribute__((tls_model("initial-exec"))) = -1;
ptrdiff_t usertp__rb_cpu_offset;
ptrdiff_t usertp__rb_rseq_offset;

/*
 * Is glibc's rseq area usable?  Registered by glibc, or (USERTP_RSEQ=1 only) holding a valid
 * cpu_id although glibc could not register it: a stand-in that a measurement harness wrote
 * there, under valgrind, which has no rseq(2), so that callgrind can count the instructions
 * of the rseq writer (bench/bench-tracepoint.c; its threads never share a CPU number).
 */
/* USERTP_RSEQ: "0", "1", or NULL; anything else is said once and ignored. */
static const char *rseq_setting(void)
{
	static bool said;
	const char *env = secure_getenv("USERTP_RSEQ");

	if (!env || !strcmp(env, "0") || !strcmp(env, "1"))
		return env;
	if (!__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
		fprintf(stderr, "usertp: USERTP_RSEQ=%s: not 0 or 1; ignored\n", env);
	return NULL;
}

static bool rseq_area_usable(void)
{
	const char *env = rseq_setting();

	if (!&__rseq_offset)
		return false;
	if (&__rseq_size && __rseq_size >= 20)
		return true;
	return env && !strcmp(env, "1") &&
	       *(const int *)((const char *)__builtin_thread_pointer() + __rseq_offset + 4) >= 0;
}

static void cpu_offset_init(void)
{
	ptrdiff_t off = (const char *)&no_rseq_cpu - (const char *)__builtin_thread_pointer();
	ptrdiff_t rseq = 0;

	/* struct rseq: u32 cpu_id_start, u32 cpu_id, u64 rseq_cs, u32 flags (20 bytes). */
	if (rseq_area_usable()) {
		rseq = __rseq_offset;
		off = rseq + 4;
	}
	__atomic_store_n(&usertp__rb_rseq_offset, rseq, __ATOMIC_RELAXED);
	__atomic_store_n(&usertp__rb_cpu_offset, off, __ATOMIC_RELAXED);
}

/* The cpu_id of the calling thread's rseq area (negative: not registered). */
static int rseq_cpu(void)
{
	return __atomic_load_n((const int *)((const char *)__builtin_thread_pointer() +
					     usertp__rb_rseq_offset + 4),
			       __ATOMIC_RELAXED);
}

/*
 * rseq mode for a new buffer: this build can (x86-64, not ThreadSanitizer, which does not
 * see what the restartable sequences do), glibc registered an rseq area for this thread,
 * every CPU has a buffer of its own (several CPUs sharing one would write it concurrently:
 * a restartable sequence only excludes the other threads of its CPU), and USERTP_RSEQ is not
 * 0.  USERTP_RSEQ=1 takes rseq mode even with fewer buffers than CPUs: events of a CPU with
 * no buffer are then dropped (counted), which is for tests pinned to CPU 0 (they run both
 * writers on one machine with these two settings).
 */
static bool rseq_wanted(unsigned int nr_cpus)
{
	const char *env = rseq_setting();

	if (!USERTP_RB_HAVE_RSEQ || !usertp__rb_rseq_offset || (env && !strcmp(env, "0")) ||
	    rseq_cpu() < 0)
		return false;
	return (env && !strcmp(env, "1")) || (int)nr_cpus >= get_nprocs_conf();
}

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

size_t usertp__rb_cpu_area_header(unsigned int nr_pages)
{
	return round_up(sizeof(struct usertp__rb_cpu) + 2 * (size_t)nr_pages * sizeof(uint64_t),
			USERTP__KPAGE_SIZE);
}

uint64_t usertp__rb_bytes(unsigned int nr_cpus, unsigned long kb)
{
	uint64_t pages = ((uint64_t)kb * 1024 + USERTP__KPAGE_DATA - 1) / USERTP__KPAGE_DATA;

	return (uint64_t)nr_cpus * (pages < 2 ? 2 : pages) * USERTP__KPAGE_SIZE;
}

static int rb_create(struct usertp__rb *rb, unsigned int nr_cpus, unsigned long kb, bool overwrite,
		     bool populate_now)
{
	size_t header, area, size;
	unsigned int nr_pages, i;
	unsigned char *base;
	int fd, populate;

	memset(rb, 0, sizeof(*rb));
	rb->fd = -1;
	rb->wake_fd = -1;
	cpu_offset_init();
	if (!nr_cpus || nr_cpus > 4096 || !kb || kb > (1ul << 30))
		return -EINVAL;
	/* Whole pages of 4080 data bytes, as the kernel rounds buffer_size_kb. */
	nr_pages = (unsigned int)((kb * 1024 + USERTP__KPAGE_DATA - 1) / USERTP__KPAGE_DATA);
	if (nr_pages < 2)
		nr_pages = 2;
	if (nr_pages > (1u << 24))
		return -EINVAL;
	header = round_up(sizeof(struct usertp__rb_region) + nr_cpus * sizeof(uint64_t),
			  USERTP__KPAGE_SIZE);
	area = usertp__rb_cpu_area_header(nr_pages) + (size_t)nr_pages * USERTP__KPAGE_SIZE;
	size = header + (size_t)nr_cpus * area;

	/*
	 * Populated now: no page fault on the writers' path later.  Up to USERTP_RB_POPULATE_MAX
	 * per CPU: populating takes about 3 s per GiB here, which a program would wait for at
	 * start; beyond that, pages are faulted in as the writers first reach them.  A sparse
	 * region's data pages wait for usertp__rb_populate().
	 */
	populate = populate_now && area <= USERTP_RB_POPULATE_MAX ? MAP_POPULATE : 0;
	/*
	 * Sealed at its size: a consumer that maps it (root's, for every user) must never see it
	 * shrink under it (SIGBUS), so it maps only regions sealed so (session.c).
	 */
	fd = memfd_create("usertp-buffers", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd >= 0 && ftruncate(fd, (off_t)size) == 0 &&
	    !fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | populate, fd, 0);
	else
		base = MAP_FAILED;
	if (base == MAP_FAILED) {
		/* No memfd (old kernel, seccomp): still record, only nobody else can map it. */
		if (fd >= 0)
			close(fd);
		fd = -1;
		base = mmap(NULL, size, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS | populate, -1, 0);
		if (base == MAP_FAILED)
			return -ENOMEM;
	}
#ifdef MADV_POPULATE_WRITE
	for (i = 0; !populate && i < nr_cpus; i++)
		(void)!madvise(base + header + i * area,
			       populate_now ? USERTP_RB_POPULATE_MAX : usertp__rb_cpu_area_header(nr_pages),
			       MADV_POPULATE_WRITE);
	if (!populate)
		(void)!madvise(base, header, MADV_POPULATE_WRITE);
#endif
	rb->rseq = rseq_wanted(nr_cpus);
	rb->cpus = calloc(nr_cpus, sizeof(*rb->cpus));
	rb->pages = calloc(nr_cpus, sizeof(*rb->pages));
	rb->w = aligned_alloc(64, round_up(nr_cpus * sizeof(*rb->w), 64));
	if (!rb->rseq)
		rb->slot_commit = calloc(size / USERTP__KPAGE_SIZE, sizeof(*rb->slot_commit));
	if (!rb->cpus || !rb->pages || !rb->w || (!rb->rseq && !rb->slot_commit)) {
		free(rb->cpus);
		free(rb->pages);
		free(rb->w);
		free(rb->slot_commit);
		munmap(base, size);
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	rb->region = (struct usertp__rb_region *)base;
	rb->size = size;
	rb->fd = fd;
	(void)usertp__fd_id_get(fd, S_IFREG, &rb->fd_id); /* (a memfd; else never passed) */
	rb->nr_cpus = nr_cpus;
	rb->nr_pages = nr_pages;
	rb->overwrite = overwrite;
	rb->region->page_size = USERTP__KPAGE_SIZE;
	rb->region->nr_cpus = nr_cpus;
	rb->region->nr_pages = nr_pages;
	rb->region->flags = (overwrite ? USERTP_RB_OVERWRITE : 0) | (rb->rseq ? USERTP_RB_RSEQ : 0);
	rb->region->size = size;
	for (i = 0; i < nr_cpus; i++) {
		size_t off = header + i * area;

		rb->region->cpu_offset[i] = off;
		rb->cpus[i] = (struct usertp__rb_cpu *)(base + off);
		rb->cpus[i]->pages_offset = off + usertp__rb_cpu_area_header(nr_pages);
		rb->pages[i] = base + rb->cpus[i]->pages_offset;
		rb->w[i] = (struct usertp__rb_wcpu){ rb->cpus[i], rb->pages[i], { 0, 0 } };
		if (rb->slot_commit) {
			size_t first = rb->cpus[i]->pages_offset / USERTP__KPAGE_SIZE;
			unsigned int k;

			for (k = 0; k < nr_pages; k++)
				rb->slot_commit[first + k] = &rb->cpus[i]->commit[k];
		}
	}
	rb->region->version = USERTP_RB_VERSION;
	rb->populated = populate_now;
	__atomic_store_n(&rb->region->magic, USERTP_RB_MAGIC, __ATOMIC_RELEASE);
	return 0;
}

int usertp__rb_create(struct usertp__rb *rb, unsigned int nr_cpus, unsigned long kb, bool overwrite)
{
	return rb_create(rb, nr_cpus, kb, overwrite, true);
}

int usertp__rb_create_sparse(struct usertp__rb *rb, unsigned int nr_cpus, unsigned long kb,
			     bool overwrite)
{
	return rb_create(rb, nr_cpus, kb, overwrite, false);
}

void usertp__rb_populate(struct usertp__rb *rb)
{
	if (!rb->region || rb->populated)
		return;
	rb->populated = true;
#ifdef MADV_POPULATE_WRITE
	for (unsigned int i = 0; i < rb->nr_cpus; i++) {
		size_t pages = (size_t)rb->nr_pages * USERTP__KPAGE_SIZE;

		(void)!madvise(rb->pages[i], pages < USERTP_RB_POPULATE_MAX ? pages
									: USERTP_RB_POPULATE_MAX,
			       MADV_POPULATE_WRITE);
	}
#endif
}

void usertp__rb_destroy(struct usertp__rb *rb)
{
	if (rb->region)
		munmap(rb->region, rb->size);
	/* (Each closed only if still ours: the program may have closed it and reused the number.) */
	if (rb->fd >= 0)
		usertp__fd_close_if(rb->fd, &rb->fd_id);
	if (rb->wake_fd >= 0)
		usertp__fd_close_if(rb->wake_fd, &rb->wake_id);
	free(rb->cpus);
	free(rb->pages);
	free(rb->w);
	free(rb->slot_commit);
	memset(rb, 0, sizeof(*rb));
	rb->fd = -1;
	rb->wake_fd = -1;
}

int usertp__rb_getcpu(void)
{
	int cpu = sched_getcpu();

	if (cpu < 0)
		cpu = 0;
	/* Without rseq, usertp__rb_this_cpu() reads this until usertp__rb_cpu_stale(). */
	if (!usertp__rb_rseq_offset)
		no_rseq_cpu = cpu;
	return cpu;
}

void usertp__rb_cpu_stale(void)
{
	no_rseq_cpu = -1;
}

/*
 * Another writer is opening a page of this CPU: it runs on another CPU now (spin a little),
 * or it was preempted on this one (yield, so that it can finish), or we are a signal handler
 * that interrupted it (it cannot finish before we return: give up).  A rare, bounded wait.
 * Return: true when the position moved on (try again), false to give up on this buffer.
 */
bool usertp__rb_wait_opened(struct usertp__rb_cpu *c, uint64_t pos)
{
	unsigned int i;

	for (i = 0; i < 1000 + 2000; i++) {
		if (__atomic_load_n(&c->pos, __ATOMIC_ACQUIRE) != pos)
			return true;
		if (i < 1000) {
#if defined(__x86_64__)
			__builtin_ia32_pause();
#endif
		} else {
			sched_yield();
		}
	}
	return false;
}

/* CAS mode: has the page last held by @slot's (page @p) been written completely? */
static bool slot_complete(const struct usertp__rb_cpu *c, unsigned int nr, uint64_t p)
{
	return (uint32_t)__atomic_load_n(&c->commit[p % nr], __ATOMIC_ACQUIRE) ==
	       (uint32_t)((p / nr + 1) * USERTP__KPAGE_DATA);
}

/*
 * rseq mode: a page is walked up to its first zero word: an entry has its header before the
 * position covers it, and whoever closes a page clears the word after its last entry.  It
 * stops too at anything this writer does not write (a hostile region): what follows does not
 * count, and does not hold the page up.
 */
bool usertp__rb_page_walk(const unsigned char *data, uint32_t bound, uint64_t *events, uint32_t *end)
{
	uint32_t off = 0, next = 0;
	uint64_t n = 0;
	bool complete = true;

	if (bound > USERTP__KPAGE_DATA)
		bound = USERTP__KPAGE_DATA;
	for (;;) {
		enum usertp__rb_entry_kind kind;

		/*
		 * The common case first, in few instructions (a page is walked once per use: in
		 * overwrite mode that is part of every event's cost): committed records of the
		 * short form, far enough from the bound that none can cross it.
		 */
		while (bound - off >= 4 + USERTP__KPAGE_MAX_SMALL) {
			uint32_t words = __atomic_load_n((const uint32_t *)(data + off), __ATOMIC_ACQUIRE) &
					 (USERTP_RB_PENDING | 31u);

			if (words - 1 >= USERTP__KPAGE_MAX_SMALL / 4)
				break; /* pending, the long form, or anything else */
			off += 4 + words * 4;
			n++;
		}
		kind = usertp__rb_live_entry(data, off, bound, &next);
		if (usertp_likely(kind == USERTP_RB_ENTRY_EVENT))
			n++;
		else if (kind == USERTP_RB_ENTRY_PENDING)
			complete = false;
		else if (kind != USERTP_RB_ENTRY_SKIP)
			break;
		off = next;
	}
	*events = n;
	if (end)
		*end = off;
	return complete;
}

uint32_t usertp__rb_page_settle(unsigned char *data, uint32_t bound, uint64_t *events)
{
	uint32_t off = 0, next = 0;
	uint64_t n = 0;

	if (bound > USERTP__KPAGE_DATA)
		bound = USERTP__KPAGE_DATA;
	for (;;) {
		enum usertp__rb_entry_kind kind = usertp__rb_live_entry(data, off, bound, &next);
		uint32_t word;

		if (kind == USERTP_RB_ENTRY_EVENT) {
			n++;
		} else if (kind == USERTP_RB_ENTRY_PENDING) {
			/* Padding of the same bytes and delta (the pending flag is not part of it). */
			memcpy(&word, data + off, 4);
			word = usertp__kpage_entry_word(USERTP__KPAGE_TYPE_PADDING,
							(word & ~USERTP_RB_PENDING) >> 5);
			memcpy(data + off, &word, 4);
			word = next - off - 4;
			memcpy(data + off + 4, &word, 4);
		} else if (kind != USERTP_RB_ENTRY_SKIP) {
			break;
		}
		off = next;
	}
	*events = n;
	return off;
}

/*
 * Whether page @p (held by its slot now) is complete; rseq mode: *events its events, and
 * *end (if not NULL) the end of its entries (CAS mode: 0, not known).
 */
bool usertp__rb_page_complete(const struct usertp__rb_cpu *c, const unsigned char *pages,
			  unsigned int nr, bool rseq, uint64_t p, uint64_t *events, uint32_t *end)
{
	*events = 0;
	if (end)
		*end = 0;
	if (!rseq)
		return slot_complete(c, nr, p);
	return usertp__rb_page_walk(pages + (size_t)(p % nr) * USERTP__KPAGE_SIZE + USERTP__KPAGE_HEADER,
			 USERTP__KPAGE_DATA, events, end);
}

/*
 * rseq mode: the other moves of {pos, last_ts}, done like the fast path's in a restartable
 * sequence on @cpu: if the thread runs on @cpu and {pos, last_ts} is {pos0, last0}, store v1
 * at *dst1 and v2 at *dst2 (an entry's headers, or the zero that ends a page being closed),
 * then {pos1, ts1} with one store.  Return: 0 done, 1 the position moved, 2 not on @cpu.
 */
struct rseq_op {
	uint64_t pos0, last0, pos1, ts1;
	uint64_t *dst1, v1, *dst2, v2;
};

#if USERTP_RB_HAVE_RSEQ
/* The critical section's descriptor (struct rseq_cs), for labels 1 (start), 2 (end), 4. */
#define RSEQ_CS                                                                                    \
	".pushsection __rseq_cs, \"aw\"\n\t"                                                       \
	".balign 32\n\t"                                                                           \
	"3:\n\t.long 0, 0\n\t.quad 1f, 2f - 1f, 4f\n\t"                                            \
	".popsection\n\t"
#define STR_(x) #x
#define STR(x) STR_(x)
#define RSEQ_SIG ".byte 0x0f, 0xb9, 0x3d\n\t.long " STR(USERTP_RB_RSEQ_SIG) "\n\t"

static int rseq_move(unsigned int cpu, struct usertp__rb_cpu *c, const struct rseq_op *op)
{
	uint64_t tmp, tmp2;
	int ret;

	__asm__ __volatile__(RSEQ_CS
			     "0:\n\t"
			     "leaq 3b(%%rip), %[tmp]\n\t"
			     "movq %[tmp], %%fs:8(%[roff])\n\t"
			     "1:\n\t"
			     "movl $2, %[ret]\n\t"
			     "cmpl %%fs:4(%[roff]), %[cpu]\n\t"
			     "jne 5f\n\t"
			     "movl $1, %[ret]\n\t"
			     "movq (%[c]), %[tmp]\n\t"
			     "cmpq (%[op]), %[tmp]\n\t"
			     "jne 5f\n\t"
			     "movq 8(%[c]), %[tmp]\n\t"
			     "cmpq 8(%[op]), %[tmp]\n\t"
			     "jne 5f\n\t"
			     "movq 32(%[op]), %[tmp]\n\t"
			     "movq 40(%[op]), %[tmp2]\n\t"
			     "movq %[tmp2], (%[tmp])\n\t"
			     "movq 48(%[op]), %[tmp]\n\t"
			     "movq 56(%[op]), %[tmp2]\n\t"
			     "movq %[tmp2], (%[tmp])\n\t"
			     "movdqu 16(%[op]), %%xmm0\n\t"
			     "movdqa %%xmm0, (%[c])\n\t"
			     "2:\n\t"
			     "xorl %[ret], %[ret]\n\t"
			     "jmp 5f\n\t" RSEQ_SIG "4:\n\t"
			     "jmp 0b\n\t"
			     "5:\n\t"
			     : [ret] "=&r"(ret), [tmp] "=&r"(tmp), [tmp2] "=&r"(tmp2)
			     : [roff] "r"(usertp__rb_rseq_offset), [cpu] "r"(cpu), [c] "r"(c),
			       [op] "r"(op)
			     : "memory", "cc", "xmm0");
	return ret;
}
#else
static int rseq_move(unsigned int cpu, struct usertp__rb_cpu *c, const struct rseq_op *op)
{
	(void)cpu, (void)c, (void)op;
	return 2;
}
#endif

/*
 * Move {pos, last_ts} of @cpu from {pos0, last0} to {pos1, ts1}: CAS mode with the 16-byte
 * compare-and-exchange (and the caller writes the entry afterwards), rseq mode with
 * rseq_move() and the stores of @op.  Return as rseq_move().
 */
static int move_pos(const struct usertp__rb *rb, unsigned int cpu, struct rseq_op *op)
{
	struct usertp__rb_cpu *c = rb->cpus[cpu];

	if (!rb->rseq)
		return usertp__rb_cas_pos(c, op->pos0, op->last0, op->pos1, op->ts1) ? 0 : 1;
	return rseq_move(cpu, c, op);
}

/*
 * The consumer's wake descriptor and its identity, as one (wake_seq): -1 while the control
 * thread replaces them (that wake is missed; the consumer's timer stands in).
 */
static int wake_fd_load(struct usertp__rb *rb, struct usertp__fd_id *id)
{
	unsigned int seq = __atomic_load_n(&rb->wake_seq, __ATOMIC_ACQUIRE);
	int fd;

	if (seq & 1)
		return -1;
	/* (Acquire, not a fence, which ThreadSanitizer does not take: wake_seq is read after.) */
	fd = __atomic_load_n(&rb->wake_fd, __ATOMIC_ACQUIRE);
	id->dev = __atomic_load_n(&rb->wake_id.dev, __ATOMIC_ACQUIRE);
	id->ino = __atomic_load_n(&rb->wake_id.ino, __ATOMIC_ACQUIRE);
	return __atomic_load_n(&rb->wake_seq, __ATOMIC_RELAXED) == seq ? fd : -1;
}

/*
 * The consumer of @c asked to be woken: wake it, once (a page opened past the watermark, or
 * events are being dropped).  The descriptor is checked to still be the consumer's (a
 * program may close descriptors it does not know): a word anywhere else would do harm.  A
 * socket's send never blocks and never raises SIGPIPE (the consumer may be gone).
 */
static void wake_consumer(struct usertp__rb *rb, struct usertp__rb_cpu *c)
{
	static const uint64_t one = 1;
	struct usertp__fd_id id;
	int fd;

	if (!__atomic_load_n(&c->reader_wait, __ATOMIC_RELAXED) ||
	    !__atomic_exchange_n(&c->reader_wait, 0, __ATOMIC_RELAXED))
		return;
	fd = wake_fd_load(rb, &id);
	if (fd < 0 || !usertp__fd_is(fd, &id))
		return;
	(void)send(fd, &one, sizeof(one), MSG_DONTWAIT | MSG_NOSIGNAL);
}

void usertp__rb_set_wake_fd(struct usertp__rb *rb, int fd, const struct usertp__fd_id *fd_id)
{
	/* (Read plainly: this thread is the only one to write them.) */
	struct usertp__fd_id id = { 0, 0 }, old_id = rb->wake_id;
	unsigned int seq = rb->wake_seq;
	int old = rb->wake_fd;

	/* (Not ours any more: the program's, left alone.) */
	if (fd >= 0 && !usertp__fd_is(fd, fd_id))
		fd = -1;
	if (fd >= 0)
		id = *fd_id;
	/* (Release each: none is seen before wake_seq is odd.) */
	__atomic_store_n(&rb->wake_seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&rb->wake_fd, fd, __ATOMIC_RELEASE);
	__atomic_store_n(&rb->wake_id.dev, id.dev, __ATOMIC_RELEASE);
	__atomic_store_n(&rb->wake_id.ino, id.ino, __ATOMIC_RELEASE);
	__atomic_store_n(&rb->wake_seq, seq + 2, __ATOMIC_RELEASE);
	if (old >= 0)
		usertp__fd_close_if(old, &old_id);
}

void usertp__rb_wait_request(const struct usertp__rb_view *view)
{
	for (unsigned int cpu = 0; cpu < view->nr_cpus; cpu++) {
		struct usertp__rb_cpu *c = (void *)((char *)view->base + view->cpu_offset[cpu]);

		__atomic_store_n(&c->reader_wait, 1, __ATOMIC_RELAXED);
	}
}

/* The op's stores go nowhere that matters. */
static uint64_t scratch[2];

/*
 * The writer's slow path: the event does not fit on the current page (or there is none).
 * Open the next page, in two steps so that nobody writes into it before it is ready:
 *
 *	1. {pos, ts} -> {next page, OPENING}: writers arriving now drop their event (rseq mode:
 *	   the word after the last entry of the page left is cleared in the same sequence, also
 *	   when that entry ended at USERTP_RB_OFF_FULL, 8 bytes short of the page's end: that
 *	   word is the end of the page's entries for every reader);
 *	2. CAS mode: zero the page (zeros read as the kernel's end-of-page entry, so nothing
 *	   stale from the slot's previous page is ever taken for an event: its entries' headers
 *	   are written after the position covers them); write its header, hand it the
 *	   events lost meanwhile, seal the page left behind (its size, and in CAS mode its
 *	   unused tail counted as committed), write our entry's padding header;
 *	3. {next page, OPENING} -> {after our event, ts} (nobody else moves an OPENING position:
 *	   in rseq mode a plain store, from whatever CPU we run on by then).
 *
 * The slot is taken only when the page it holds is complete (CAS mode: by its counter; rseq
 * mode: by walking it, its events then counted as retired).  When it is not (or not consumed
 * without overwrite) the event is dropped, and the current page is closed (FULL) so that a
 * smaller event cannot slip in after it: what is kept stays a prefix, as in the kernel.
 *
 * Return: where the event goes (offset 16 of the new page, its pending header written), NULL
 * when dropped, USERTP_RB_RETRY when another writer moved first (or, rseq mode, we moved).
 */
static void *open_page(struct usertp__rb *rb, unsigned int cpu, uint64_t pos, uint64_t last,
		       uint64_t ts, uint32_t total, uint64_t pending)
{
	struct usertp__rb_cpu *c = rb->cpus[cpu];
	unsigned int nr = rb->nr_pages;
	uint64_t page = pos / USERTP__KPAGE_SIZE, new_page, *lost_before = c->commit + nr, retired = 0;
	uint32_t off = (uint32_t)(pos % USERTP__KPAGE_SIZE);
	unsigned char *start, *old = rb->pages[cpu] + (page % nr) * USERTP__KPAGE_SIZE;
	uint64_t hdr = usertp__rb_pending_header(pending, 1), page_ts = ts - 1;
	struct rseq_op op = { pos, last, 0, 0, scratch, 0, scratch, 0 };
	int ret;

	/* rseq mode: the word after the last entry, cleared when the page is left (at FULL too:
	 * an entry may end there, and after a page closed early those bytes are past its end). */
	if (off >= USERTP__KPAGE_HEADER && off <= USERTP_RB_OFF_FULL)
		op.dst1 = op.dst2 = (uint64_t *)(old + off);
	new_page = off == 0 ? page : page + 1;
	/* (Unconsumed first: a full buffer then drops each event without walking a page.) */
	if (new_page >= nr &&
	    ((!rb->overwrite && __atomic_load_n(&c->read_page, __ATOMIC_ACQUIRE) <= new_page - nr) ||
	     !usertp__rb_page_complete(c, rb->pages[cpu], nr, rb->rseq, new_page - nr, &retired, NULL))) {
		if (off >= USERTP__KPAGE_HEADER && off < USERTP_RB_OFF_FULL) {
			op.pos1 = page * USERTP__KPAGE_SIZE + USERTP_RB_OFF_FULL;
			op.ts1 = last;
			if (move_pos(rb, cpu, &op))
				return USERTP_RB_RETRY; /* someone moved on (or we did): look again */
			if (!rb->rseq)
				__atomic_fetch_add(&c->commit[page % nr],
						   (uint64_t)(USERTP_RB_OFF_FULL - off), __ATOMIC_RELEASE);
		} else if (__atomic_load_n(&c->pos, __ATOMIC_ACQUIRE) != pos) {
			return USERTP_RB_RETRY;
		}
		usertp__rb_drop(c);
		usertp__rb_cpu_stale();
		if (__atomic_load_n(&rb->wake_fd, __ATOMIC_RELAXED) >= 0)
			wake_consumer(rb, c);
		return NULL;
	}
	op.pos1 = new_page * USERTP__KPAGE_SIZE + USERTP_RB_OFF_OPENING;
	op.ts1 = ts;
	ret = move_pos(rb, cpu, &op);
	if (ret)
		return USERTP_RB_RETRY;

	start = rb->pages[cpu] + (new_page % nr) * USERTP__KPAGE_SIZE;
	/*
	 * CAS mode: zeros read as the end of a page's entries.  rseq mode needs none: an entry
	 * has its header before the position covers it, and the word after a page's last entry
	 * is cleared when the page is left (step 1), so no reader goes past it into stale bytes.
	 */
	if (!rb->rseq)
		memset(start + USERTP__KPAGE_HEADER, 0, USERTP__KPAGE_DATA);
	memcpy(start, &page_ts, 8); /* the event is one tick after it: see the top of ring-buffer.h */
	memset(start + 8, 0, 8);
	__atomic_store_n(&lost_before[new_page % nr],
			 __atomic_exchange_n(&c->lost_pending, 0, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
	if (off >= USERTP__KPAGE_HEADER) {
		uint64_t used = usertp__rb_used(off);

		memcpy(old + 8, &used, 8);
		if (!rb->rseq)
			__atomic_fetch_add(&c->commit[page % nr],
					   (uint64_t)(USERTP__KPAGE_DATA - used), __ATOMIC_RELEASE);
	}
	if (retired)
		__atomic_fetch_add(&c->retired, retired, __ATOMIC_RELAXED);
	/* The watermark reached, this page included: the consumer should come. */
	if (__atomic_load_n(&rb->wake_fd, __ATOMIC_RELAXED) >= 0 &&
	    new_page + 1 - __atomic_load_n(&c->read_page, __ATOMIC_RELAXED) >= usertp__rb_wake_pages(nr))
		wake_consumer(rb, c);
	if (rb->rseq)
		memcpy(start + USERTP__KPAGE_HEADER, &hdr, 8);
	else
		usertp__rb_put_header(start + USERTP__KPAGE_HEADER, hdr);
	__atomic_store_n(&rb->w[cpu].page, start, __ATOMIC_RELAXED);
	usertp__rb_cpu_stale();
	if (rb->rseq) {
		__atomic_store_n(&c->last_ts, ts, __ATOMIC_RELAXED);
		__atomic_store_n(&c->pos, usertp__rb_pos_after(new_page, USERTP__KPAGE_HEADER + total),
				 __ATOMIC_RELEASE);
	} else {
		usertp__rb_cas_pos(c, new_page * USERTP__KPAGE_SIZE + USERTP_RB_OFF_OPENING, ts,
				  usertp__rb_pos_after(new_page, USERTP__KPAGE_HEADER + total), ts);
	}
	return start + USERTP__KPAGE_HEADER;
}

/* A time extend entry of @delta. */
static uint64_t time_extend(uint64_t delta)
{
	return (uint64_t)usertp__kpage_entry_word(USERTP__KPAGE_TYPE_TIME_EXTEND,
					      delta & ((1u << USERTP__KPAGE_DELTA_BITS) - 1)) |
	       (delta >> USERTP__KPAGE_DELTA_BITS) << 32;
}

/* CAS mode: how many other CPUs' buffers a writer tries when a page opening holds it up. */
#define RB_OPENING_HOPS 3

/*
 * The general writer: any size, page opening, time extends, clock not after the last event,
 * retries after another writer moved first; in rseq mode, on the CPU the thread runs on.
 */
void *usertp__rb_reserve_slow(struct usertp__rb *rb, unsigned int cpu, size_t size)
{
	struct usertp__rb_cpu *c;
	uint64_t pos, last, ts, delta, pending;
	uint32_t total, off, ext, hdr;
	unsigned char *entry;
	struct rseq_op op;
	unsigned int hops = 0;

	for (;;) {
		if (rb->rseq) {
			int now = rseq_cpu();

			if ((unsigned int)now >= rb->nr_cpus) {
				/* No rseq area in this thread, or a CPU added since: not ours. */
				usertp__rb_drop(rb->cpus[usertp__rb_this_cpu(rb)]);
				return NULL;
			}
			cpu = (unsigned int)now;
		}
		c = rb->cpus[cpu];
		if (size > USERTP_RB_MAX_PAYLOAD) {
			usertp__rb_drop(c);
			return NULL;
		}
		hdr = usertp__rb_entry_shape(size, rb->rseq, &total, &pending);
		pos = __atomic_load_n(&c->pos, __ATOMIC_ACQUIRE);
		last = __atomic_load_n(&c->last_ts, __ATOMIC_RELAXED);
		entry = __atomic_load_n(&rb->w[cpu].page, __ATOMIC_RELAXED);
		ts = usertp__rb_clock();
		if (ts <= last)
			ts = last + 1; /* strictly after the last one: see the top of ring-buffer.h */
		off = (uint32_t)(pos % USERTP__KPAGE_SIZE);
		delta = ts - last;
		ext = delta >= USERTP_RB_DELTA_LIMIT ? 8 : 0;
		if (off < USERTP__KPAGE_HEADER || off + ext + total > USERTP__KPAGE_SIZE) {
			if (off == USERTP_RB_OFF_OPENING) {
				if (usertp__rb_wait_opened(c, pos))
					continue;
				/*
				 * CAS mode: its opener is held up (preempted, its vCPU stopped by
				 * the host, or interrupted by us, a signal handler): the event goes
				 * into the next CPU's buffer, as a thread that migrated writes
				 * (before, it was dropped: 1 job event in 400 under ThreadSanitizer
				 * and load).  rseq mode writes only its own CPU's.
				 */
				if (!rb->rseq && hops < RB_OPENING_HOPS && hops + 1 < rb->nr_cpus) {
					hops++;
					cpu = (cpu + 1) % rb->nr_cpus;
					usertp__rb_cpu_stale();
					continue;
				}
				usertp__rb_drop(c);
				return NULL;
			}
			entry = open_page(rb, cpu, pos, last, ts, total, pending);
			if (entry == USERTP_RB_RETRY)
				continue;
			return entry ? entry + hdr : NULL;
		}
		entry += off;
		/* After a time extend of delta - 1, the event is one tick later. */
		op = (struct rseq_op){ pos, last, usertp__rb_pos_after(pos / USERTP__KPAGE_SIZE, off + ext + total),
				       ts, (uint64_t *)entry, 0, (uint64_t *)(entry + ext),
				       usertp__rb_pending_header(pending, ext ? 1 : delta) };
		/* rseq mode: the headers in place before the position covers them. */
		op.v1 = ext ? time_extend(delta - 1) : op.v2;
		if (move_pos(rb, cpu, &op) == 0)
			break;
		if (!rb->rseq)
			usertp__rb_cpu_stale();
	}
	if (!rb->rseq) {
		/* CAS mode: ours now; the extend is complete at once, and counted so. */
		if (ext) {
			memcpy(entry, &op.v1, 8);
			__atomic_fetch_add(usertp__rb_slot_commit(rb, entry), (uint64_t)ext,
					   __ATOMIC_RELEASE);
		}
		usertp__rb_put_header(entry + ext, op.v2);
	}
	return entry + ext + hdr;
}

void *usertp__rb_rseq_reserve_slow(struct usertp__rb *rb, size_t size, uint64_t first)
{
	void *p = usertp__rb_reserve_slow(rb, 0, size);

	if (p && first)
		memcpy(p, &first, 8);
	return p;
}
