/* SPDX-License-Identifier: MIT */
/* trace-text.h - private to libusertp: writing a snapshot as the kernel's "trace" text. */
#ifndef USERTP_TRACE_TEXT_H
#define USERTP_TRACE_TEXT_H

#include <stdbool.h>

#include "ring-buffer.h"

struct usertp_event;

/* What the text needs besides the records. */
struct usertp__text_source {
	const struct usertp_event *(*lookup)(unsigned int id, void *arg); /* async-signal-safe */
	void *arg;
	int nr_online;	/* the "#P:" of the header */
	bool raw_clock; /* timestamps are counter ticks, printed raw */
	/* ... or converted to nanoseconds with this (tsc2nsec.h); NULL: none */
	const struct usertp__tsc2nsec *tsc2nsec;
};

/* Return: 0, or a negative errno of the first failed write. */
int usertp__trace_text_write(int fd, const struct usertp__rb_snapshot *snap,
			     const struct usertp__text_source *src);

#endif
