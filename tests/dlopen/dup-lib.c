/* SPDX-License-Identifier: MIT */
/*
 * dup-lib.c - one of several libraries defining dupsys:dup_ev with the same format.  Built
 * several times (CMakeLists.txt), with DUP_LIB_ID and DUP_WHO telling the copies apart and
 * with different symbol binding: default visibility (its tracepoint may be interposed by
 * an earlier, global definition) or -Wl,-Bsymbolic (always its own).
 */
#define CREATE_TRACE_POINTS
#include "dup-trace.h"

#include "dup-lib.h"

#ifndef DUP_LIB_ID
#error "DUP_LIB_ID must be defined"
#endif

#define EXPORT __attribute__((visibility("default")))

EXPORT void dup_fire(int seq);
EXPORT struct usertp_tracepoint *dup_tracepoint(void);

void dup_fire(int seq)
{
	trace_dup_ev(DUP_LIB_ID, seq, DUP_WHO);
}

struct usertp_tracepoint *dup_tracepoint(void)
{
	return &__tracepoint_dup_ev;
}
