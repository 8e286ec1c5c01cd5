/* SPDX-License-Identifier: MIT */
/*
 * peer-fire.h - FIRE(a, b, c, s): the benchmark's event (an int, a long, an unsigned int and a
 * 9-character string) through the tracer chosen when the program is built:
 *
 *	PEER_NONE	nothing: the arguments handed to an empty asm (the baseline)
 *	PEER_USERTP	trace_bench_event() (trace-bench.h, system usertp_bench)
 *	PEER_LTTNG	LTTng-UST's tracepoint(usertp_bench, bench_event, ...) (peer-lttng-tp.h)
 *	PEER_USDT	DTRACE_PROBE4(usertp_bench, bench_event, ...) (<sys/sdt.h>): a nop until a
 *			uprobe is placed on it
 *	PEER_MARKER	the event as text written to a trace_marker file, as programs that log
 *			to ftrace do (peer_fire_open(PATH) first)
 *
 * TRACER names it.  Included by one file of a program (it defines the tracepoints).
 */
#ifndef USERTP_PEER_FIRE_H
#define USERTP_PEER_FIRE_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(PEER_USERTP)
#define CREATE_TRACE_POINTS
#include "trace-bench.h"
#define TRACER "usertp"
#define FIRE(a, b, c, s) trace_bench_event(a, b, c, s)
#elif defined(PEER_LTTNG)
#define TRACEPOINT_DEFINE
#define TRACEPOINT_CREATE_PROBES
#include "peer-lttng-tp.h"
#define TRACER "lttng-ust"
#define FIRE(a, b, c, s) tracepoint(usertp_bench, bench_event, a, b, c, s)
#elif defined(PEER_USDT)
#include <sys/sdt.h>
#define TRACER "usdt"
#define FIRE(a, b, c, s) DTRACE_PROBE4(usertp_bench, bench_event, a, b, c, s)
#elif defined(PEER_MARKER)
#define TRACER "trace_marker"
static int peer_marker_fd = -1;
/* One write(2) of the event as text: what a program logging to ftrace pays per event. */
static void marker_write(int a, long b, unsigned int c, const char *s)
{
	char line[96];
	int n = snprintf(line, sizeof(line), "bench_event: a=%d b=%ld c=%u s=%s\n", a, b, c, s);

	if (write(peer_marker_fd, line, (size_t)n) != n) {
		perror("trace_marker");
		exit(1);
	}
}
#define FIRE(a, b, c, s) marker_write(a, b, c, s)
#elif defined(PEER_NONE)
#define TRACER "none"
#define FIRE(a, b, c, s) __asm__ __volatile__("" : : "r"(a), "r"(b), "r"(c), "r"(s))
#else
#error "build with one of -DPEER_NONE, -DPEER_USERTP, -DPEER_LTTNG, -DPEER_USDT, -DPEER_MARKER"
#endif

/* Opens the trace_marker file for PEER_MARKER; refuses @marker elsewhere.  0 or -1 (said). */
static inline int peer_fire_open(const char *marker)
{
#if defined(PEER_MARKER)
	peer_marker_fd = marker ? open(marker, O_WRONLY | O_CLOEXEC) : -1;
	if (peer_marker_fd < 0) {
		fprintf(stderr, "trace_marker %s: %s\n", marker ? marker : "(none given)",
			strerror(errno));
		return -1;
	}
#else
	if (marker) {
		fprintf(stderr, "a trace_marker file is for the trace_marker build\n");
		return -1;
	}
#endif
	return 0;
}

#endif /* USERTP_PEER_FIRE_H */
