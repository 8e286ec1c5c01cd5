/* SPDX-License-Identifier: MIT */
/*
 * test-rb-edge.c - edge cases of the ring buffer, one per run:
 *
 *	exact-fit	events that fill pages exactly, in both modes: every event still in the
 *			buffer is in the snapshot
 *	slip		producer/consumer mode: once an event was dropped for lack of room, a
 *			smaller one must not be recorded after it (the kernel pads the page out)
 *	full-end	an event that ends 8 bytes short of its page's end (the offset a page
 *			closed early shows, USERTP_RB_OFF_FULL), over a stale word of the slot's
 *			earlier use (rseq mode does not zero the pages it opens): leaving the page
 *			must end its entries there, or readers take that word for an entry
 *	size-wrap	sizes near UINT32_MAX are refused like any other too big one
 *	commit-carry	the per-slot byte count passes 2^32 (4 GiB through one slot): the event
 *			count next to it must not change
 *	hostile-pos	a producer/consumer region whose position is far beyond its read page:
 *			the snapshot must see that it does not hold together
 *	hostile-wrap	the same, so far that the size of the page array the reader allocates
 *			wraps around 2^64 (in a child process: it must not crash)
 *	nested		another write (a signal handler's, a preempting thread's) comes between
 *			the writer's reading of the position and its compare-and-exchange: the
 *			writer retries, even when the other write opened the page it was about to
 *			open (it must not take that page's slot for a busy one and drop)
 *	full-unread	producer/consumer mode, the buffer full and nothing consumed: each event
 *			is dropped without the writer reading the page whose slot it would take
 *			(made unreadable here); the writer once walked it for every event dropped
 *	dead-reserved	the writer died after usertp__rb_reserve() or during usertp__rb_commit()
 *	dead-cas	the writer died right after the compare-and-exchange that reserved its
 *			event, before writing anything: nothing stale may be read as an event
 *	dead-open	... of an event that opened a page, before sealing the page before it
 *	stalled-open	a writer opening a page of CPU 0 is held up once it has claimed it
 *			(preempted, its vCPU stopped by the host) while another writes on CPU 0:
 *			in CAS mode that event goes into CPU 1's buffer, nothing dropped (before,
 *			it was dropped: layouts-record's static-daemon under ThreadSanitizer, 1 of
 *			400); rseq mode, which writes only its own CPU's buffer, drops it, counted
 *
 * The dead-* cases build the exact state a writer killed at that point leaves: they save the
 * bytes the reservation is going to write, reserve, and put those bytes back (test-rb-kill
 * kills real writers, but can only hit such narrow windows by chance).  That state follows
 * the current protocol: the compare-and-exchange that reserves an event comes first; one that
 * opens a page only claims it (OPENING), and the page is prepared before anyone can write.
 * In rseq mode (USERTP_RSEQ=1) the restartable sequence that reserves an event writes its
 * padding header before the position covers it, and the one that claims a page clears the
 * word after the last entry of the page it leaves: the dead states keep those.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rb-test.h"

#define TAG 0x6564u

/* Check that the CPU 0 snapshot holds exactly seqs first .. first + n - 1, intact. */
static void expect_seqs(const struct usertp__rb *rb, uint64_t first, uint64_t n)
{
	struct usertp__rb_snapshot snap;
	struct rbt_walk w;
	unsigned int bad = 0;
	size_t k;

	CHECK_INT(usertp__rb_snapshot(rb->region, rb->size, &snap), ==, 0);
	rbt_walk_cpu(&snap.cpus[0], &w);
	CHECK_INT(w.einval, ==, 0);
	CHECK_INT(w.bad_ret + w.out_of_page, ==, 0);
	CHECK_INT(w.n, ==, n);
	CHECK_INT(snap.cpus[0].entries, ==, w.n);
	for (k = 0; k < w.n; k++) {
		uint32_t tag;
		uint64_t seq;
		bool ok = payload_check(w.e[k].data, w.e[k].size, &tag, &seq);

		if (!ok || tag != TAG || seq != first + k || (k && w.e[k].ts < w.e[k - 1].ts)) {
			if (bad++ < 5)
				fprintf(stderr, "entry %zu (page %llu): %s, seq %llu, expected %llu\n", k,
					(unsigned long long)snap.cpus[0].pages[w.e[k].page].page_no,
					ok ? "intact" : "corrupt", (unsigned long long)seq,
					(unsigned long long)(first + k));
		}
	}
	CHECK_INT(bad, ==, 0);
	free(w.e);
	usertp__rb_snapshot_free(&snap);
}

