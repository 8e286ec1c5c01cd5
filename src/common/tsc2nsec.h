/* SPDX-License-Identifier: MIT */
/*
 * tsc2nsec.h - the clock of a recording, as users name it (usertp record -C, USERTP_CLOCK, a
 * consumer session's file), and the TSC's conversion to CLOCK_MONOTONIC nanoseconds that a
 * trace.dat file carries (its TSC2NSEC and OFFSET options, which trace-cmd, KernelShark and
 * usertp report apply: ns = (ticks * mult >> shift) + offset).
 *
 *	mono		CLOCK_MONOTONIC nanoseconds, read in each event (the vDSO: ~17 ns)
 *	x86-tsc		raw TSC ticks in the buffers and in the file, as the kernel's x86-tsc
 *	tsc2nsec	raw TSC ticks in the buffers (one rdtsc), nanoseconds in the file: the
 *			conversion is fitted between two readings of both clocks, one when the
 *			recording starts and one when its file is written (trace-cmd's name)
 *
 * A live reader converts as it reads instead (usertp__clock_conv below).
 *
 * The default is tsc2nsec where the TSC is invariant (constant_tsc and nonstop_tsc: one rate,
 * on every CPU, in every power state), mono elsewhere.  Programs' buffers only know mono and
 * x86-tsc (ring-buffer.h); tsc2nsec is the recorder's business.
 */
#ifndef USERTP_TSC2NSEC_H
#define USERTP_TSC2NSEC_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "ring-buffer.h"

/* A recording's clock: what its buffers count, and whether its file converts ticks. */
struct usertp__clock_choice {
	enum usertp__rb_clock buffers;
	bool tsc2nsec;
};

/*
 * @text ("mono", "x86-tsc" or "tsc2nsec"; NULL or "": the default) into *@c.
 * Return: 0, or -EINVAL with what is wrong in *@why.
 */
int usertp__clock_parse(const char *text, struct usertp__clock_choice *c, const char **why);
/* Its name, as usertp__clock_parse() takes it. */
const char *usertp__clock_name(const struct usertp__clock_choice *c);
/* Does this machine's TSC count at one rate on every CPU, always (/proc/cpuinfo's flags)? */
bool usertp__tsc_invariant(void);

/* Both clocks read at one moment: the TSC read just before and just after mono, averaged. */
struct usertp__tsc_sample {
	uint64_t tsc;
	uint64_t mono_ns;
};
/* Read both, the best of a few tries (the one whose two TSC reads are closest). */
void usertp__tsc_sample(struct usertp__tsc_sample *s);
/*
 * The one way both clocks are read at one moment: clock @to (nanoseconds) read between two
 * readings of the counter (the TSC with @tsc, else CLOCK_MONOTONIC's nanoseconds), the
 * counter taken as their middle; the best of @tries (the closest pair).
 */
void usertp__clock_pair(bool tsc, clockid_t to, int tries, uint64_t *counter, uint64_t *to_ns);

/* ns = (ticks * mult >> shift) + offset, as trace.dat's options hold it. */
struct usertp__tsc2nsec {
	uint32_t mult;
	uint32_t shift;
	int64_t offset;
};

/*
 * The conversion through samples @a and @b (b after a): exact at both (within the samples'
 * own error), the rate between.  Return: false when they do not make one (b not after a).
 */
bool usertp__tsc2nsec_fit(const struct usertp__tsc_sample *a, const struct usertp__tsc_sample *b,
			  struct usertp__tsc2nsec *out);
/* @ticks in nanoseconds. */
static inline uint64_t usertp__tsc2nsec_apply(const struct usertp__tsc2nsec *c, uint64_t ticks)
{
	return (uint64_t)((int64_t)(((unsigned __int128)ticks * c->mult) >> c->shift) + c->offset);
}

/*
 * A live reader's clock (a reading session's records, a mount instance's trace_clock): the
 * programs' buffers count the TSC where it is invariant (or mono where it is not), and the
 * reader prints any of these, converted as it reads.
 */
enum usertp__live_clock {
	USERTP_LIVE_MONO,     /* "mono": CLOCK_MONOTONIC */
	USERTP_LIVE_MONO_RAW, /* "mono_raw": CLOCK_MONOTONIC_RAW */
	USERTP_LIVE_BOOT,     /* "boot": CLOCK_BOOTTIME */
	USERTP_LIVE_TAI,      /* "tai": CLOCK_TAI */
	USERTP_LIVE_X86_TSC,  /* "x86-tsc": the ticks themselves (only where buffers count them) */
	USERTP_LIVE_NR
};
/* The kernel's name of @c. */
const char *usertp__live_clock_name(enum usertp__live_clock c);
/*
 * @name into *@c, for buffers that count the TSC (@tsc) or mono.  Return: 0, or -EINVAL with
 * what is wrong in *@why (not a clock of this list; x86-tsc where the buffers count mono).
 */
int usertp__live_clock_parse(const char *name, bool tsc, enum usertp__live_clock *c,
			     const char **why);

/* Clock @c now (x86-tsc: the TSC's ticks), as a reader prints it. */
uint64_t usertp__live_clock_now(enum usertp__live_clock c);

/* A reading of the buffers' counter and of the printed clock at one moment. */
struct usertp__clock_anchor {
	uint64_t counter, to;
};

#define USERTP__CLOCK_ANCHORS 64       /* kept: the rate is taken over up to 64 of them, */
#define USERTP__CLOCK_ANCHOR_MS 100    /* one per look at most every 100 ms (6.4 s in all) */

/*
 * The conversion of a live reader: the line through the newest anchor, its slope the rate
 * between the oldest kept and the newest (so a reading's own error, some 10 ns, is spread
 * over seconds), so each record is converted as it is read; what it gives never goes back.
 */
struct usertp__clock_conv {
	bool tsc;			/* the buffers count the TSC (else mono ns) */
	enum usertp__live_clock to;
	bool identity;			/* to is what the buffers count */
	struct usertp__clock_anchor ring[USERTP__CLOCK_ANCHORS];
	unsigned int nr, newest;	/* anchors in the ring; the newest's index */
	uint64_t last_out;		/* the last time given (never gone back from) */
};
/* Start converting ticks (@tsc) or mono ns to @to: two anchors 2 ms apart. */
void usertp__clock_conv_init(struct usertp__clock_conv *cv, bool tsc, enum usertp__live_clock to);
/* A reader's look: a new anchor if the newest is USERTP__CLOCK_ANCHOR_MS old. */
void usertp__clock_conv_look(struct usertp__clock_conv *cv);
/* @counter (as the buffers count) on the printed clock; records in counter order. */
uint64_t usertp__clock_conv_apply(struct usertp__clock_conv *cv, uint64_t counter);

#endif /* USERTP_TSC2NSEC_H */
