/* SPDX-License-Identifier: MIT */
/*
 * probe.c - a probe in a library of its own, brought in with LD_PRELOAD, as a kernel module
 * attaches to a tracepoint of the kernel: it registers on the program's tracepoint (which
 * the program must export: pkg-config --libs usertp and usertp::usertp see to it) and says at
 * exit how often it ran.
 */
#include <stdio.h>

#include "consumer-trace.h"

static int calls;

static void count(void *data, int n, const char *who)
{
	(void)data;
	(void)n;
	(void)who;
	calls++;
}

static void __attribute__((constructor)) attach(void)
{
	if (register_trace_consumer_hello(count, NULL))
		fprintf(stderr, "probe.so: register_trace_consumer_hello failed\n");
}

static void __attribute__((destructor)) report(void)
{
	printf("probe.so: %d calls\n", calls);
}
