/* SPDX-License-Identifier: MIT */
/*
 * bench-common.h - what the benchmarks share: callgrind's client requests where valgrind's
 * headers are installed, the payload every case computes, and the rseq stand-in that lets
 * callgrind count the recorder's rseq writer.  Static definitions: one includer per program.
 */
#ifndef USERTP_BENCH_COMMON_H
#define USERTP_BENCH_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define BENCH_HAVE_CALLGRIND 1
#endif
#endif
#ifndef BENCH_HAVE_CALLGRIND
#define BENCH_HAVE_CALLGRIND 0
#endif

#define NOINLINE __attribute__((noinline, noclone))

/*
 * Counting the rseq writer.  Valgrind has no rseq(2): glibc's registration fails there and
 * the recorder would take its compare-and-exchange writer, which is not what runs natively.
 * With USERTP_BENCH_RSEQ_STANDIN=1 (run-bench.sh sets it, with USERTP_RSEQ=1, for the
 * callgrind runs of the recorder cases) each thread that records writes a CPU number of its
 * own into its rseq area's cpu_id (the main thread 0, before any library constructor, from
 * .preinit_array; worker i: i), which USERTP_RSEQ=1 accepts in place of a registration.
 * Nothing then aborts a sequence, and none is needed: no two threads share a CPU number, so
 * no two write one buffer; callgrind counts exactly the instructions of a sequence that ran
 * through, as natively (where they are rarely aborted).  Only under valgrind.  glibc takes a
 * valid cpu_id for a registration that threads created later must repeat (and dies when
 * they cannot): the creating thread shows the failed one (-2) around pthread_create(), and
 * run-bench.sh sets USERTP_CONTROL=0 too (no control thread started from a constructor).
 */
#if BENCH_HAVE_CALLGRIND && defined(__x86_64__)
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));
static int rseq_standin;

__attribute__((unused)) static void rseq_standin_set(int cpu)
{
	if (rseq_standin && &__rseq_offset && (!&__rseq_size || !__rseq_size))
		((int *)((char *)__builtin_thread_pointer() + __rseq_offset))[1] = cpu;
}

static void rseq_standin_init(int argc, char **argv, char **envp)
{
	(void)argc, (void)argv;
	for (; *envp; envp++)
		if (!strcmp(*envp, "USERTP_BENCH_RSEQ_STANDIN=1"))
			rseq_standin = RUNNING_ON_VALGRIND;
	rseq_standin_set(0);
}
/* A restartable sequence ran in this thread: it left its descriptor in rseq_cs. */
__attribute__((unused)) static bool rseq_standin_used(void)
{
	return !rseq_standin ||
	       *(volatile uint64_t *)((char *)__builtin_thread_pointer() + __rseq_offset + 8);
}

__attribute__((section(".preinit_array"), used)) static void (*const rseq_standin_preinit)(
	int, char **, char **) = rseq_standin_init;
#else
__attribute__((unused)) static void rseq_standin_set(int cpu)
{
	(void)cpu;
}

__attribute__((unused)) static bool rseq_standin_used(void)
{
	return true;
}
#endif

/* The 9-character strings of the payload. */
static const char *const words[4] = { "alpha-one", "bravo-two", "charlie-3", "delta-444" };

#define PAYLOAD(i)                                                                                 \
	int a = (int)(i);                                                                          \
	long b = (long)(i) * 3 + 1;                                                                \
	unsigned int c = (unsigned int)(i) ^ 0x5a5au;                                              \
	const char *s = words[(i) & 3]

#endif /* USERTP_BENCH_COMMON_H */
