/* SPDX-License-Identifier: MIT */
/*
 * tsc2nsec.c - a recording's clock by name, and the TSC's conversion to CLOCK_MONOTONIC
 * nanoseconds (tsc2nsec.h); a live reader's conversion of what the buffers count.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
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
	const char *no;

	if (k)
		return k == 2;
	k = 1;
	/* USERTP_TSC=0: the user says it is not (a virtual machine's TSC that jumps). */
	no = secure_getenv("USERTP_TSC");
	if (no && !strcmp(no, "0")) {
		__atomic_store_n(&known, k, __ATOMIC_RELAXED);
		return false;
	}
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
	/* The default: tsc2nsec where the TSC is invariant (the same nanoseconds as mono). */
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

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void usertp__clock_pair(bool tsc, clockid_t to, int tries, uint64_t *counter, uint64_t *to_ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < tries; i++) {
		uint64_t before = tsc ? tsc_ordered() : clock_ns(CLOCK_MONOTONIC);
		uint64_t t = clock_ns(to);
		uint64_t after = tsc ? tsc_ordered() : clock_ns(CLOCK_MONOTONIC);

		if (after - before < best) {
			best = after - before;
			*counter = before + (after - before) / 2;
			*to_ns = t;
		}
	}
}

void usertp__tsc_sample(struct usertp__tsc_sample *s)
{
	usertp__clock_pair(true, CLOCK_MONOTONIC, 7, &s->tsc, &s->mono_ns);
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

/* --- live readers -------------------------------------------------------------------------- */

static const struct {
	const char *name;
	clockid_t id;
} live_clocks[USERTP_LIVE_NR] = {
	[USERTP_LIVE_MONO] = { "mono", CLOCK_MONOTONIC },
	[USERTP_LIVE_MONO_RAW] = { "mono_raw", CLOCK_MONOTONIC_RAW },
	[USERTP_LIVE_BOOT] = { "boot", CLOCK_BOOTTIME },
	[USERTP_LIVE_TAI] = { "tai", CLOCK_TAI },
	[USERTP_LIVE_X86_TSC] = { "x86-tsc", 0 },
};

const char *usertp__live_clock_name(enum usertp__live_clock c)
{
	return c < USERTP_LIVE_NR ? live_clocks[c].name : "?";
}

int usertp__live_clock_parse(const char *name, bool tsc, enum usertp__live_clock *c,
			     const char **why)
{
	for (unsigned int i = 0; i < USERTP_LIVE_NR; i++) {
		if (strcmp(name, live_clocks[i].name))
			continue;
		if (i == USERTP_LIVE_X86_TSC && !tsc) {
			*why = "the programs count CLOCK_MONOTONIC here (the TSC is not invariant)";
			return -EINVAL;
		}
		*c = (enum usertp__live_clock)i;
		return 0;
	}
	*why = "not mono, mono_raw, boot, tai or x86-tsc";
	return -EINVAL;
}

uint64_t usertp__live_clock_now(enum usertp__live_clock c)
{
	return c == USERTP_LIVE_X86_TSC ? tsc_ordered() : clock_ns(live_clocks[c].id);
}

static void anchor_add(struct usertp__clock_conv *cv)
{
	struct usertp__clock_anchor a;
	unsigned int at = cv->nr ? (cv->newest + 1) % USERTP__CLOCK_ANCHORS : 0;

	usertp__clock_pair(cv->tsc, live_clocks[cv->to].id, 5, &a.counter, &a.to);
	if (cv->nr && (a.counter <= cv->ring[cv->newest].counter || a.to <= cv->ring[cv->newest].to))
		return; /* (no time between them to take a rate from) */
	cv->ring[at] = a;
	cv->newest = at;
	if (cv->nr < USERTP__CLOCK_ANCHORS)
		cv->nr++;
}

void usertp__clock_conv_init(struct usertp__clock_conv *cv, bool tsc, enum usertp__live_clock to)
{
	memset(cv, 0, sizeof(*cv));
	cv->tsc = tsc;
	cv->to = to;
	cv->identity = tsc ? to == USERTP_LIVE_X86_TSC : to == USERTP_LIVE_MONO;
	if (cv->identity)
		return;
	anchor_add(cv);
	usleep(2000);
	anchor_add(cv);
}

void usertp__clock_conv_look(struct usertp__clock_conv *cv)
{
	uint64_t since;

	if (cv->identity)
		return;
	since = clock_ns(live_clocks[cv->to].id) - cv->ring[cv->newest].to;
	if (since >= USERTP__CLOCK_ANCHOR_MS * 1000000ull)
		anchor_add(cv);
}

uint64_t usertp__clock_conv_apply(struct usertp__clock_conv *cv, uint64_t counter)
{
	const struct usertp__clock_anchor *n = &cv->ring[cv->newest];
	const struct usertp__clock_anchor *o =
		&cv->ring[(cv->newest + USERTP__CLOCK_ANCHORS + 1 - cv->nr) % USERTP__CLOCK_ANCHORS];
	__int128 t;
	uint64_t out;

	if (cv->identity)
		return counter;
	if (cv->nr < 2)
		t = (__int128)n->to + (int64_t)(counter - n->counter); /* (one anchor: 1 ns a count) */
	else
		t = (__int128)n->to + (__int128)(int64_t)(counter - n->counter) *
					      (__int128)(n->to - o->to) /
					      (__int128)(n->counter - o->counter);
	out = t < 0 ? 0 : (uint64_t)t;
	if (out < cv->last_out)
		out = cv->last_out;
	cv->last_out = out;
	return out;
}
