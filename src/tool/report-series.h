/* SPDX-License-Identifier: MIT */
/*
 * report-series.h - what usertp report's summaries share (report-series.c): a series of
 * values (durations, or a counter's values) summed up as count, min, mean, p50, p90, p99,
 * max and last, in text (with a histogram of durations), CSV or JSON; and the pairing of
 * starts with ends by a key.  --latency (report-latency.c) and --spans (report-spans.c).
 */
#ifndef USERTP_REPORT_SERIES_H
#define USERTP_REPORT_SERIES_H

#include <stdbool.h>
#include <stdio.h>

enum usertp__summary_format { USERTP__SUMMARY_TEXT, USERTP__SUMMARY_CSV, USERTP__SUMMARY_JSON };

/* One line of a summary. */
struct usertp__series {
	const char *kind;	/* "latency", "span", "async", "instant" or "counter" */
	char *name;
	bool durations;		/* durations (in the file's unit), or a counter's values */
	long long *v;
	unsigned int nr, cap;
	long long last;
	unsigned long long unpaired_starts, unpaired_ends;
	unsigned long long renamed_ends;	/* spans ended under another name */
};

/* A new series (NULL: no memory). */
struct usertp__series *usertp__series_new(const char *kind, const char *name, bool durations);
void usertp__series_free(struct usertp__series *s);
void usertp__series_add(struct usertp__series *s, long long value);

/* The summaries of @nr series, in @format; @ns: durations in nanoseconds (else ticks). */
void usertp__series_print(FILE *out, struct usertp__series *const *s, int nr,
			  enum usertp__summary_format format, bool ns);

/*
 * Starts waiting for their ends, by key (a string).  usertp__pairing_start() returns true
 * when the key was waiting already (the earlier start is replaced: count it unpaired);
 * usertp__pairing_end() takes the waiting start's time out (false: none was waiting).
 */
struct usertp__pairing {
	void *tree;
	unsigned long long waiting;
};
bool usertp__pairing_start(struct usertp__pairing *p, const char *key, unsigned long long ts);
bool usertp__pairing_end(struct usertp__pairing *p, const char *key, unsigned long long *ts);
void usertp__pairing_free(struct usertp__pairing *p);
/* @fn on the key of every start still waiting. */
void usertp__pairing_each(struct usertp__pairing *p, void (*fn)(const char *key, void *arg), void *arg);

/*
 * A record's fields, for the summaries: the text of a string field (__string, a char array)
 * into @buf (cut to @size), false when it cannot be read; and whether the record of event
 * @type may be read at all (its fields within it: libtraceevent would read outside).
 */
struct tep_format_field;
struct tep_handle;
struct tep_record;
bool usertp__report_field_text(struct tep_format_field *f, struct tep_record *rec, char *buf,
			       size_t size);
bool usertp__report_record_ok(struct tep_handle *tep, int type, struct tep_record *rec);

#endif
