/* SPDX-License-Identifier: MIT */
/*
 * report-series.c - usertp report's summaries (report-series.h): exact figures (percentiles
 * by nearest rank over every value kept), a histogram of durations by powers of two, and
 * starts paired with ends by a key (a tsearch() tree).
 */
#define _GNU_SOURCE
#include <search.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <event-parse.h>

#include "grow.h"
#include "private/usertp-consumer-private.h"
#include "report-series.h"

struct usertp__series *usertp__series_new(const char *kind, const char *name, bool durations)
{
	struct usertp__series *s = calloc(1, sizeof(*s));

	if (!s || !(s->name = strdup(name))) {
		free(s);
		return NULL;
	}
	s->kind = kind;
	s->durations = durations;
	return s;
}

void usertp__series_free(struct usertp__series *s)
{
	if (!s)
		return;
	free(s->v);
	free(s->name);
	free(s);
}

void usertp__series_add(struct usertp__series *s, long long value)
{
	if (s->nr == UINT32_MAX || !usertp__grow((void **)&s->v, &s->cap, s->nr + 1, sizeof(*s->v)))
		return;
	s->v[s->nr++] = value;
	s->last = value;
}

static int compare_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

struct figures {
	long long min, max, p50, p90, p99, last;
	double mean;
};

/* The @p-th percentile by nearest rank of the sorted @v (@n > 0). */
static long long percentile(const long long *v, unsigned int n, unsigned int p)
{
	size_t rank = ((size_t)p * n + 99) / 100;

	return v[rank ? rank - 1 : 0];
}

/* (Sorts the values: the last one is taken first.) */
static struct figures figures_of(struct usertp__series *s)
{
	struct figures f = { 0 };
	double sum = 0;

	if (!s->nr)
		return f;
	f.last = s->last;
	qsort(s->v, s->nr, sizeof(*s->v), compare_ll);
	for (unsigned int i = 0; i < s->nr; i++)
		sum += (double)s->v[i];
	f.min = s->v[0];
	f.max = s->v[s->nr - 1];
	f.p50 = percentile(s->v, s->nr, 50);
	f.p90 = percentile(s->v, s->nr, 90);
	f.p99 = percentile(s->v, s->nr, 99);
	f.mean = sum / (double)s->nr;
	return f;
}

/* A value for people: a duration in ns, us, ms or s (ticks as they are), or a number. */
static const char *human(const struct usertp__series *s, long long v, bool ns, char *buf, size_t size)
{
	if (!s->durations || !ns)
		snprintf(buf, size, s->durations ? "%lld ticks" : "%lld", v);
	else if (v < 1000)
		snprintf(buf, size, "%lld ns", v);
	else if (v < 1000000)
		snprintf(buf, size, "%.3f us", (double)v / 1e3);
	else if (v < 1000000000)
		snprintf(buf, size, "%.3f ms", (double)v / 1e6);
	else
		snprintf(buf, size, "%.3f s", (double)v / 1e9);
	return buf;
}

/* Powers of two from the shortest to the longest, a bar each (40 columns at the most). */
static void print_histogram(FILE *out, const struct usertp__series *s, bool ns)
{
	unsigned long long counts[65] = { 0 }, most = 0;
	int lo = 64, hi = 0;
	char a[32], b[32];

	for (unsigned int i = 0; i < s->nr; i++) {
		unsigned long long v = s->v[i] > 0 ? (unsigned long long)s->v[i] : 0;
		int bucket = v ? 64 - __builtin_clzll(v) : 0;

		counts[bucket]++;
		lo = bucket < lo ? bucket : lo;
		hi = bucket > hi ? bucket : hi;
	}
	for (int k = lo; k <= hi; k++)
		most = counts[k] > most ? counts[k] : most;
	for (int k = lo; k <= hi && most; k++) {
		long long from = k ? 1ll << (k - 1) : 0, to = k < 63 ? 1ll << k : INT64_MAX;
		int bar = (int)((counts[k] * 40 + most - 1) / most);

		fprintf(out, "  [%12s, %12s) %10llu |%.*s\n", human(s, from, ns, a, sizeof(a)),
			human(s, to, ns, b, sizeof(b)), counts[k], bar,
			"########################################");
	}
}

