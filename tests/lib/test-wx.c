/* SPDX-License-Identifier: MIT */
/*
 * test-wx.c - where code pages may not be made writable (here: a seccomp filter refusing
 * mprotect() with PROT_WRITE|PROT_EXEC, as W^X policies do), registering a probe fails with
 * that error and changes nothing: the tracepoint stays off, no probe is left attached.
 * Built a second time with -DUSERTP_NO_JUMP_LABEL, where sites test a flag and registration
 * works under the same filter.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CREATE_TRACE_POINTS
#include "wx-trace.h"

#include "../harness.h"

static int hits;

static void probe(void *data, int n)
{
	(void)data;
	hits += n;
}

static int forbid_writable_code(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mprotect, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_WRITE, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(filter) / sizeof(filter[0]), filter };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

int main(void)
{
	int ret;

#if !defined(__x86_64__)
	SKIP("the seccomp filter here is written for x86-64");
#endif
	/* Before the filter: works. */
	CHECK_INT(register_trace_wx_hit(probe, NULL), ==, 0);
	trace_wx_hit(1);
	CHECK_INT(unregister_trace_wx_hit(probe, NULL), ==, 0);
	tracepoint_synchronize_unregister();
	CHECK_INT(hits, ==, 1);

	if (forbid_writable_code())
		SKIP("cannot install a seccomp filter here");
	ret = register_trace_wx_hit(probe, NULL);
#if USERTP_HAVE_JUMP_LABEL
	CHECK_INT(ret, ==, -EACCES);
	CHECK(!trace_wx_hit_enabled());
	trace_wx_hit(10);
	CHECK_INT(hits, ==, 1);
	/* Nothing was left attached: unregistering finds nothing. */
	CHECK_INT(unregister_trace_wx_hit(probe, NULL), ==, -ENOENT);
#else
	CHECK_INT(ret, ==, 0);
	CHECK(trace_wx_hit_enabled());
	trace_wx_hit(10);
	CHECK_INT(hits, ==, 11);
	CHECK_INT(unregister_trace_wx_hit(probe, NULL), ==, 0);
#endif
	return harness_done();
}