static void exact_fit(void)
{
	int overwrite;

	for (overwrite = 0; overwrite <= 1; overwrite++) {
		struct usertp__rb rb;
		uint64_t seq;

		printf("overwrite=%d\n", overwrite);
		CHECK_INT(usertp__rb_create(&rb, 1, 8, overwrite), ==, 0);
		CHECK_INT(rb.nr_pages, ==, 3);
		/* 400 + 8 bytes: 10 events fill a page exactly; 30 fill the buffer. */
		for (seq = 0; seq < 30; seq++)
			CHECK(rbt_write(&rb, 0, 400, TAG, seq, NULL, NULL));
		expect_seqs(&rb, 0, 30);
		if (overwrite) {
			CHECK(rbt_write(&rb, 0, 400, TAG, 30, NULL, NULL));
			expect_seqs(&rb, 10, 21);
		} else {
			CHECK(!rbt_write(&rb, 0, 400, TAG, 30, NULL, NULL));
			expect_seqs(&rb, 0, 30);
		}
		usertp__rb_destroy(&rb);
	}
}

static void full_end(void)
{
	/* A type_len 1 entry (4 bytes of data) that fills the last 8 bytes: what a live
	 * snapshot once read there. */
	static const uint64_t stale = 0x4142434416d39741ull;
	struct usertp__rb rb;

	CHECK_INT(usertp__rb_create(&rb, 1, 8, true), ==, 0);
	/* 8 + 4064 bytes from offset 16: the event ends at 4088. */
	CHECK(rbt_write(&rb, 0, 4064, TAG, 0, NULL, NULL));
	CHECK_INT(rb.cpus[0]->pos % USERTP__KPAGE_SIZE, ==, USERTP_RB_OFF_FULL);
	/* Only rseq mode can have stale bytes there: CAS mode zeroes the page it opens. */
	if (rb.rseq)
		memcpy(rb.pages[0] + USERTP_RB_OFF_FULL, &stale, 8);
	CHECK(rbt_write(&rb, 0, 64, TAG, 1, NULL, NULL));
	CHECK_INT(rb.cpus[0]->pos / USERTP__KPAGE_SIZE, ==, 1);
	expect_seqs(&rb, 0, 2);
	usertp__rb_destroy(&rb);
}

static void slip(void)
{
	struct usertp__rb rb;
	uint64_t seq;
	uint32_t per_page;

	CHECK_INT(usertp__rb_create(&rb, 1, 8, false), ==, 0);
	/* 92-byte events: 42 a page in rseq mode (96 bytes each), 40 in CAS mode (100 bytes):
	 * 48 or 80 bytes left at the end of each page, room for a 24-byte event. */
	per_page = USERTP__KPAGE_DATA / rbt_entry_bytes(&rb, 92);
	CHECK_INT(USERTP__KPAGE_DATA - per_page * rbt_entry_bytes(&rb, 92), >=,
		  rbt_entry_bytes(&rb, 24));
	for (seq = 0; seq < 3 * per_page; seq++)
		CHECK(rbt_write(&rb, 0, 92, TAG, seq, NULL, NULL));
	CHECK(!rbt_write(&rb, 0, 92, TAG, seq, NULL, NULL));	  /* full */
	CHECK(!rbt_write(&rb, 0, 24, TAG, seq + 1, NULL, NULL)); /* would fit in what is left */
	CHECK_INT(rb.cpus[0]->dropped, ==, 2);
	expect_seqs(&rb, 0, 3 * per_page);
	usertp__rb_destroy(&rb);
}

