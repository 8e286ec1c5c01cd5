/* SPDX-License-Identifier: MIT */
/*
 * dup-alt.c - the library that defines dupsys:dup_ev with a different format (and
 * dupsys:dup_alt_only).  Built with hidden visibility: its symbols never meet the others'.
 */
#define CREATE_TRACE_POINTS
#include "dup-trace-alt.h"

#include "dup-lib.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT void dup_fire(int seq);
EXPORT struct usertp_tracepoint *dup_tracepoint(void);

void dup_fire(int seq)
{
	trace_dup_ev(seq);
	trace_dup_alt_only(seq);
}

struct usertp_tracepoint *dup_tracepoint(void)
{
	return &__tracepoint_dup_ev;
}
