/* SPDX-License-Identifier: MIT */
/*
 * report-line.h - one event as `trace-cmd report` prints it (report-line.c): the lines of
 * usertp report, and of usertp stream, which prints live what report prints afterwards.
 */
#ifndef USERTP_REPORT_LINE_H
#define USERTP_REPORT_LINE_H

#include <stdbool.h>
#include <stdio.h>

#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#include "private/usertp-consumer-private.h"

/* How the lines look: trace-cmd report's -l, -t, -R; usecs: times in nanoseconds, printed
 * as seconds and microseconds (else raw counts, as a file of ticks prints) */
struct usertp__line_style {
	bool latency, nsec, raw, usecs;
};

/* A printer's state: its buffers, and the last task named (its name looked up once). */
struct usertp__report_line {
	struct usertp__fast_print *fast; /* NULL: libtraceevent prints every line */
	struct usertp__text text;
	struct trace_seq seq;
	int comm_pid;
	const char *comm; /* NULL: look it up */
};

/* A printer; @fast: through fast-print.c where it can (the same bytes, quicker). */
void usertp__report_line_init(struct usertp__report_line *l, bool fast);
void usertp__report_line_free(struct usertp__report_line *l);
/* Forget the name kept: the task names of @tep changed (tep_register_comm()). */
void usertp__report_line_forget_comm(struct usertp__report_line *l);
/* @rec of @tep, as trace-cmd's trace_show_data() lays it out, a line on @out. */
void usertp__report_line_print(FILE *out, struct usertp__report_line *l, struct tep_handle *tep,
			       struct tep_record *rec, const struct usertp__line_style *style);

#endif /* USERTP_REPORT_LINE_H */
