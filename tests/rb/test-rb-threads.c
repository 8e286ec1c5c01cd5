/* SPDX-License-Identifier: MIT */
/*
 * test-rb-threads.c - four threads write into 2 per-CPU buffers, each on the buffer of the CPU
 * it runs on (usertp__rb_this_cpu()): one pinned to a CPU of each buffer, two that migrate
 * between them (their affinity changes every few thousand events), so that several writers
 * share a buffer and threads move between buffers in the middle of their streams.  Every
 * event carries (thread, seq) and a checksum.
 *
 *	test-rb-threads large	producer/consumer buffers big enough for everything: every
 *				event of every thread is there exactly once, a thread's seqs
 *				increase within each CPU's stream, timestamps never go back
 *				within a CPU, nothing is dropped or overrun
 *	test-rb-threads small	3-page overwrite buffers: what is there is intact and in order,
 *				never an event whose reservation failed, and per CPU, entries +
 *				overrun + dropped add up to what was emitted
 *	test-rb-threads live	as small, with a fifth thread taking snapshots while the others
 *				write (as the recorder does from a fatal signal handler): each
 *				snapshot must hold together the same way (not under
 *				ThreadSanitizer: the snapshot reads pages while they are written,
 *				and checks afterwards that they were not reused)
 *
 * The CI script runs it in ThreadSanitizer and AddressSanitizer builds too.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>

#define RBT_NO_PIN /* it pins its threads itself */
#include "rb-test.h"

#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif

#define THREADS 4
#define MIGRATE_EVERY 3000

struct thread {
	pthread_t tid;
	uint32_t id;
	bool pinned;	      /* to cpus[id] */
	bool moved[2];	      /* ran pinned to a CPU of buffer 0 / 1 */
	uint64_t recorded, dropped;
	unsigned char *was_dropped; /* per seq */
};

static struct usertp__rb rb;
static uint64_t events; /* per thread */
static int cpus[2] = { -1, -1 }; /* allowed CPUs whose buffers are 0 and 1 */
static cpu_set_t allowed;
static struct thread threads[THREADS];
static int done;

static bool pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return false;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return !sched_setaffinity(0, sizeof(set), &set);
}

static void *writer(void *arg)
{
	struct thread *t = arg;
	uint64_t rnd = 1000 + t->id, seq;

	if (t->id < 2)
		t->pinned = pin(cpus[t->id]);
	for (seq = 0; seq < events; seq++) {
		uint32_t size = PAYLOAD_HEAD + (uint32_t)(rbt_rand(&rnd) % 48);
		unsigned char *p;

		if (t->id >= 2 && seq % MIGRATE_EVERY == 0) {
			unsigned int step = (unsigned int)(seq / MIGRATE_EVERY + t->id) % 3;

			if (step < 2 && pin(cpus[step]))
				t->moved[step] = true;
			else if (step == 2)
				sched_setaffinity(0, sizeof(allowed), &allowed);
		}
		p = usertp__rb_reserve(&rb, usertp__rb_this_cpu(&rb), size);
		if (!p) {
			t->was_dropped[seq] = 1;
			t->dropped++;
			continue;
		}
		payload_fill(p, size, t->id, seq);
		usertp__rb_commit(&rb, p);
		t->recorded++;
	}
	return NULL;
}

struct verdict {
	uint64_t entries, written, dropped, overrun;
	unsigned int malformed, corrupt, duplicate, order, ts_back, ghost;
	uint64_t per_thread[2][THREADS]; /* events of each thread in each buffer */
};

/*
 * Check a snapshot: entries well-formed and intact, each (thread, seq) at most once, a
 * thread's seqs increasing and timestamps non-decreasing within each CPU, no event whose
 * reservation failed (when @final: those flags are final).
 */
