/* SPDX-License-Identifier: MIT */
/* trace-dat.h - private to libusertp: writing a snapshot as a trace.dat (version 6) file. */
#ifndef USERTP_TRACE_DAT_H
#define USERTP_TRACE_DAT_H

#include <stdbool.h>
#include <stddef.h>

#include "ring-buffer.h"

/* One recorded event: its system and its format text. */
struct usertp__dat_event {
	const char *system;
	const char *format;
};

/* What the file needs besides the pages. */
struct usertp__dat_source {
	const struct usertp__dat_event *events;
	unsigned int nr_events;
	const char *cmdlines; /* "pid comm\n" lines */
	size_t cmdlines_len;
	bool raw_clock;	      /* x86-tsc ticks rather than mono nanoseconds */
};

/* Return: 0, or a negative errno of the first failed write. */
int usertp__trace_dat_write(int fd, const struct usertp_rb_snapshot *snap,
			    const struct usertp__dat_source *src);

#endif
