/* SPDX-License-Identifier: MIT */
/*
 * ct-defs.c - the one translation unit of a compile-* test that defines the tracepoints and
 * events (CREATE_TRACE_POINTS) of three trace headers of three systems:
 *
 *	<trace/events/ctest_sched.h>	found by the default <trace/events/NAME.h> form
 *	"trace-all.h"			TRACE_INCLUDE_PATH ., system "usertp-test"
 *	"outside/outside-events.h"	on no include path; TRACE_INCLUDE_PATH relative to
 *					<trace/define_trace.h>, system "ctest-outside"
 *
 * Built as C (gnu11, c11) and as C++17 (ct-defs.cpp), with -DCT_EXTERN_C inside extern "C".
 */
#include "ct-common.h"

/*
 * Read once without CREATE_TRACE_POINTS first, as when a program's own header includes the
 * trace header before the .c file creates the tracepoints.
 */
#ifdef CT_EXTERN_C
extern "C" {
#endif
#include <trace/events/ctest_sched.h>
#ifdef CT_EXTERN_C
}
#endif

/*
 * The <trace/events/> header comes first: a header that sets TRACE_INCLUDE_PATH leaves it
 * defined (as in the kernel), and a later default-form header would be looked up there.
 */
#define CREATE_TRACE_POINTS
#ifdef CT_EXTERN_C
extern "C" {
#endif
#include <trace/events/ctest_sched.h>
#include "trace-all.h"
#include "outside/outside-events.h"
#ifdef CT_EXTERN_C
}
#endif

int ct_fn_regs, ct_fn_unregs, ct_stat_regs, ct_stat_unregs;

/* Declared by trace-all.h (in this file's language linkage). */
int test_fn_reg(void)
{
	ct_fn_regs++;
	return 0;
}

void test_fn_unreg(void)
{
	ct_fn_unregs++;
}

/* Declared by ctest_sched.h. */
int ctest_sched_stat_reg(void)
{
	ct_stat_regs++;
	return 0;
}

void ctest_sched_stat_unreg(void)
{
	ct_stat_unregs++;
}

#define CT_STR_1(x) #x
#define CT_STR(x) CT_STR_1(x)

const char *ct_defs_flavour(void)
{
	return CT_LANG " " CT_STR(CT_STD) " " CT_STRICT CT_WRAP;
}
