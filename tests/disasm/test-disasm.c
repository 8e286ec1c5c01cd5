/* SPDX-License-Identifier: MIT */
/*
 * test-disasm.c - a disabled tracepoint call site really is a nop.
 *
 * The site is disasm_site() (disasm-site.c, built with -O2).  Its address comes from this
 * program's own jump table (section __usertp_jump_table, entries { code, target, tp }):
 *
 * 1. In memory: the 5 bytes at code are 0f 1f 44 00 00 while nothing is attached, become
 *    e9 <rel32> with rel32 == target - (code + 5) after register_trace_disasm_tp(), and are
 *    the nop again after unregister + tracepoint_synchronize_unregister().  A disabled call
 *    neither reaches the probe nor evaluates the arguments' const-function computation.
 * 2. In the file, with objdump (skipped when there is none): the instruction at the site's
 *    offset in disasm_site is that nopl, the jump target is an instruction of the function,
 *    the code from the function's entry up to the nop calls neither the iterator
 *    (__traceiter_*) nor the argument computation, and the "on" path does reach the iterator.
 * 3. Patching while two threads run through the site the whole time: 2000 register /
 *    unregister + synchronize cycles; the probe checks a flag that is set before each
 *    register and cleared only after unregister + synchronize, and must never find it clear.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The definition below counts its calls, so it must not carry the const attribute here. */
#define DISASM_PURE_ATTR
#include "disasm-trace.h"

#include "harness.h"

DEFINE_TRACE(disasm_tp, TP_PROTO(int x, long y, const char *name), TP_ARGS(x, y, name));

static unsigned long pure_calls;

long disasm_pure(long v)
{
	__atomic_fetch_add(&pure_calls, 1, __ATOMIC_RELAXED);
	return v * 3;
}

static const unsigned char site_nop[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

static const struct usertp__jump_entry *site;

static void show_bytes(const char *what)
{
	const unsigned char *p = (const unsigned char *)(uintptr_t)site->code;

	fprintf(stderr, "  site bytes %s: %02x %02x %02x %02x %02x\n", what, p[0], p[1], p[2],
		p[3], p[4]);
}

static int site_is_nop(void)
{
	return !memcmp((const void *)(uintptr_t)site->code, site_nop, 5);
}

/* "jmp target": e9 and the rel32 from the end of the instruction. */
static int site_is_jmp(void)
{
	const unsigned char *p = (const unsigned char *)(uintptr_t)site->code;
	int32_t rel;

	memcpy(&rel, p + 1, 4);
	return p[0] == 0xe9 && (int64_t)rel == (int64_t)(site->target - (site->code + 5));
}

/* ---- 1. the bytes in memory ---- */

static unsigned long hits;
static int last_x;
static long last_y;
static const char *last_name;

static void probe(void *data, int x, long y, const char *name)
{
	(void)data;
	last_x = x;
	last_y = y;
	last_name = name;
	hits++;
}

static void find_site(void)
{
	const struct usertp__jump_entry *e;
	int n = 0;

	for (e = __start___usertp_jump_table; e < __stop___usertp_jump_table; e++) {
		if (e->tp == &__tracepoint_disasm_tp) {
			site = e;
			n++;
		}
	}
	CHECK_INT(n, ==, 1);
	if (!site) {
		fprintf(stderr, "no jump table entry for disasm_tp\n");
		exit(harness_done());
	}
	/* The site lies in disasm_site(), close to its entry (the function is tiny). */
	CHECK(site->code >= (uintptr_t)&disasm_site && site->code < (uintptr_t)&disasm_site + 256);
	CHECK(site->target != site->code + 5);
}

static void test_bytes(void)
{
	static const char name[] = "disasm";

	CHECK(site_is_nop());
	disasm_site(1, 10, name);
	CHECK_INT(hits, ==, 0);
	CHECK_INT(pure_calls, ==, 0); /* the disabled site did not compute its arguments */

	CHECK_INT(register_trace_disasm_tp(probe, NULL), ==, 0);
	CHECK(site_is_jmp());
	if (!site_is_jmp())
		show_bytes("after register");
	disasm_site(2, 16, name);
	CHECK_INT(hits, ==, 1);
	CHECK_INT(last_x, ==, 2 * 31 + 7);
	CHECK_INT(last_y, ==, (16 * 3) ^ (16 >> 3));
	CHECK(last_name == name);
	CHECK_INT(pure_calls, ==, 1);

	CHECK_INT(unregister_trace_disasm_tp(probe, NULL), ==, 0);
	tracepoint_synchronize_unregister();
	CHECK(site_is_nop());
	if (!site_is_nop())
		show_bytes("after unregister");
	disasm_site(3, 10, name);
	CHECK_INT(hits, ==, 1);
	CHECK_INT(pure_calls, ==, 1);

	/* A second probe on top of the first leaves the jump as it is, and so does removing it. */
	CHECK_INT(register_trace_disasm_tp(probe, NULL), ==, 0);
	CHECK_INT(register_trace_disasm_tp(probe, &hits), ==, 0);
	CHECK(site_is_jmp());
	CHECK_INT(unregister_trace_disasm_tp(probe, &hits), ==, 0);
	CHECK(site_is_jmp());
	CHECK_INT(unregister_trace_disasm_tp(probe, NULL), ==, 0);
	tracepoint_synchronize_unregister();
	CHECK(site_is_nop());
}

/* ---- 2. the disassembly ---- */

struct insn {
	uint64_t addr;
	int cold; /* in disasm_site.cold (or another disasm_site.* part) */
	char bytes[96];
	char text[256];
};

static struct insn *insns;
static size_t nr_insns;

static void trim(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n'))
		s[--n] = '\0';
}

/* Read disasm_site's instructions (and those of its split parts) from objdump -d -w. */
static int read_disassembly(const char *objdump, const char *exe, uint64_t *func_start)
{
	char cmd[PATH_MAX * 2 + 64], line[1024];
	int in_func = 0, cold = 0, found = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "'%s' -d -w '%s' 2>/dev/null", objdump, exe);
	f = popen(cmd, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char sym[256];
		struct insn *in;
		char *tab1, *tab2;

		/* "0000000000001234 <disasm_site>:" starts a symbol. */
		if (sscanf(line, "%llx <%255[^>]>:", &addr, sym) == 2) {
			in_func = !strcmp(sym, "disasm_site") || !strncmp(sym, "disasm_site.", 12);
			cold = in_func && strcmp(sym, "disasm_site") != 0;
			if (in_func && !cold) {
				*func_start = addr;
				found = 1;
			}
			continue;
		}
		/* "    1234:\t0f 1f 44 00 00 \tnopl   0x0(%rax,%rax,1)" is an instruction. */
		if (!in_func || sscanf(line, " %llx:", &addr) != 1 || !(tab1 = strchr(line, '\t')))
			continue;
		in = realloc(insns, (nr_insns + 1) * sizeof(*insns));
		if (!in)
			break;
		insns = in;
		in = &insns[nr_insns++];
		memset(in, 0, sizeof(*in));
		in->addr = addr;
		in->cold = cold;
		tab2 = strchr(tab1 + 1, '\t');
		if (tab2)
			*tab2 = '\0';
		snprintf(in->bytes, sizeof(in->bytes), "%s", tab1 + 1);
		trim(in->bytes);
		if (tab2) {
			snprintf(in->text, sizeof(in->text), "%s", tab2 + 1);
			trim(in->text);
		}
	}
	if (pclose(f) != 0 && !found)
		return -EIO;
	return found ? 0 : -ENOENT;
}