static void full_unread(void)
{
	struct usertp__rb rb;
	uint64_t seq = 0;
	unsigned char *slot;

	CHECK_INT(usertp__rb_create(&rb, 1, 8, false), ==, 0);
	while (rbt_write(&rb, 0, 92, TAG, seq, NULL, NULL))
		seq++;
	/* The slot the next page would take: the oldest page, which nobody has read yet. */
	slot = rb.pages[0] + (rb.cpus[0]->pos / USERTP__KPAGE_SIZE + 1) % rb.nr_pages * USERTP__KPAGE_SIZE;
	CHECK_INT((uintptr_t)slot % (uintptr_t)sysconf(_SC_PAGESIZE), ==, 0);
	CHECK_INT(mprotect(slot, USERTP__KPAGE_SIZE, PROT_NONE), ==, 0);
	for (uint64_t i = 1; i <= 100; i++)
		CHECK(!rbt_write(&rb, 0, 92, TAG, seq + i, NULL, NULL));
	CHECK_INT(rb.cpus[0]->dropped, ==, 101);
	CHECK_INT(mprotect(slot, USERTP__KPAGE_SIZE, PROT_READ | PROT_WRITE), ==, 0);
	expect_seqs(&rb, 0, seq);
	usertp__rb_destroy(&rb);
}

static void size_wrap(void)
{
	static const uint32_t sizes[] = { UINT32_MAX, UINT32_MAX - 6, UINT32_MAX - 7 };
	struct usertp__rb rb;
	unsigned int i;

	CHECK_INT(usertp__rb_create(&rb, 1, 64, false), ==, 0);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		void *p = usertp__rb_reserve(&rb, 0, sizes[i]);

		if (p) {
			fprintf(stderr, "size %#x: reserved\n", sizes[i]);
			usertp__rb_commit(&rb, p);
		}
		CHECK(!p);
	}
	CHECK_INT(rb.cpus[0]->dropped, ==, 3);
	expect_seqs(&rb, 0, 0);
	usertp__rb_destroy(&rb);
}

static void commit_carry(void)
{
	/* Pages of one max-size event: 2^32 / 4080 + 1 uses of each of the 2 slots. */
	const uint64_t n = 2 * ((1ull << 32) / USERTP__KPAGE_DATA + 1) + 10;
	struct usertp__rb_snapshot snap;
	struct usertp__rb rb;
	uint64_t i, fail = 0;

	CHECK_INT(usertp__rb_create(&rb, 1, 1, true), ==, 0);
	CHECK_INT(rb.nr_pages, ==, 2);
	for (i = 0; i < n; i++) {
		unsigned char *p = usertp__rb_reserve(&rb, 0, USERTP_RB_MAX_PAYLOAD);

		if (!p) {
			fail++;
			continue;
		}
		memcpy(p, &i, 8);
		usertp__rb_commit(&rb, p);
	}
	CHECK_INT(fail, ==, 0);
	CHECK_INT(usertp__rb_snapshot(rb.region, rb.size, &snap), ==, 0);
	CHECK_INT(snap.cpus[0].written, ==, n);
	CHECK_INT(snap.cpus[0].entries + snap.cpus[0].overrun, ==, n);
	usertp__rb_snapshot_free(&snap);
	usertp__rb_destroy(&rb);
}

static void hostile_pos(void)
{
	struct usertp__rb_snapshot snap;
	struct usertp__rb rb;
	uint64_t seq;
	int ret;

	CHECK_INT(usertp__rb_create(&rb, 1, 8, false), ==, 0);
	for (seq = 0; seq < 20; seq++)
		CHECK(rbt_write(&rb, 0, 100, TAG, seq, NULL, NULL));
	/* A writer never gets more than nr_pages pages past read_page (0 here). */
	rb.cpus[0]->pos = (1ull << 40) * USERTP__KPAGE_SIZE + 100;
	ret = usertp__rb_snapshot(rb.region, rb.size, &snap);
	if (ret == 0) {
		CHECK_INT(snap.cpus[0].nr_pages, <=, rb.nr_pages);
		usertp__rb_snapshot_free(&snap);
	} else {
		CHECK_INT(ret, ==, -EINVAL);
	}
	usertp__rb_destroy(&rb);
}

/* Write @n events of @size with seqs from *seq; all must be recorded. */
static void write_n(struct usertp__rb *rb, uint64_t n, uint32_t size, uint64_t *seq)
{
	uint64_t i, fail = 0;

	for (i = 0; i < n; i++)
		fail += !rbt_write(rb, 0, size, TAG, (*seq)++, NULL, NULL);
	CHECK_INT(fail, ==, 0);
}

