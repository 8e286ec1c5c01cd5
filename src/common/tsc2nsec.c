/* SPDX-License-Identifier: MIT */
/*
 * tsc2nsec.c - a recording's clock by name, and the TSC's conversion to CLOCK_MONOTONIC
 * nanoseconds (tsc2nsec.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "tsc2nsec.h"

bool usertp__tsc_invariant(void)
{
#if defined(__x86_64__)
	static int known; /* 0: not yet; 1: no; 2: yes (a race only reads the file twice) */
	char line[4096];
	FILE *f;
	int k = __atomic_load_n(&known, __ATOMIC_RELAXED);

	if (k)
		return k == 2;
	k = 1;
	f = fopen("/proc/cpuinfo", "re");
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		if (strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc"))
			k = 2;
		break;
	}
	if (f)
		fclose(f);
	__atomic_store_n(&known, k, __ATOMIC_RELAXED);
	return k == 2;
#else
	return false;
#endif
}

int usertp__clock_parse(const char *text, struct usertp__clock_choice *c, const char **why)
{
	if (!text || !*text) {
		c->tsc2nsec = usertp__tsc_invariant();
		c->buffers = c->tsc2nsec ? USERTP_RB_CLOCK_TSC : USERTP_RB_CLOCK_MONO;
		return 0;
	}
	if (!strcmp(text, "tsc2nsec")) {
		if (!usertp__tsc_invariant()) {
			*why = "this machine's TSC is not invariant (constant_tsc and nonstop_tsc)";
			return -EINVAL;
		}
		c->buffers = USERTP_RB_CLOCK_TSC;
		c->tsc2nsec = true;
		return 0;
	}
	c->tsc2nsec = false;
	if (usertp__rb_parse_clock(text, &c->buffers, why)) {
		*why = "not mono, x86-tsc or tsc2nsec";
		return -EINVAL;
	}
	return 0;
}

const char *usertp__clock_name(const struct usertp__clock_choice *c)
{
	return c->tsc2nsec ? "tsc2nsec" : usertp__rb_clock_name(c->buffers);
}

static uint64_t tsc_ordered(void)
{
#if defined(__x86_64__)
	_mm_lfence(); /* (not read before what comes before it) */
	return __rdtsc();
#else
	return usertp__rb_clock_mono();
#endif
}

void usertp__tsc_sample(struct usertp__tsc_sample *s)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 7; i++) {
		uint64_t before = tsc_ordered(), mono = usertp__rb_clock_mono(), after = tsc_ordered();

		if (after - before < best) {
			best = after - before;
			s->tsc = before + (after - before) / 2;
			s->mono_ns = mono;
		}
	}
}

bool usertp__tsc2nsec_fit(const struct usertp__tsc_sample *a, const struct usertp__tsc_sample *b,
			  struct usertp__tsc2nsec *out)
{
	uint64_t ticks = b->tsc - a->tsc, ns = b->mono_ns - a->mono_ns;
	unsigned __int128 mult = 0;
	int shift;

	if (b->tsc <= a->tsc || b->mono_ns <= a->mono_ns)
		return false;
	/*
	 * The finest shift whose multiplier fits 31 bits: trace-cmd keeps it in an int, and
	 * shifts by 32 - shift (so at most 32).
	 */
	for (shift = 32; shift >= 0; shift--) {
		mult = (((unsigned __int128)ns << shift) + ticks / 2) / ticks;
		if (mult < (1u << 31))
			break;
	}
	if (shift < 0 || !mult)
		return false;
	out->mult = (uint32_t)mult;
	out->shift = (uint32_t)shift;
	out->offset = 0;
	out->offset = (int64_t)(a->mono_ns - usertp__tsc2nsec_apply(out, a->tsc));
	return true;
}
