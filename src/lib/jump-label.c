/* SPDX-License-Identifier: MIT */
/*
 * jump-label.c - turning tracepoint call sites on and off by rewriting their code.
 *
 * A site is 5 bytes: the nop 0f 1f 44 00 00 while off, "jmp rel32" (e9 xx xx xx xx) to the
 * probe-calling path while on.  The compiler put the site inside one 64-byte cache line
 * (".p2align 6,,4" before it), so one 8-byte locked compare-and-exchange on a window in that line
 * replaces the whole instruction at once: a thread executing the site sees the old or the
 * new instruction, never a mix.  The code page is made writable only around the store.
 * Afterwards membarrier(SYNC_CORE), when the kernel offers it, makes every thread serialise
 * its instruction stream so the change is seen at once.
 *
 * Only bytes that hold exactly the expected old instruction are changed; anything else
 * (a site already right, or code that is not ours) is left alone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/membarrier.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#if USERTP_HAVE_JUMP_LABEL

static const unsigned char site_nop[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

static int membarrier_state; /* 0 unknown, 1 usable, -1 not available */

static void membarrier_register_locked(void)
{
	if (!membarrier_state) {
		long ret = syscall(SYS_membarrier,
				   MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0);
		membarrier_state = ret == 0 ? 1 : -1;
	}
}

/*
 * The kernel makes a membarrier registration wait for a grace period (milliseconds) once the
 * process has several threads: register while it may still have one, before libusertp starts
 * a thread of its own.
 */
void usertp__jump_label_prepare(void)
{
	pthread_mutex_lock(&usertp__lock);
	membarrier_register_locked();
	pthread_mutex_unlock(&usertp__lock);
}

static void sync_all_cores(void)
{
	membarrier_register_locked();
	if (membarrier_state > 0)
		syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0);
}

/* Rewrite the 5 bytes at @code from @from to @to.  Return: 1 done, 0 already @to, -errno. */
static int patch_site(uintptr_t code, const unsigned char *from, const unsigned char *to)
{
	long page_size = sysconf(_SC_PAGESIZE);
	/* An 8-byte window covering the site and staying inside its cache line. */
	uintptr_t window = (code & 63) <= 56 ? code : code + 5 - 8;
	unsigned int shift = (unsigned int)(code - window);
	uintptr_t page = window & ~(uintptr_t)(page_size - 1);
	uint64_t expected, desired, old;
	unsigned char bytes[8];

	if ((code & 63) > 59)
		return -EINVAL; /* the site crosses a cache line: not one we emitted */
	memcpy(bytes, (const void *)window, 8);
	if (memcmp(bytes + shift, from, 5) != 0)
		return memcmp(bytes + shift, to, 5) == 0 ? 0 : -EINVAL;
	memcpy(&expected, bytes, 8);
	old = expected;
	memcpy(bytes + shift, to, 5);
	memcpy(&desired, bytes, 8);

	if (mprotect((void *)page, (size_t)page_size, PROT_READ | PROT_WRITE | PROT_EXEC))
		return -errno;
	/* A locked cmpxchg: atomic for a window inside one cache line even when unaligned. */
	__asm__ __volatile__("lock cmpxchgq %2, %1"
			     : "+a"(expected), "+m"(*(volatile uint64_t *)window)
			     : "r"(desired)
			     : "memory", "cc");
	/*
	 * Code pages are read+execute.  (Looking the segment's flags up with dl_iterate_phdr()
	 * would take the loader's lock while we hold ours, the opposite order of a dlopen()
	 * whose constructors register objects.)
	 */
	mprotect((void *)page, (size_t)page_size, PROT_READ | PROT_EXEC);
	return expected == old ? 1 : -EAGAIN;
}

static int set_site(const struct usertp__jump_entry *e, bool on)
{
	unsigned char jmp[5];
	int64_t rel = (int64_t)e->target - (int64_t)(e->code + 5);

	if (rel < INT32_MIN || rel > INT32_MAX)
		return -EINVAL;
	jmp[0] = 0xe9;
	{
		int32_t rel32 = (int32_t)rel;

		memcpy(jmp + 1, &rel32, 4);
	}
	return on ? patch_site(e->code, site_nop, jmp) : patch_site(e->code, jmp, site_nop);
}

/*
 * Set the sites of @obj (only those of @only, unless NULL); *@changed when one was rewritten
 * (a program's sites start as nops: registering it rewrites nothing, and needs no barrier).
 * Return: 0 or the first error.
 */
static int sync_entries(struct usertp__object *obj, const struct usertp_tracepoint *only,
			bool *changed)
{
	struct usertp__jump_entry *e;
	int ret = 0, err;

	if (!obj->jumps)
		return 0;
	for (e = obj->jumps; e < obj->jumps_end; e++) {
		if ((only && e->tp != only) || !e->code || !e->tp)
			continue;
		err = set_site(e, __atomic_load_n(&e->tp->enabled, __ATOMIC_RELAXED) != 0);
		if (err > 0)
			*changed = true;
		else if (err < 0 && !ret)
			ret = err;
	}
	return ret;
}

int usertp__jump_sync_tracepoint_locked(struct usertp_tracepoint *tp)
{
	unsigned int i, n = usertp__objects_count_locked();
	bool changed = false;
	int ret = 0, err;

	for (i = 0; i < n; i++) {
		err = sync_entries(usertp__object_at_locked(i), tp, &changed);
		if (err && !ret)
			ret = err;
	}
	if (changed)
		sync_all_cores();
	return ret;
}

int usertp__jump_sync_object_locked(struct usertp__object *obj)
{
	bool changed = false;
	int ret = sync_entries(obj, NULL, &changed);

	if (changed)
		sync_all_cores();
	return ret;
}

#else /* !USERTP_HAVE_JUMP_LABEL: sites read tp->enabled, nothing to patch */

int usertp__jump_sync_tracepoint_locked(struct usertp_tracepoint *tp)
{
	(void)tp;
	return 0;
}

int usertp__jump_sync_object_locked(struct usertp__object *obj)
{
	(void)obj;
	return 0;
}

void usertp__jump_label_prepare(void)
{
}

#endif
