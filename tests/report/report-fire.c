/* SPDX-License-Identifier: MIT */
/*
 * report-fire - fires batches of events, each batch from the next CPU it may run on: it moves
 * itself with sched_setaffinity() between batches, so one trace.dat file holds data of every
 * CPU without leaving that to the scheduler.   usage: report-fire BATCHES EVENTS_PER_BATCH
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#define CREATE_TRACE_POINTS
#include "trace-all.h"

/* trace-all.h's reg/unreg callbacks */
int test_fn_reg(void)
{
	return 0;
}

void test_fn_unreg(void)
{
}

int main(int argc, char **argv)
{
	static const int arr[3] = { 7, -8, 9 };
	static const unsigned long mask[1] = { 0x5UL };
	static const unsigned char bytes[2] = { 0xca, 0xfe };
	struct test_pair pair = { 1, 2 };
	int batches = argc > 1 ? atoi(argv[1]) : 4, per_batch = argc > 2 ? atoi(argv[2]) : 100;
	int allowed[CPU_SETSIZE], nr_allowed = 0;
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set)) {
		perror("sched_getaffinity");
		return 1;
	}
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set))
			allowed[nr_allowed++] = cpu;
	for (int b = 0; b < batches; b++) {
		CPU_ZERO(&set);
		CPU_SET(allowed[b % nr_allowed], &set);
		/* the move is done when the call returns */
		if (sched_setaffinity(0, sizeof(set), &set)) {
			perror("sched_setaffinity");
			return 1;
		}
		for (int i = 0; i < per_batch; i++) {
			int n = b * per_batch + i;

			trace_t_scalars(n, -n, n * 3u, 'a' + n % 26, n * 1000ull, (short)-n, n & 1,
					(const void *)0x1000, pair, "report-fire");
			trace_t_dynamic(arr, 1 + n % 3, mask, 3, bytes, 2);
			trace_t_helpers(n % 8, n % 3, n, n * 7ull);
			trace_t_class_plain(n, n % 5 ? "plain" : NULL);
			trace_t_plain_text(n);
		}
	}
	return 0;
}