static void check_snapshot(const struct usertp__rb_snapshot *snap, struct verdict *v, bool final)
{
	unsigned char *seen[THREADS];
	unsigned int cpu, i;

	memset(v, 0, sizeof(*v));
	for (i = 0; i < THREADS; i++)
		seen[i] = calloc(events, 1);
	for (cpu = 0; cpu < snap->nr_cpus; cpu++) {
		const struct usertp__rb_cpu_snapshot *c = &snap->cpus[cpu];
		uint64_t last_seq[THREADS], last_ts = 0;
		bool any[THREADS] = { false };
		struct rbt_walk w;
		size_t k;

		rbt_walk_cpu(c, &w);
		v->malformed += w.einval + w.bad_ret + w.out_of_page;
		if (c->entries != w.n)
			v->malformed++;
		v->entries += c->entries;
		v->written += c->written;
		v->dropped += c->dropped;
		v->overrun += c->overrun;
		for (k = 0; k < w.n; k++) {
			uint32_t tag;
			uint64_t seq;

			if (!payload_check(w.e[k].data, w.e[k].size, &tag, &seq) || tag >= THREADS ||
			    seq >= events) {
				if (v->corrupt++ < 3)
					fprintf(stderr, "cpu %u entry %zu (page %llu): corrupt\n", cpu, k,
						(unsigned long long)c->pages[w.e[k].page].page_no);
				continue;
			}
			if (seen[tag][seq]++ && v->duplicate++ < 3)
				fprintf(stderr, "cpu %u: thread %u seq %llu twice\n", cpu, tag,
					(unsigned long long)seq);
			if (any[tag] && seq <= last_seq[tag] && v->order++ < 3)
				fprintf(stderr, "cpu %u: thread %u seq %llu after %llu\n", cpu, tag,
					(unsigned long long)seq, (unsigned long long)last_seq[tag]);
			if (w.e[k].ts < last_ts && v->ts_back++ < 3)
				fprintf(stderr, "cpu %u entry %zu: ts %llu after %llu\n", cpu, k,
					(unsigned long long)w.e[k].ts, (unsigned long long)last_ts);
			if (final && threads[tag].was_dropped[seq])
				v->ghost++;
			any[tag] = true;
			last_seq[tag] = seq;
			last_ts = w.e[k].ts;
			v->per_thread[cpu][tag]++;
		}
		free(w.e);
	}
	for (i = 0; i < THREADS; i++)
		free(seen[i]);
}

static void *snapshotter(void *arg)
{
	unsigned long *bad = arg, rounds = 0;

	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE) || !rounds) {
		struct usertp__rb_snapshot snap;
		struct verdict v;

		if (usertp__rb_snapshot(rb.region, rb.size, &snap)) {
			(*bad)++;
			break;
		}
		check_snapshot(&snap, &v, false);
		if (v.malformed + v.corrupt + v.duplicate + v.order + v.ts_back) {
			fprintf(stderr, "snapshot %lu: malformed %u corrupt %u duplicate %u order %u ts %u\n",
				rounds, v.malformed, v.corrupt, v.duplicate, v.order, v.ts_back);
			(*bad)++;
		}
		usertp__rb_snapshot_free(&snap);
		rounds++;
	}
	printf("%lu snapshots while writing\n", rounds);
	return NULL;
}

static void choose_cpus(void)
{
	int cpu;

	if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
		CPU_ZERO(&allowed);
		return;
	}
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &allowed) && cpus[cpu % 2] < 0)
			cpus[cpu % 2] = cpu;
	printf("CPUs for buffers 0 and 1: %d, %d%s\n", cpus[0], cpus[1],
	       cpus[0] < 0 || cpus[1] < 0 ? " (no pinning to both)" : "");
}

