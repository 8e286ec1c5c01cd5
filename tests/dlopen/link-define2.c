/* SPDX-License-Identifier: MIT */
/*
 * link-define2.c - a second file of the same program that also defines CREATE_TRACE_POINTS
 * before the trace header: as in the kernel, the program must fail to link, with a
 * multiple definition of the tracepoint.
 */
#define CREATE_TRACE_POINTS
#include "link-trace.h"

void link_use(int a, const char *s);

void link_use(int a, const char *s)
{
	trace_link_ev(a, s);
}