/* The seq of the first entry of the CPU 0 snapshot, and how many there are. */
static uint64_t snapshot_range(const struct usertp__rb *rb, uint64_t *n)
{
	struct usertp__rb_snapshot snap;
	struct rbt_walk w;
	uint64_t seq = 0;
	uint32_t tag;

	CHECK_INT(usertp__rb_snapshot(rb->region, rb->size, &snap), ==, 0);
	rbt_walk_cpu(&snap.cpus[0], &w);
	if (w.n)
		CHECK(payload_check(w.e[0].data, w.e[0].size, &tag, &seq));
	*n = w.n;
	free(w.e);
	usertp__rb_snapshot_free(&snap);
	return seq;
}

/*
 * The writer reads the clock between reading the position and its compare-and-exchange:
 * this clock_gettime() (the test's own, which the inline writer calls) runs a nested write
 * there when armed.
 */
static struct usertp__rb *nest_rb;
static uint32_t nest_size;
static uint64_t nest_seq;
static int nest_armed;

int clock_gettime(clockid_t id, struct timespec *ts)
{
	if (nest_armed) {
		nest_armed = 0;
		CHECK(rbt_write(nest_rb, 0, nest_size, TAG, nest_seq, NULL, NULL));
	}
	return (int)syscall(SYS_clock_gettime, id, ts);
}

static void nested(void)
{
	static const uint32_t sizes[] = { 100, 2100 };
	unsigned int i;

	for (i = 0; i < 2; i++) {
		struct usertp__rb rb;
		uint64_t seq = 0, first, n;

		printf("size %u\n", sizes[i]);
		CHECK_INT(usertp__rb_create(&rb, 1, 8, true), ==, 0);
		/* 100: the nested event goes on the same page; 2100: one event per page, the
		 * nested one opens the page the outer one was about to open. */
		write_n(&rb, 5, sizes[i], &seq);
		nest_rb = &rb;
		nest_size = sizes[i];
		nest_seq = seq++;
		nest_armed = 1;
		CHECK(rbt_write(&rb, 0, sizes[i], TAG, seq++, NULL, NULL));
		CHECK_INT(nest_armed, ==, 0);
		CHECK_INT(rb.cpus[0]->dropped, ==, 0);
		/* The nested event first, then the outer one. */
		first = snapshot_range(&rb, &n);
		CHECK_INT(first + n, ==, seq);
		expect_seqs(&rb, first, n);
		usertp__rb_destroy(&rb);
	}
}

static void hostile_wrap(void)
{
	/* sizeof(struct usertp__rb_page_copy) * pages wraps to a few KiB: ceil(2^64 / size). */
	const uint64_t pages = (uint64_t)((((unsigned __int128)1 << 64) + sizeof(struct usertp__rb_page_copy) - 1) /
					  sizeof(struct usertp__rb_page_copy));
	struct usertp__rb rb;
	uint64_t seq;
	pid_t pid;
	int status;

	CHECK_INT(usertp__rb_create(&rb, 1, 8, false), ==, 0);
	for (seq = 0; seq < 20; seq++)
		CHECK(rbt_write(&rb, 0, 100, TAG, seq, NULL, NULL));
	rb.cpus[0]->pos = (pages - 1) * USERTP__KPAGE_SIZE + 100; /* read_page is 0 */
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct usertp__rb_snapshot snap;
		int ret = usertp__rb_snapshot(rb.region, rb.size, &snap);

		_exit(ret == -EINVAL || ret == -ENOMEM || (!ret && snap.cpus[0].nr_pages <= rb.nr_pages)
			      ? 0 : 1);
	}
	CHECK(pid > 0);
	CHECK_INT(waitpid(pid, &status, 0), ==, pid);
	if (!WIFEXITED(status))
		fprintf(stderr, "the snapshot died of signal %d\n", WTERMSIG(status));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	usertp__rb_destroy(&rb);
}

/* --- dead writers ------------------------------------------------------------------------ */

