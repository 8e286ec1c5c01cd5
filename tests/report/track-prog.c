/* SPDX-License-Identifier: MIT */
/*
 * track-prog.c - spans, instants, counters and flows of <usertp/track.h> with known lengths
 * and values (test-report-spans.sh).  Built as C, as C++ (track-prog-cxx) and against the
 * static library (track-prog-static).  usage: track-prog ROUNDS
 *
 * Each round: "outer" on the main thread holds "sleep" (a 2 ms sleep) and "busy" (1 ms of
 * spinning on CLOCK_MONOTONIC), an instant "tick", the counter "queue" at 10 x round; an async
 * "request" (id = round) begun here and ended by another thread after a 3 ms sleep, with a
 * flow from the one to the other.  Then a span "renamed" ended as "other-name" (ended all the
 * same, and said), one "left-open" span never ended and one end with nothing begun (on a
 * thread of its own), to be counted unpaired.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <usertp/track.h>

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&t, &t))
		;
}

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void *end_request(void *arg)
{
	unsigned long long id = (unsigned long long)(size_t)arg;

	sleep_ms(3);
	usertp_flow_end(id);
	usertp_async_end("request", id);
	return NULL;
}

static void *stray_end(void *arg)
{
	(void)arg;
	usertp_span_end("stray");
	return NULL;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 10;
	pthread_t t;

	for (int i = 0; i < rounds; i++) {
		long long until;

		usertp_span_begin("outer");
		usertp_span_begin("sleep");
		sleep_ms(2);
		usertp_span_end("sleep");
		usertp_span_begin("busy");
		for (until = now_ns() + 1000000; now_ns() < until;)
			;
		usertp_span_end("busy");
		usertp_instant("tick");
		usertp_counter("queue", 10LL * i);
		usertp_span_end("outer");
		usertp_async_begin("request", (unsigned long long)i);
		usertp_flow_begin((unsigned long long)i);
		pthread_create(&t, NULL, end_request, (void *)(size_t)i);
		pthread_join(t, NULL);
	}
	usertp_span_begin("renamed");
	usertp_span_end("other-name");
	usertp_span_begin("left-open");
	pthread_create(&t, NULL, stray_end, NULL);
	pthread_join(t, NULL);
	printf("rounds %d\n", rounds);
	return 0;
}
