/* SPDX-License-Identifier: MIT */
/*
 * consumer.c - a program built by the install test against the installed usertp only (with
 * pkg-config, and with CMake's find_package): it creates a tracepoint, records it through
 * a listener and calls a registered probe.  Exit status 0 when all of that worked.
 */
#include <linux/types.h> /* the system's, next to <linux/tracepoint.h> */
#include <stdio.h>
#include <string.h>

#define CREATE_TRACE_POINTS
#include "consumer-trace.h"

#include <usertp/usertp.h>

static int records;
static char last[128];

static void on_record(const struct usertp_event *ev, const void *record, unsigned int size,
		      void *arg)
{
	(void)arg;
	records++;
	if (usertp_event_print(ev, record, size, last, sizeof(last)) < 0)
		strcpy(last, "(print failed)");
}

static __u32 probe_sum;

static void probe(void *data, int n, const char *who)
{
	(void)who;
	probe_sum += (__u32)n * *(const __u32 *)data;
}

int main(void)
{
	static const __u32 factor = 10;
	const struct usertp_event *ev = usertp_event_find("consumer", "consumer_hello");
	struct usertp_listener *l = NULL;
	int ok = 1;

	if (!ev || strcmp(usertp_event_system(ev), "consumer") ||
	    strcmp(usertp_event_name(ev), "consumer_hello")) {
		fprintf(stderr, "consumer: event consumer:consumer_hello not found\n");
		return 1;
	}
	if (usertp_listener_create("consumer:*", on_record, NULL, &l)) {
		fprintf(stderr, "consumer: usertp_listener_create failed\n");
		return 1;
	}
	trace_consumer_hello(1, "installed");
	usertp_listener_destroy(l);
	trace_consumer_hello(2, "not recorded");

	if (register_trace_consumer_hello(probe, (void *)&factor)) {
		fprintf(stderr, "consumer: register_trace_consumer_hello failed\n");
		return 1;
	}
	trace_consumer_hello(5, "probe");
	unregister_trace_consumer_hello(probe, (void *)&factor);
	tracepoint_synchronize_unregister();
	trace_consumer_hello(7, "not probed");

	if (records != 1 || strcmp(last, "n=1 who=installed")) {
		fprintf(stderr, "consumer: %d records, last \"%s\"; expected 1, \"n=1 who=installed\"\n",
			records, last);
		ok = 0;
	}
	if (probe_sum != 50) {
		fprintf(stderr, "consumer: probe sum %u, expected 50\n", (unsigned int)probe_sum);
		ok = 0;
	}
	printf("consumer (%s): %d record \"%s\", probe sum %u: %s\n",
#ifdef __cplusplus
	       "C++",
#else
	       "C",
#endif
	       records, last, (unsigned int)probe_sum, ok ? "OK" : "FAILED");
	return ok ? 0 : 1;
}