int main(int argc, char **argv)
{
	bool large = argc == 2 && !strcmp(argv[1], "large");
	bool live = argc == 2 && !strcmp(argv[1], "live");
	uint64_t emitted = 0, recorded = 0, dropped = 0;
	unsigned long live_bad = 0;
	pthread_t snap_tid;
	struct usertp__rb_snapshot snap;
	struct verdict v;
	unsigned int i;

	if (argc != 2 || (!large && !live && strcmp(argv[1], "small"))) {
		fprintf(stderr, "usage: %s large|small|live\n", argv[0]);
		return 2;
	}
#ifdef UNDER_TSAN
	if (live)
		SKIP("snapshots of pages being written are racy by design (checked afterwards)");
#endif
	choose_cpus();
	events = large ? 40000 : 100000;
	/* large: room for all events of all threads on either CPU (at most 80 bytes each). */
	CHECK_INT(usertp__rb_create(&rb, 2, large ? 16384 : 8, !large), ==, 0);
	printf("writer: %s\n", rb.rseq ? "rseq" : "compare-and-exchange");
	for (i = 0; i < THREADS; i++) {
		threads[i].id = i;
		threads[i].was_dropped = calloc(events, 1);
		if (!threads[i].was_dropped)
			return 2;
	}
	if (live)
		CHECK_INT(pthread_create(&snap_tid, NULL, snapshotter, &live_bad), ==, 0);
	for (i = 0; i < THREADS; i++)
		CHECK_INT(pthread_create(&threads[i].tid, NULL, writer, &threads[i]), ==, 0);
	for (i = 0; i < THREADS; i++)
		pthread_join(threads[i].tid, NULL);
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	if (live) {
		pthread_join(snap_tid, NULL);
		CHECK_INT(live_bad, ==, 0);
	}

	CHECK_INT(usertp__rb_snapshot(rb.region, rb.size, &snap), ==, 0);
	CHECK_INT(snap.nr_cpus, ==, 2);
	check_snapshot(&snap, &v, true);
	CHECK_INT(v.malformed, ==, 0);
	CHECK_INT(v.corrupt, ==, 0);
	CHECK_INT(v.duplicate, ==, 0);
	CHECK_INT(v.order, ==, 0);
	CHECK_INT(v.ts_back, ==, 0);
	CHECK_INT(v.ghost, ==, 0);
	for (i = 0; i < THREADS; i++) {
		emitted += events;
		recorded += threads[i].recorded;
		dropped += threads[i].dropped;
		printf("thread %u: %llu recorded, %llu dropped; in buffers: %llu, %llu\n", i,
		       (unsigned long long)threads[i].recorded, (unsigned long long)threads[i].dropped,
		       (unsigned long long)v.per_thread[0][i], (unsigned long long)v.per_thread[1][i]);
	}
	CHECK_INT(v.written, ==, recorded);
	CHECK_INT(v.dropped, ==, dropped);
	CHECK_INT(v.entries + v.overrun + v.dropped, ==, emitted);
	for (i = 0; i < snap.nr_cpus; i++)
		CHECK_INT(snap.cpus[i].entries + snap.cpus[i].overrun, ==, snap.cpus[i].written);
	if (large) {
		CHECK_INT(dropped, ==, 0);
		CHECK_INT(v.overrun, ==, 0);
		CHECK_INT(v.entries, ==, emitted);
		for (i = 0; i < THREADS; i++)
			CHECK_INT(v.per_thread[0][i] + v.per_thread[1][i], ==, events);
		/* The pinned threads wrote on their CPU's buffer only; the others on both. */
		for (i = 0; i < 2; i++)
			if (threads[i].pinned)
				CHECK_INT(v.per_thread[i][i], ==, events);
		for (i = 2; i < THREADS; i++)
			if (threads[i].moved[0] && threads[i].moved[1])
				CHECK(v.per_thread[0][i] && v.per_thread[1][i]);
	} else {
		CHECK(v.entries > 0);
	}
	usertp__rb_snapshot_free(&snap);
	usertp__rb_destroy(&rb);
	for (i = 0; i < THREADS; i++)
		free(threads[i].was_dropped);
	return harness_done();
}