/* @s as a CSV field, or a JSON string (its quotes, backslashes and controls escaped). */
static void print_quoted(FILE *out, const char *s, bool json)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputs(json ? "\\\"" : "\"\"", out);
		else if (json && *s == '\\')
			fputs("\\\\", out);
		else if (json && (unsigned char)*s < 0x20)
			fprintf(out, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

static void print_text(FILE *out, struct usertp__series *s, bool ns)
{
	unsigned long long starts = s->unpaired_starts;
	struct figures f = figures_of(s);
	char v[7][32];

	if (!strcmp(s->kind, "instant")) {
		fprintf(out, "instant %s: %u\n", s->name, s->nr);
		return;
	}
	if (!s->durations)
		fprintf(out, "%s %s: %u value%s\n", s->kind, s->name, s->nr, s->nr == 1 ? "" : "s");
	else
		fprintf(out, "%s%s%s: %u paired; unpaired: %llu start%s, %llu end%s%s%.0llu%s\n",
			strcmp(s->kind, "latency") ? s->kind : "", strcmp(s->kind, "latency") ? " " : "",
			s->name, s->nr, starts, starts == 1 ? "" : "s", s->unpaired_ends,
			s->unpaired_ends == 1 ? "" : "s", s->renamed_ends ? "; ended under another name: " : "",
			s->renamed_ends, "");
	if (!s->nr)
		return;
	fprintf(out, "  min %s  mean %s  p50 %s  p90 %s  p99 %s  max %s%s%s\n",
		human(s, f.min, ns, v[0], 32),
		s->durations ? human(s, (long long)(f.mean + 0.5), ns, v[1], 32)
			     : (snprintf(v[1], 32, "%.1f", f.mean), v[1]),
		human(s, f.p50, ns, v[2], 32), human(s, f.p90, ns, v[3], 32),
		human(s, f.p99, ns, v[4], 32), human(s, f.max, ns, v[5], 32),
		s->durations ? "" : "  last ", s->durations ? "" : human(s, f.last, ns, v[6], 32));
	if (s->durations)
		print_histogram(out, s, ns);
}

void usertp__series_print(FILE *out, struct usertp__series *const *ss, int nr,
			  enum usertp__summary_format format, bool ns)
{
	if (format == USERTP__SUMMARY_CSV)
		fprintf(out, "kind,name,unit,count,min,mean,p50,p90,p99,max,last,unpaired_starts,"
			"unpaired_ends,renamed_ends\n");
	if (format == USERTP__SUMMARY_JSON)
		fputs("[", out);
	for (int i = 0; i < nr; i++) {
		struct usertp__series *s = ss[i];
		const char *unit = !s->durations ? "value" : ns ? "ns" : "ticks";
		struct figures f;

		switch (format) {
		case USERTP__SUMMARY_CSV:
			f = figures_of(s);
			fprintf(out, "%s,", s->kind);
			print_quoted(out, s->name, false);
			fprintf(out, ",%s,%u,%lld,%.1f,%lld,%lld,%lld,%lld,%lld,%llu,%llu,%llu\n", unit,
				s->nr, f.min, f.mean, f.p50, f.p90, f.p99, f.max, f.last, s->unpaired_starts,
				s->unpaired_ends, s->renamed_ends);
			break;
		case USERTP__SUMMARY_JSON:
			f = figures_of(s);
			fprintf(out, "%s\n  {\"kind\": \"%s\", \"name\": ", i ? "," : "", s->kind);
			print_quoted(out, s->name, true);
			fprintf(out, ", \"unit\": \"%s\", \"count\": %u, \"min\": %lld, \"mean\": %.1f, "
				"\"p50\": %lld, \"p90\": %lld, \"p99\": %lld, \"max\": %lld, \"last\": %lld, "
				"\"unpaired_starts\": %llu, \"unpaired_ends\": %llu, \"renamed_ends\": %llu}",
				unit, s->nr, f.min, f.mean, f.p50, f.p90, f.p99, f.max, f.last,
				s->unpaired_starts, s->unpaired_ends, s->renamed_ends);
			break;
		case USERTP__SUMMARY_TEXT:
			if (i)
				fputc('\n', out);
			print_text(out, s, ns);
			break;
		}
	}
	if (format == USERTP__SUMMARY_JSON)
		fputs("\n]\n", out);
}

struct waiting {
	char *key;
	unsigned long long ts;
};

static int compare_waiting(const void *a, const void *b)
{
	return strcmp(((const struct waiting *)a)->key, ((const struct waiting *)b)->key);
}

static void free_waiting(void *node)
{
	struct waiting *w = node;

	free(w->key);
	free(w);
}

bool usertp__pairing_start(struct usertp__pairing *p, const char *key, unsigned long long ts)
{
	struct waiting probe = { (char *)key, 0 }, **found, *w;

	found = tfind(&probe, &p->tree, compare_waiting);
	if (found) {
		(*found)->ts = ts;
		return true;
	}
	w = malloc(sizeof(*w));
	if (!w || !(w->key = strdup(key))) {
		free(w);
		return false;
	}
	w->ts = ts;
	if (!tsearch(w, &p->tree, compare_waiting)) {
		free_waiting(w);
		return false;
	}
	p->waiting++;
	return false;
}

bool usertp__pairing_end(struct usertp__pairing *p, const char *key, unsigned long long *ts)
{
	struct waiting probe = { (char *)key, 0 }, **found, *w;

	found = tfind(&probe, &p->tree, compare_waiting);
	if (!found)
		return false;
	w = *found;
	*ts = w->ts;
	tdelete(&probe, &p->tree, compare_waiting);
	free_waiting(w);
	p->waiting--;
	return true;
}

void usertp__pairing_free(struct usertp__pairing *p)
{
	tdestroy(p->tree, free_waiting);
	p->tree = NULL;
	p->waiting = 0;
}

struct each {
	void (*fn)(const char *key, void *arg);
	void *arg;
};

static void each_waiting(const void *node, VISIT which, void *closure)
{
	const struct each *e = closure;

	if (which == postorder || which == leaf)
		e->fn((*(struct waiting *const *)node)->key, e->arg);
}

void usertp__pairing_each(struct usertp__pairing *p, void (*fn)(const char *key, void *arg), void *arg)
{
	struct each e = { fn, arg };

	twalk_r(p->tree, each_waiting, &e);
}

bool usertp__report_field_text(struct tep_format_field *f, struct tep_record *rec, char *buf,
			       size_t size)
{
	int len;
	const char *s = tep_get_field_raw(NULL, f->event, f->name, rec, &len, 0);

	snprintf(buf, size, "%.*s", s && len > 0 ? (int)strnlen(s, (size_t)len) : 0, s ? s : "");
	return s && len >= 0;
}

bool usertp__report_record_ok(struct tep_handle *tep, int type, struct tep_record *rec)
{
	return usertp__tep_record_ok(tep_find_event(tep, type), rec->data, rec->size, NULL);
}
