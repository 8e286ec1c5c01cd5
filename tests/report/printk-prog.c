/* SPDX-License-Identifier: MIT */
/*
 * printk-prog.c - usertp_printk() and usertp_puts() with known arguments, for
 * test-report-printk.sh: N rounds of
 *	round(): "round I of N: NAME x=0x.. y=.. w=..  s=abc tab<TAB>\"q\" u=.. p=.."
 *	printk_lib_fire() (a shared library the program links): "lib I name"
 *	usertp_puts("done\n")
 * and one format the kernel's binary printk cannot hold (%c), which must be refused at start
 * and record nothing.   usage: printk-prog N [US]  (US: microseconds between rounds)
 * printk-prog edges: formats at their edges, each once (the texts must be libtraceevent's):
 * negative longs in %ld and %lx, %o %X %#o, a width with a precision, %.0s, a NULL string and
 * pointer, long long's extremes, %%, no newline, a newline inside, no argument at all, and a
 * string longer than a record holds before an argument (cut, the argument kept).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <usertp/printk.h>

#ifdef __cplusplus
extern "C"
#endif
void printk_lib_fire(int i);

static void round_once(int i, unsigned int n)
{
	usertp_printk("round %d of %u: %s x=%#llx y=%d w=%6d z=%08x s=%.3s tab\t\"q\" u=%zu p=%p\n", i,
		      n, i % 2 ? "odd" : "even", (unsigned long long)i << 40, -i, i * 7, i * 255,
		      "abcdef", (size_t)i * 3, (void *)(unsigned long)(0x1000 + i));
}

static void edges(void)
{
	static char big[6000];
	const char *volatile none = NULL; /* (hidden from the compiler's own check of %s) */

	memset(big, 'x', sizeof(big) - 1);
	usertp_printk("neg=%ld hex=%lx o=%o X=%X #o=%#o w.p=%8.3d zero=%.0s|\n", -1234567890123L,
		      -1234567890123L, 8, 0xabc, 8, 5, "gone");
	usertp_printk("null=%s p0=%p ll=%lld ull=%llu\n", none, (void *)NULL,
		      -9223372036854775807LL - 1, 18446744073709551615ULL);
	usertp_printk("pct=100%% x\n");
	usertp_printk("no newline %u", 3u);
	usertp_printk("two\nlines %d\n", 2);
	usertp_printk("big=%s|%d\n", big, 7);
	usertp_printk("after the big one %d\n", 8);
}

int main(int argc, char **argv)
{
	unsigned int n = argc > 1 ? (unsigned int)atoi(argv[1]) : 3;

	if (argc > 1 && !strcmp(argv[1], "edges")) {
		edges();
		return 0;
	}
	unsigned int us = argc > 2 ? (unsigned int)atoi(argv[2]) : 0;

	for (unsigned int i = 0; i < n; i++) {
		if (us)
			usleep(us);
		round_once((int)i, n);
		printk_lib_fire((int)i);
		usertp_printk("bad %c\n", 'x'); /* refused: nothing recorded */
	}
	usertp_puts("done\n");
	return 0;
}