static int is_transfer_to(const struct insn *in, const char *sym_prefix)
{
	char pat[128];

	if (strncmp(in->text, "call", 4) && strncmp(in->text, "jmp", 3))
		return 0;
	snprintf(pat, sizeof(pat), "<%s", sym_prefix);
	return strstr(in->text, pat) != NULL;
}

static void test_disassembly(void)
{
	const char *objdump = getenv("USERTP_OBJDUMP");
	char exe[PATH_MAX], cmd[PATH_MAX + 64];
	uint64_t func_start = 0, bias, code, target;
	const struct insn *nop = NULL, *tgt = NULL;
	int reaches_iter = 0;
	ssize_t len;
	size_t i;

	if (!objdump || !*objdump)
		objdump = "objdump";
	snprintf(cmd, sizeof(cmd), "'%s' --version >/dev/null 2>&1", objdump);
	if (system(cmd) != 0) {
		printf("note: no objdump (%s): disassembly checks skipped\n", objdump);
		return;
	}
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0) {
		printf("note: cannot find the executable: disassembly checks skipped\n");
		return;
	}
	exe[len] = '\0';
	CHECK_INT(read_disassembly(objdump, exe, &func_start), ==, 0);
	CHECK(nr_insns > 0);
	if (!nr_insns)
		return;

	/* Run-time address = link-time address + load bias (the same for the whole file). */
	bias = (uint64_t)(uintptr_t)&disasm_site - func_start;
	code = site->code - bias;
	target = site->target - bias;
	for (i = 0; i < nr_insns; i++) {
		if (!insns[i].cold && insns[i].addr == code)
			nop = &insns[i];
		if (insns[i].addr == target)
			tgt = &insns[i];
	}
	CHECK(nop != NULL);
	if (nop) {
		CHECK_STR(nop->bytes, "0f 1f 44 00 00");
		CHECK(!strncmp(nop->text, "nopl", 4));
		printf("site: disasm_site+0x%llx: %s  %s\n",
		       (unsigned long long)(code - func_start), nop->bytes, nop->text);
	}
	CHECK(tgt != NULL); /* the "on" label is an instruction boundary of the function */

	/* Straight-line code from the entry to the nop: neither the iterator nor the argument
	 * computation is called there, i.e. a disabled call evaluates nothing of them. */
	for (i = 0; i < nr_insns && !insns[i].cold && insns[i].addr < code; i++) {
		if (is_transfer_to(&insns[i], "__traceiter_") ||
		    is_transfer_to(&insns[i], "disasm_pure")) {
			fprintf(stderr, "before the nop, at 0x%llx: %s\n",
				(unsigned long long)insns[i].addr, insns[i].text);
			CHECK(!"call before the nop");
		}
	}
	/* ...while the "on" path does reach the iterator (or the checks above saw nothing). */
	for (i = 0; i < nr_insns; i++)
		if ((insns[i].cold || insns[i].addr >= target) &&
		    is_transfer_to(&insns[i], "__traceiter_disasm_tp"))
			reaches_iter = 1;
	CHECK(reaches_iter);
	free(insns);
	insns = NULL;
	nr_insns = 0;
}

