/* SPDX-License-Identifier: MIT */
/*
 * ct-common.h - what the translation units of a compile-* test share.  C linkage in every
 * language, so that a C ct-defs.c and a C++ ct-uses.cpp (or the reverse) link together.
 */
#ifndef CT_COMMON_H
#define CT_COMMON_H

#ifdef __cplusplus
extern "C" {
#endif

/* Calls of the reg/unreg functions of TRACE_EVENT_FN (trace-all.h) and
 * TRACE_EVENT_FN_COND (ctest_sched.h), defined in ct-defs.c. */
extern int ct_fn_regs, ct_fn_unregs, ct_stat_regs, ct_stat_unregs;

/* How ct-defs.c was compiled, e.g. "C 201112 strict". */
const char *ct_defs_flavour(void);

/* The test proper, in ct-uses.c; returns the exit status. */
int ct_run(void);

#ifdef __cplusplus
}
#endif

/* Language and standard of the translation unit including this header. */
#ifdef __cplusplus
#define CT_LANG "C++"
#define CT_STD __cplusplus
#else
#define CT_LANG "C"
#define CT_STD __STDC_VERSION__
#endif
#ifdef __STRICT_ANSI__
#define CT_STRICT "strict"
#else
#define CT_STRICT "gnu"
#endif
#ifdef CT_EXTERN_C
#define CT_WRAP " extern-C"
#else
#define CT_WRAP ""
#endif

#endif