static void dead_reserved(void)
{
	/* A record in the short form (rseq mode), and one with a length word (either mode). */
	static const uint32_t sizes[] = { 100, 300 };
	int overwrite;

	for (overwrite = 0; overwrite <= 1; overwrite++) {
		for (unsigned int i = 0; i < 2; i++) {
			struct usertp__rb rb;
			uint64_t seq = 0, last_page;
			unsigned char *p;

			CHECK_INT(usertp__rb_create(&rb, 1, 64, overwrite), ==, 0);
			write_n(&rb, 10, sizes[i], &seq);
			/* Died between reserve and commit: the event is pending, skipped. */
			p = usertp__rb_reserve(&rb, 0, sizes[i]);
			CHECK(p != NULL);
			payload_fill(p, sizes[i], TAG, 1ull << 40);
			expect_seqs(&rb, 0, seq);
			/* Events committed after it (by other threads), on its page and the next:
			 * all kept, and where no reader stops (the page is complete only at the
			 * end, the snapshot's copy has the dead one made padding). */
			last_page = rb.cpus[0]->pos / USERTP__KPAGE_SIZE;
			write_n(&rb, 3, 24, &seq);
			CHECK_INT(rb.cpus[0]->pos / USERTP__KPAGE_SIZE, ==, last_page);
			write_n(&rb, 40, sizes[i], &seq);
			expect_seqs(&rb, 0, seq);
			/* Died after the store of commit, before its count (CAS mode): the event
			 * is there. */
			usertp__rb_commit_entry(p);
			{
				struct usertp__rb_snapshot snap;

				CHECK_INT(usertp__rb_snapshot(rb.region, rb.size, &snap), ==, 0);
				CHECK_INT(snap.cpus[0].entries, ==, seq + 1);
				usertp__rb_snapshot_free(&snap);
			}
			usertp__rb_destroy(&rb);
		}
	}
}

/*
 * Reserve one event of @size, then put back every byte of CPU 0's area but pos and last_ts:
 * the state of a writer killed right after its compare-and-exchange.
 */
static void die_after_cas(struct usertp__rb *rb, uint32_t size)
{
	unsigned char *area = (unsigned char *)rb->cpus[0];
	size_t len = rb->pages[0] + (size_t)rb->nr_pages * USERTP__KPAGE_SIZE - area;
	unsigned char *saved = malloc(len), *p;
	uint64_t pos, last_ts;

	if (!saved)
		exit(2);
	memcpy(saved, area, len);
	p = usertp__rb_reserve(rb, 0, size);
	CHECK(p != NULL);
	pos = rb->cpus[0]->pos;
	last_ts = rb->cpus[0]->last_ts;
	if (rb->rseq) { /* the header came with the reservation */
		unsigned char *entry = p - (rbt_entry_bytes(rb, size) - ((size + 3) & ~3u));

		memcpy(saved + (entry - area), entry, 8);
	}
	memcpy(area, saved, len);
	rb->cpus[0]->pos = pos;
	rb->cpus[0]->last_ts = last_ts;
	free(saved);
}

static void dead_cas(void)
{
	int wrapped;

	for (wrapped = 0; wrapped <= 1; wrapped++) {
		struct usertp__rb rb;
		uint64_t seq = 0, first, n;
		uint32_t per_page;

		printf("wrapped=%d\n", wrapped);
		CHECK_INT(usertp__rb_create(&rb, 1, 8, true), ==, 0);
		/* Several times around or not; then 100-byte events up to the 6th of a page:
		 * the next one goes on the same page, where the bytes, after wrapping, are
		 * those of an older event of the same size. */
		per_page = USERTP__KPAGE_DATA / rbt_entry_bytes(&rb, 100);
		write_n(&rb, wrapped ? per_page * 10 + 6 : 6, 100, &seq);
		first = snapshot_range(&rb, &n);
		CHECK_INT(first + n, ==, seq);
		die_after_cas(&rb, 100);
		expect_seqs(&rb, first, n);
		usertp__rb_destroy(&rb);
	}
}

