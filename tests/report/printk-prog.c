/* SPDX-License-Identifier: MIT */
/*
 * printk-prog.c - usertp_printk() and usertp_puts() with known arguments, for
 * test-report-printk.sh: N rounds of
 *	round(): "round I of N: NAME x=0x.. y=.. w=..  s=abc tab<TAB>\"q\" u=.. p=.."
 *	printk_lib_fire() (a shared library the program links): "lib I name"
 *	usertp_puts("done\n")
 * and one format the kernel's binary printk cannot hold (%c), which must be refused at start
 * and record nothing.   usage: printk-prog N [US]  (US: microseconds between rounds)
 */
#include <stdio.h>
#include <stdlib.h>
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

int main(int argc, char **argv)
{
	unsigned int n = argc > 1 ? (unsigned int)atoi(argv[1]) : 3;
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
