/* SPDX-License-Identifier: MIT */
/*
 * ct-linux-headers.c - the directory that provides <linux/tracepoint.h> (include/kernel, or
 * include/usertp/kernel once installed) must hide no system header: with the project's
 * include directories first on the path, <linux/types.h> and <linux/limits.h> still come
 * from the system (uapi), and mix with <linux/tracepoint.h> in one translation unit.
 */
#include <linux/types.h>
#include <linux/limits.h>
#include <linux/tracepoint.h>

#include <stdio.h>

#include "../harness.h"

/* The uapi headers' own guards: these are the system's files, not look-alikes. */
#if !defined(_LINUX_TYPES_H) || !defined(_LINUX_LIMITS_H)
#error "<linux/types.h> or <linux/limits.h> is not the system's uapi header"
#endif
#if !defined(USERTP_TRACEPOINT_H)
#error "<linux/tracepoint.h> is not usertp's"
#endif

DECLARE_TRACE(ctest_linux_tp,
	TP_PROTO(__u32 a, __s64 b, __be16 c),
	TP_ARGS(a, b, c));
DEFINE_TRACE(ctest_linux_tp,
	TP_PROTO(__u32 a, __s64 b, __be16 c),
	TP_ARGS(a, b, c));

static __u64 ct_sum;

static void ct_probe(void *data, __u32 a, __s64 b, __be16 c)
{
	ct_sum += *(const __u32 *)data + a + (__u64)b + c;
}

int main(void)
{
	static const __u32 base = PATH_MAX; /* <linux/limits.h>: 4096 */
	__kernel_pid_t pid = 0;		    /* <linux/posix_types.h> through <linux/types.h> */

	CHECK_INT(sizeof(__u32), ==, 4);
	CHECK_INT(sizeof(__s64), ==, 8);
	CHECK_INT(sizeof(__be16), ==, 2);
	CHECK_INT(PATH_MAX, ==, 4096);
	CHECK_INT(NAME_MAX, ==, 255);
	CHECK_INT(pid, ==, 0);

	CHECK_INT(register_trace_ctest_linux_tp(ct_probe, (void *)&base), ==, 0);
	trace_ctest_linux_tp(1, 2, 3);
	CHECK_INT(unregister_trace_ctest_linux_tp(ct_probe, (void *)&base), ==, 0);
	tracepoint_synchronize_unregister();
	trace_ctest_linux_tp(10, 20, 30);
	CHECK_INT(ct_sum, ==, 4096 + 1 + 2 + 3);
	return harness_done();
}
