/* SPDX-License-Identifier: MIT */
/*
 * report-latency.h - usertp report --latency 'SYS:START.FIELD -> SYS:END.FIELD': the time from
 * each start event to the end event with the same value of its field (as the kernel's
 * synthetic events and trace-cmd hist pair them), summed up (report-latency.c).
 */
#ifndef USERTP_REPORT_LATENCY_H
#define USERTP_REPORT_LATENCY_H

#include <stdbool.h>
#include <stdio.h>

#include "report-series.h"

struct tep_handle;
struct tep_record;
struct usertp__latency;


/* A spec's text into a new pair (NULL: not such a spec, @err says why; or no memory). */
struct usertp__latency *usertp__latency_parse(const char *text, char *err, size_t err_size);
void usertp__latency_free(struct usertp__latency *l);

/*
 * Find the pair's events and fields in the file read as @input (0, 1, ... for each -i) with
 * @tep.  Return: false with @err (the close matches named) when the file has neither event;
 * an event of one file only, or a field of only one of them, is an error too.
 */
bool usertp__latency_bind(struct usertp__latency *l, int input, struct tep_handle *tep,
			  const char *file, char *err, size_t err_size);
/* After every file is bound: false with @err when no file had the pair. */
bool usertp__latency_bound(const struct usertp__latency *l, char *err, size_t err_size);

/* A record of @input, in time order (ts in the file's unit: @ns says nanoseconds). */
void usertp__latency_feed(struct usertp__latency *l, int input, struct tep_record *rec);

/* The summaries of @nr pairs (report-series.h), once every record is fed. */
void usertp__latency_print(FILE *out, struct usertp__latency *const *l, int nr,
			   enum usertp__summary_format format, bool ns);

#endif