/* ---- 3. patching while other threads run through the site ---- */

#define TOGGLES 2000
#define RUNNERS 2

static int registered; /* set before register, cleared after unregister + synchronize */
static int stop;
static unsigned long race_hits, race_violations;

static void race_probe(void *data, int x, long y, const char *name)
{
	(void)data;
	(void)x;
	(void)y;
	(void)name;
	if (!__atomic_load_n(&registered, __ATOMIC_ACQUIRE))
		__atomic_fetch_add(&race_violations, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&race_hits, 1, __ATOMIC_RELAXED);
}

struct runner {
	pthread_t thread;
	unsigned long calls;
};

static void *runner_main(void *arg)
{
	struct runner *r = arg;
	unsigned long n = 0;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		disasm_site((int)n, (long)n, "runner");
		n++;
		if (!(n & 1023))
			__atomic_store_n(&r->calls, n, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&r->calls, n, __ATOMIC_RELAXED);
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void test_patch_race(void)
{
	struct runner runners[RUNNERS];
	unsigned long total_calls = 0, windows_with_hits = 0, hits_at_end;
	int reg_errors = 0, unreg_errors = 0, not_jmp = 0, not_nop = 0, i;
	double t0 = now_s();

	memset(runners, 0, sizeof(runners));
	for (i = 0; i < RUNNERS; i++)
		CHECK_INT(pthread_create(&runners[i].thread, NULL, runner_main, &runners[i]), ==, 0);
	/* Both threads are in their loop before the first patch. */
	for (i = 0; i < RUNNERS; i++)
		while (!__atomic_load_n(&runners[i].calls, __ATOMIC_RELAXED))
			sched_yield();

	for (i = 0; i < TOGGLES; i++) {
		unsigned long before = __atomic_load_n(&race_hits, __ATOMIC_RELAXED);
		double wait_until;

		__atomic_store_n(&registered, 1, __ATOMIC_RELEASE);
		if (register_trace_disasm_tp(race_probe, NULL))
			reg_errors++;
		if (!site_is_jmp())
			not_jmp++;
		/* Give the runners a moment to hit the probe (bounded: ~1 ms). */
		wait_until = now_s() + 1e-3;
		while (__atomic_load_n(&race_hits, __ATOMIC_RELAXED) == before && now_s() < wait_until)
			sched_yield();
		if (__atomic_load_n(&race_hits, __ATOMIC_RELAXED) != before)
			windows_with_hits++;
		if (unregister_trace_disasm_tp(race_probe, NULL))
			unreg_errors++;
		tracepoint_synchronize_unregister();
		__atomic_store_n(&registered, 0, __ATOMIC_RELEASE);
		if (!site_is_nop())
			not_nop++;
	}

	/* Off for good: the count must not move while the runners go on. */
	hits_at_end = __atomic_load_n(&race_hits, __ATOMIC_RELAXED);
	{
		unsigned long calls0 = __atomic_load_n(&runners[0].calls, __ATOMIC_RELAXED);
		double until = now_s() + 0.5;

		while (__atomic_load_n(&runners[0].calls, __ATOMIC_RELAXED) < calls0 + 10000 &&
		       now_s() < until)
			sched_yield();
	}
	CHECK_INT(__atomic_load_n(&race_hits, __ATOMIC_RELAXED), ==, hits_at_end);

	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < RUNNERS; i++) {
		pthread_join(runners[i].thread, NULL);
		CHECK(runners[i].calls > 0);
		total_calls += runners[i].calls;
	}
	printf("race: %d toggles in %.2f s, %lu calls, %lu probe hits, %lu windows with hits, "
	       "%lu violations\n",
	       TOGGLES, now_s() - t0, total_calls, race_hits, windows_with_hits, race_violations);
	CHECK_INT(reg_errors, ==, 0);
	CHECK_INT(unreg_errors, ==, 0);
	CHECK_INT(not_jmp, ==, 0);
	CHECK_INT(not_nop, ==, 0);
	CHECK_INT(race_violations, ==, 0);
	CHECK(race_hits > 0);
	CHECK(windows_with_hits > 0);
	CHECK(race_hits <= total_calls);
	CHECK(site_is_nop());
}

int main(void)
{
	if (!USERTP_HAVE_JUMP_LABEL)
		SKIP("call sites are not patched in this build (USERTP_NO_JUMP_LABEL or not x86-64)");
	find_site();
	test_bytes();
	test_disassembly();
	test_patch_race();
	return harness_done();
}