static void dead_open(void)
{
	struct usertp__rb rb;
	uint64_t seq = 0, first;
	uint32_t small, large, end;

	CHECK_INT(usertp__rb_create(&rb, 1, 8, true), ==, 0);
	/* 6 pages of 24-byte events, then 3 of 100-byte ones, which leave bytes at the end
	 * of each page: in them, bytes of the 24-byte events still. */
	small = USERTP__KPAGE_DATA / rbt_entry_bytes(&rb, 24);
	large = USERTP__KPAGE_DATA / rbt_entry_bytes(&rb, 100);
	end = USERTP__KPAGE_HEADER + large * rbt_entry_bytes(&rb, 100);
	CHECK_INT(end, <=, USERTP_RB_OFF_FULL);
	write_n(&rb, small * 6, 24, &seq);
	first = seq;
	write_n(&rb, large * 3, 100, &seq);
	/* The next event opens a page (slot 0); the page before it (slot 2) is full.  A writer
	 * opening a page first moves the position to OPENING, then prepares the page and seals
	 * the one before: it dies right after that first step, nothing else written. */
	CHECK_INT(rb.cpus[0]->pos % USERTP__KPAGE_SIZE, ==, end);
	if (rb.rseq) /* the claim cleared the word after the last entry */
		memset(rb.pages[0] + 2 * USERTP__KPAGE_SIZE + end, 0, 8);
	rb.cpus[0]->pos = (rb.cpus[0]->pos / USERTP__KPAGE_SIZE + 1) * USERTP__KPAGE_SIZE +
			  USERTP_RB_OFF_OPENING;
	/* Pages: the 2 last ones of 100-byte events, and the new one (empty: its event was
	 * never written). */
	expect_seqs(&rb, first + large, 2 * large);
	usertp__rb_destroy(&rb);
}

static void stalled_open(void)
{
	struct usertp__rb rb;
	struct usertp__rb_snapshot snap;
	struct rbt_walk w = { 0 };
	uint64_t seq = 0, got = 0;
	uint32_t off, tag = 0;

	CHECK_INT(usertp__rb_create(&rb, 2, 8, false), ==, 0);
	write_n(&rb, 5, 100, &seq);
	/* The opener claimed the next page (OPENING), and stopped there for now. */
	off = (uint32_t)(rb.cpus[0]->pos % USERTP__KPAGE_SIZE);
	if (rb.rseq) /* the claim cleared the word after the last entry */
		memset(rb.pages[0] + (rb.cpus[0]->pos / USERTP__KPAGE_SIZE) % rb.nr_pages *
				       USERTP__KPAGE_SIZE + off, 0, 8);
	rb.cpus[0]->pos = (rb.cpus[0]->pos / USERTP__KPAGE_SIZE + 1) * USERTP__KPAGE_SIZE +
			  USERTP_RB_OFF_OPENING;
	if (rb.rseq) {
		CHECK(!rbt_write(&rb, 0, 100, TAG, seq, NULL, NULL));
		CHECK_INT(rb.cpus[0]->dropped, ==, 1);
		usertp__rb_destroy(&rb);
		return;
	}
	CHECK(rbt_write(&rb, 0, 100, TAG, seq, NULL, NULL));
	CHECK_INT(rb.cpus[0]->dropped, ==, 0);
	CHECK_INT(rb.cpus[1]->dropped, ==, 0);
	CHECK_INT(usertp__rb_snapshot(rb.region, rb.size, &snap), ==, 0);
	rbt_walk_cpu(&snap.cpus[1], &w);
	CHECK_INT(w.n, ==, 1);
	CHECK(w.n == 1 && payload_check(w.e[0].data, w.e[0].size, &tag, &got));
	CHECK_INT(tag, ==, TAG);
	CHECK_INT(got, ==, seq);
	free(w.e);
	usertp__rb_snapshot_free(&snap);
	usertp__rb_destroy(&rb);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} cases[] = {
		{ "exact-fit", exact_fit },	  { "slip", slip },
		{ "full-end", full_end },	  { "size-wrap", size_wrap },
		{ "commit-carry", commit_carry },
		{ "hostile-pos", hostile_pos },	  { "hostile-wrap", hostile_wrap },
		{ "nested", nested },		  { "full-unread", full_unread },
		{ "dead-reserved", dead_reserved },
		{ "dead-cas", dead_cas },	  { "dead-open", dead_open },
		{ "stalled-open", stalled_open },
	};
	unsigned int i;

	for (i = 0; argc == 2 && i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!strcmp(argv[1], cases[i].name)) {
			cases[i].fn();
			return harness_done();
		}
	fprintf(stderr, "usage: %s CASE (see the source)\n", argv[0]);
	return 2;
}
