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
 * The default is tsc2nsec where the TSC is invariant (constant_tsc and nonstop_tsc: one rate,
 * on every CPU, in every power state), mono elsewhere.  Programs' buffers only know mono and
 * x86-tsc (ring-buffer.h); tsc2nsec is the recorder's business.
 */
#ifndef USERTP_TSC2NSEC_H
#define USERTP_TSC2NSEC_H

#include <stdbool.h>
#include <stdint.h>

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

#endif /* USERTP_TSC2NSEC_H */
