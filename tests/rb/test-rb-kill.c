/* SPDX-License-Identifier: MIT */
/*
 * test-rb-kill.c - a writer killed in the middle of its stream.  The buffers are a MAP_SHARED
 * memfd mapping, so a fork()ed child writes into the parent's region; after each commit it
 * publishes how many events it committed in a shared page.  The parent SIGKILLs it once that
 * count passes a threshold (different each round, to hit different moments), reads the count
 * C, maps the memfd again, read-only, and snapshots it: every event with seq < C must be there,
 * intact and in order (the event being committed when the kill came, seq C, may be there
 * too), and nothing else.  The buffer is big enough that nothing is dropped or overwritten.
 *
 *	test-rb-kill strict	nothing malformed at all: the reservation the writer was in
 *				the middle of reads as padding, whenever the kill came
 *	test-rb-kill committed	malformed entries are allowed on the last two pages, after the
 *				last event: where the killed writer's own reservation is (it may
 *				have been killed after reserving and before writing anything
 *				there), and the end of the page before, if that reservation
 *				opened a page and was killed before sealing the one before
 *
 * In odd rounds the parent touches every page of the buffer first: otherwise the child takes
 * a page fault on each new page, and the kill mostly lands in one.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rb-test.h"

#define ROUNDS 24
#define TAG 0x6b6cu

static bool strict;

static void child(struct usertp__rb *rb, uint64_t *committed, uint64_t seed)
{
	uint64_t seq = 0;

	for (;;) {
		uint32_t size = PAYLOAD_HEAD + (uint32_t)(rbt_rand(&seed) % 200);

		if (rbt_write(rb, 0, size, TAG, seq, NULL, NULL))
			__atomic_store_n(committed, ++seq, __ATOMIC_RELEASE);
	}
}

static void round_(unsigned int round)
{
	uint64_t threshold = 2000 + (uint64_t)round * 1700, c, prev_ts = 0;
	struct usertp__rb_snapshot snap;
	const struct usertp__rb_cpu_snapshot *cs;
	struct usertp__rb rb;
	struct rbt_walk w;
	uint64_t *committed;
	unsigned int bad = 0;
	void *view;
	pid_t pid;
	size_t k;
	int status;

	/* 32 MiB: far more than the child writes before the kill lands. */
	CHECK_INT(usertp__rb_create(&rb, 1, 32768, false), ==, 0);
	if (rb.fd < 0)
		SKIP("no memfd");
	if (round % 2)
		memset(rb.pages[0], 0, (size_t)rb.nr_pages * USERTP__KPAGE_SIZE);
	committed = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (committed == MAP_FAILED)
		exit(2);
	pid = fork();
	if (pid < 0)
		exit(2);
	if (pid == 0)
		child(&rb, committed, round);
	while (__atomic_load_n(committed, __ATOMIC_ACQUIRE) < threshold)
		if (waitpid(pid, &status, WNOHANG) == pid) {
			fprintf(stderr, "the writer died by itself: status %#x\n", status);
			exit(1);
		}
	kill(pid, SIGKILL);
	CHECK_INT(waitpid(pid, &status, 0), ==, pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	c = __atomic_load_n(committed, __ATOMIC_ACQUIRE);

	/* Another mapping of the memfd, as another process would have. */
	view = mmap(NULL, rb.size, PROT_READ, MAP_SHARED, rb.fd, 0);
	CHECK(view != MAP_FAILED);
	CHECK_INT(usertp__rb_snapshot(view, rb.size, &snap), ==, 0);
	cs = &snap.cpus[0];
	rbt_walk_cpu(cs, &w);
	/* (The walk stops a page at its first malformed entry: any event after it would be
	 * missing below.) */
	if (strict || (w.einval && w.einval_page + 2 < cs->nr_pages))
		CHECK_INT(w.einval, ==, 0);
	CHECK_INT(w.bad_ret + w.out_of_page, ==, 0);
	CHECK_INT(cs->entries, ==, w.n);
	CHECK_INT(cs->dropped, ==, 0);
	CHECK_INT(cs->overrun, ==, 0);
	/* Seq C may be there (killed between its commit and the count's update). */
	CHECK(w.n == c || w.n == c + 1);
	CHECK(cs->written == c || cs->written == c + 1);
	for (k = 0; k < w.n; k++) {
		uint32_t tag;
		uint64_t seq;

		if (!payload_check(w.e[k].data, w.e[k].size, &tag, &seq) || tag != TAG || seq != k ||
		    w.e[k].ts < prev_ts) {
			if (bad++ < 5)
				fprintf(stderr, "entry %zu: seq %llu\n", k, (unsigned long long)seq);
		}
		prev_ts = w.e[k].ts;
	}
	CHECK_INT(bad, ==, 0);
	printf("round %u: killed at %llu committed, %zu in the snapshot, %u malformed\n", round,
	       (unsigned long long)c, w.n, w.einval);
	free(w.e);
	usertp__rb_snapshot_free(&snap);
	munmap(view, rb.size);
	munmap(committed, 4096);
	usertp__rb_destroy(&rb);
}

int main(int argc, char **argv)
{
	unsigned int round;

	if (argc != 2 || (strcmp(argv[1], "strict") && strcmp(argv[1], "committed"))) {
		fprintf(stderr, "usage: %s strict|committed\n", argv[0]);
		return 2;
	}
	strict = !strcmp(argv[1], "strict");
	for (round = 0; round < ROUNDS; round++)
		round_(round);
	return harness_done();
}
