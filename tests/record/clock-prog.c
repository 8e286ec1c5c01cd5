/* SPDX-License-Identifier: MIT */
/*
 * clock-prog - the record-clock-tsc2nsec test's program: N clock_read events (each carrying
 * CLOCK_MONOTONIC read just before it fires), then SECS seconds of sleep, then N more; the
 * test compares the times the file prints with the values the events carry.
 *
 *	clock-prog SECS N
 */
#include <stdlib.h>
#include <time.h>

#define CREATE_TRACE_POINTS
#include "clock-trace.h"

static void fire(int n)
{
	for (int i = 0; i < n; i++) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		trace_clock_read((unsigned long long)ts.tv_sec * 1000000000ull +
				 (unsigned long long)ts.tv_nsec);
	}
}

int main(int argc, char **argv)
{
	struct timespec pause = { argc > 1 ? atoi(argv[1]) : 1, 0 };

	fire(argc > 2 ? atoi(argv[2]) : 100);
	while (nanosleep(&pause, &pause))
		;
	fire(argc > 2 ? atoi(argv[2]) : 100);
	return 0;
}
