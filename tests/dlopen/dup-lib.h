/* SPDX-License-Identifier: MIT */
/* What every library of test-duplicate-events exports (found with dlsym() per handle). */
#ifndef DUP_LIB_H
#define DUP_LIB_H

struct usertp_tracepoint;

/* Fires dupsys:dup_ev once (dup-lib.c: lib id, seq, the library's name; dup-alt.c: seq),
 * and dup-alt.c also fires dupsys:dup_alt_only(seq). */
typedef void (*dup_fire_fn)(int seq);
/* The tracepoint object the library's trace_dup_ev() uses. */
typedef struct usertp_tracepoint *(*dup_tracepoint_fn)(void);

#define DUP_FIRE "dup_fire"
#define DUP_TRACEPOINT "dup_tracepoint"

#endif
