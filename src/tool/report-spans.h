/* SPDX-License-Identifier: MIT */
/*
 * report-spans.h - usertp report --spans: the events of <usertp/track.h> summed up
 * (report-spans.c): each span name's durations, each async span name's, each instant's
 * count, each counter's values.
 */
#ifndef USERTP_REPORT_SPANS_H
#define USERTP_REPORT_SPANS_H

#include <stdbool.h>
#include <stdio.h>

#include "report-series.h"

struct tep_handle;
struct tep_record;
struct usertp__spans;

struct usertp__spans *usertp__spans_new(void);
void usertp__spans_free(struct usertp__spans *sp);
/* The usertp system's events in the file read as @input (a file without them: none). */
void usertp__spans_bind(struct usertp__spans *sp, int input, struct tep_handle *tep);
/* Did any file have them?  (Else --spans says so, and fails.) */
bool usertp__spans_bound(const struct usertp__spans *sp);
/* A record of @input, in time order. */
void usertp__spans_feed(struct usertp__spans *sp, int input, struct tep_record *rec);
/* Everything fed, summed up: spans, async spans, instants, counters, each by name. */
void usertp__spans_print(FILE *out, struct usertp__spans *sp, enum usertp__summary_format format,
			 bool ns);

#endif
