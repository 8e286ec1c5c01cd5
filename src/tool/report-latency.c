/* SPDX-License-Identifier: MIT */
/*
 * report-latency.c - usertp report --latency 'SYS:START.FIELD -> SYS:END.FIELD'.
 *
 * As the kernel's synthetic events (`'start.field -> end.field'` in its trigger grammar) and
 * trace-cmd hist pair them: each start event waits, keyed by its field's value, for the next
 * end event whose field has that value; the time between the two is one duration.  A start
 * whose key is already waiting replaces it (the one replaced is counted unpaired), an end
 * with nothing waiting is counted unpaired, and so are the starts still waiting at the end.
 * Keys are numbers, or strings (__string, char arrays).  Files read together (-i, -i) pair
 * across each other, in the order of time.  The figures are exact: percentiles by rank over
 * every duration kept, the histogram by powers of two.
 */
#define _GNU_SOURCE
#include <search.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <event-parse.h>

#include "report-latency.h"
#include "spec.h"

#define MAX_INPUTS_BOUND 256
#define KEY_MAX 256

/* One side of the pair: the event and its field, as the spec names them. */
struct side {
	char system[128], event[128], field[128];
	int id[MAX_INPUTS_BOUND];			/* per input: the event's id (-1: none) */
	struct tep_format_field *f[MAX_INPUTS_BOUND];
	bool found;
};

struct waiting {
	char *key;
	unsigned long long ts;
};

struct usertp__latency {
	char *text;
	struct side start, end;
	struct tep_handle *tep[MAX_INPUTS_BOUND];
	char *names;				/* "sys:event" lines of the files, for close matches */
	size_t names_len;
	void *waiting;				/* tsearch() tree of struct waiting */
	unsigned long long nr_waiting, unpaired_starts, unpaired_ends;
	unsigned long long *durations;
	size_t nr, cap;
};

static void copy_part(char *dst, size_t size, const char *src, size_t len)
{
	if (len >= size)
		len = size - 1;
	memcpy(dst, src, len);
	dst[len] = 0;
}

/* "SYS:EVENT.FIELD" or "EVENT.FIELD", spaces around it taken off. */
static bool parse_side(const char *text, size_t len, struct side *s)
{
	const char *colon, *dot;

	while (len && (*text == ' ' || *text == '\t'))
		text++, len--;
	while (len && (text[len - 1] == ' ' || text[len - 1] == '\t'))
		len--;
	dot = memrchr(text, '.', len);
	if (!dot || dot == text || dot == text + len - 1)
		return false;
	colon = memchr(text, ':', (size_t)(dot - text));
	if (colon && (colon == text || colon + 1 == dot))
		return false;
	copy_part(s->system, sizeof(s->system), text, colon ? (size_t)(colon - text) : 0);
	copy_part(s->event, sizeof(s->event), colon ? colon + 1 : text,
		  (size_t)(dot - (colon ? colon + 1 : text)));
	copy_part(s->field, sizeof(s->field), dot + 1, (size_t)(text + len - dot - 1));
	for (int i = 0; i < MAX_INPUTS_BOUND; i++)
		s->id[i] = -1;
	return !strpbrk(s->system, " .") && !strpbrk(s->event, " .:") && !strpbrk(s->field, " .:");
}

struct usertp__latency *usertp__latency_parse(const char *text, char *err, size_t err_size)
{
	const char *arrow = strstr(text, "->");
	struct usertp__latency *l = calloc(1, sizeof(*l));

	if (!l || !(l->text = strdup(text))) {
		free(l);
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	if (!arrow || !parse_side(text, (size_t)(arrow - text), &l->start) ||
	    !parse_side(arrow + 2, strlen(arrow + 2), &l->end)) {
		snprintf(err, err_size, "--latency %s: 'SYS:START.FIELD -> SYS:END.FIELD' (the system "
			 "may be left out: 'job_queued.id -> job_done.id')", text);
		usertp__latency_free(l);
		return NULL;
	}
	if (!strcmp(l->start.event, l->end.event) && !strcmp(l->start.system, l->end.system)) {
		snprintf(err, err_size, "--latency %s: the start and the end are one event", text);
		usertp__latency_free(l);
		return NULL;
	}
	return l;
}

static void free_waiting(void *node)
{
	struct waiting *w = node;

	free(w->key);
	free(w);
}

void usertp__latency_free(struct usertp__latency *l)
{
	if (!l)
		return;
	tdestroy(l->waiting, free_waiting);
	free(l->durations);
	free(l->names);
	free(l->text);
	free(l);
}

/* "sys:event" of every event of @tep, added to l->names. */
static void add_names(struct usertp__latency *l, struct tep_handle *tep)
{
	struct tep_event **events = tep_list_events(tep, TEP_EVENT_SORT_ID);

	for (int i = 0; events && events[i]; i++) {
		size_t add = strlen(events[i]->system) + strlen(events[i]->name) + 2;
		char *grown = realloc(l->names, l->names_len + add + 1);

		if (!grown)
			return;
		l->names = grown;
		l->names_len += (size_t)sprintf(l->names + l->names_len, "%s:%s\n", events[i]->system,
						events[i]->name);
	}
}

static const char *side_name(const struct side *s, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s%s", s->system, s->system[0] ? ":" : "", s->event);
	return buf;
}

static bool bind_side(struct usertp__latency *l, struct side *s, int input, struct tep_handle *tep,
		      const char *file, char *err, size_t err_size)
{
	struct tep_event *ev = tep_find_event_by_name(tep, s->system[0] ? s->system : NULL, s->event);
	struct tep_format_field **fields;
	char names[4096], close[512], spec[400];
	size_t used = 0;

	(void)l;
	if (!ev)
		return true;
	s->found = true;
	s->id[input] = ev->id;
	s->f[input] = tep_find_any_field(ev, s->field);
	if (s->f[input])
		return true;
	/* Close matches among the event's fields, as "sys:event.field" lines. */
	names[0] = 0;
	fields = tep_event_fields(ev);
	for (int i = 0; fields && fields[i] && used < sizeof(names) - 300; i++)
		used += (size_t)snprintf(names + used, sizeof(names) - used, "%s:%s.%s\n", ev->system,
					 ev->name, fields[i]->name);
	free(fields);
	snprintf(spec, sizeof(spec), "%s:%s.%s", ev->system, ev->name, s->field);
	usertp__spec_close_matches(spec, names, close, sizeof(close));
	snprintf(err, err_size, "--latency: %s has no field %s in %s%s%s", side_name(s, spec, sizeof(spec)),
		 s->field, file, close[0] ? "; close matches: " : "", close);
	return false;
}

bool usertp__latency_bind(struct usertp__latency *l, int input, struct tep_handle *tep,
			  const char *file, char *err, size_t err_size)
{
	if (input >= MAX_INPUTS_BOUND) {
		snprintf(err, err_size, "--latency: at most %d files", MAX_INPUTS_BOUND);
		return false;
	}
	l->tep[input] = tep;
	add_names(l, tep);
	return bind_side(l, &l->start, input, tep, file, err, err_size) &&
	       bind_side(l, &l->end, input, tep, file, err, err_size);
}

bool usertp__latency_bound(const struct usertp__latency *l, char *err, size_t err_size)
{
	const struct side *missing = !l->start.found ? &l->start : !l->end.found ? &l->end : NULL;
	char close[512], name[300];

	if (!missing)
		return true;
	side_name(missing, name, sizeof(name));
	usertp__spec_close_matches(name, l->names ? l->names : "", close, sizeof(close));
	snprintf(err, err_size, "--latency %s: no event %s in the files read%s%s", l->text, name,
		 close[0] ? "; close matches: " : "", close);
	return false;
}

/* The key of @rec: its field's value ("n:" and the number, or "s:" and the string). */
static bool record_key(struct tep_handle *tep, struct tep_format_field *f, struct tep_record *rec,
		       char *key, size_t size)
{
	unsigned long long v;
	int len;

	(void)tep;
	if (f->flags & (TEP_FIELD_IS_STRING | TEP_FIELD_IS_DYNAMIC) ||
	    ((f->flags & TEP_FIELD_IS_ARRAY) && f->elementsize == 1)) {
		const char *s = tep_get_field_raw(NULL, f->event, f->name, rec, &len, 0);

		if (!s || len < 0)
			return false;
		snprintf(key, size, "s:%.*s", (int)strnlen(s, (size_t)len), s);
		return true;
	}
	if (tep_read_number_field(f, rec->data, &v))
		return false;
	snprintf(key, size, "n:%llu", v);
	return true;
}

static int compare_waiting(const void *a, const void *b)
{
	return strcmp(((const struct waiting *)a)->key, ((const struct waiting *)b)->key);
}

void usertp__latency_feed(struct usertp__latency *l, int input, struct tep_record *rec)
{
	struct tep_handle *tep = input < MAX_INPUTS_BOUND ? l->tep[input] : NULL;
	char key[KEY_MAX];
	struct waiting probe = { key, 0 }, **found;
	int type;

	if (!tep)
		return;
	type = tep_data_type(tep, rec);
	if (type == l->start.id[input] && l->start.f[input]) {
		struct waiting *w;

		if (!record_key(tep, l->start.f[input], rec, key, sizeof(key)))
			return;
		found = tfind(&probe, &l->waiting, compare_waiting);
		if (found) {
			l->unpaired_starts++; /* (the one waiting, replaced) */
			(*found)->ts = rec->ts;
			return;
		}
		w = malloc(sizeof(*w));
		if (!w || !(w->key = strdup(key))) {
			free(w);
			return;
		}
		w->ts = rec->ts;
		if (!tsearch(w, &l->waiting, compare_waiting)) {
			free_waiting(w);
			return;
		}
		l->nr_waiting++;
	} else if (type == l->end.id[input] && l->end.f[input]) {
		struct waiting *w;

		if (!record_key(tep, l->end.f[input], rec, key, sizeof(key)))
			return;
		found = tfind(&probe, &l->waiting, compare_waiting);
		if (!found) {
			l->unpaired_ends++;
			return;
		}
		w = *found;
		if (l->nr == l->cap) {
			size_t cap = l->cap ? 2 * l->cap : 1024;
			unsigned long long *grown = realloc(l->durations, cap * sizeof(*grown));

			if (!grown)
				return;
			l->durations = grown;
			l->cap = cap;
		}
		l->durations[l->nr++] = rec->ts >= w->ts ? rec->ts - w->ts : 0;
		tdelete(&probe, &l->waiting, compare_waiting);
		free_waiting(w);
		l->nr_waiting--;
	}
}

static int compare_u64(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

/* The @p-th percentile by nearest rank of the sorted @v (@n > 0). */
static unsigned long long percentile(const unsigned long long *v, size_t n, unsigned int p)
{
	size_t rank = (p * n + 99) / 100;

	return v[rank ? rank - 1 : 0];
}

/* A duration for people: ns, us, ms or s (ticks as they are). */
static const char *human(unsigned long long v, bool ns, char *buf, size_t size)
{
	if (!ns)
		snprintf(buf, size, "%llu ticks", v);
	else if (v < 1000)
		snprintf(buf, size, "%llu ns", v);
	else if (v < 1000000)
		snprintf(buf, size, "%.3f us", (double)v / 1e3);
	else if (v < 1000000000)
		snprintf(buf, size, "%.3f ms", (double)v / 1e6);
	else
		snprintf(buf, size, "%.3f s", (double)v / 1e9);
	return buf;
}

struct figures {
	unsigned long long min, max, p50, p90, p99;
	double mean;
};

static struct figures figures_of(struct usertp__latency *l)
{
	struct figures f = { 0 };
	double sum = 0;

	if (!l->nr)
		return f;
	qsort(l->durations, l->nr, sizeof(*l->durations), compare_u64);
	for (size_t i = 0; i < l->nr; i++)
		sum += (double)l->durations[i];
	f.min = l->durations[0];
	f.max = l->durations[l->nr - 1];
	f.p50 = percentile(l->durations, l->nr, 50);
	f.p90 = percentile(l->durations, l->nr, 90);
	f.p99 = percentile(l->durations, l->nr, 99);
	f.mean = sum / (double)l->nr;
	return f;
}

/* Powers of two from the shortest to the longest, a bar each (40 columns at the most). */
static void print_histogram(FILE *out, const struct usertp__latency *l, bool ns)
{
	unsigned long long counts[65] = { 0 }, most = 0;
	int lo = 64, hi = 0;
	char a[32], b[32];

	for (size_t i = 0; i < l->nr; i++) {
		int bucket = l->durations[i] ? 64 - __builtin_clzll(l->durations[i]) : 0;

		counts[bucket]++;
		lo = bucket < lo ? bucket : lo;
		hi = bucket > hi ? bucket : hi;
	}
	for (int k = lo; k <= hi; k++)
		most = counts[k] > most ? counts[k] : most;
	for (int k = lo; k <= hi && most; k++) {
		unsigned long long from = k ? 1ull << (k - 1) : 0, to = k < 64 ? 1ull << k : ~0ull;
		int bar = (int)((counts[k] * 40 + most - 1) / most);

		fprintf(out, "  [%12s, %12s) %10llu |%.*s\n", human(from, ns, a, sizeof(a)),
			human(to, ns, b, sizeof(b)), counts[k], bar,
			"########################################");
	}
}

/* @s as a CSV field, or a JSON string (its quotes and backslashes escaped). */
static void print_quoted(FILE *out, const char *s, bool json)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputs(json ? "\\\"" : "\"\"", out);
		else if (*s == '\\' && json)
			fputs("\\\\", out);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

void usertp__latency_print(FILE *out, struct usertp__latency *const *ls, int nr,
			   enum usertp__latency_format format, bool ns)
{
	const char *unit = ns ? "ns" : "ticks";

	if (format == USERTP__LATENCY_CSV)
		fprintf(out, "latency,unit,count,min,mean,p50,p90,p99,max,unpaired_starts,"
			"unpaired_ends\n");
	if (format == USERTP__LATENCY_JSON)
		fputs("[", out);
	for (int i = 0; i < nr; i++) {
		struct usertp__latency *l = ls[i];
		unsigned long long starts = l->unpaired_starts + l->nr_waiting;
		struct figures f = figures_of(l);
		char v[7][32];

		switch (format) {
		case USERTP__LATENCY_CSV:
			print_quoted(out, l->text, false);
			fprintf(out, ",%s,%zu,%llu,%.1f,%llu,%llu,%llu,%llu,%llu,%llu\n", unit, l->nr,
				f.min, f.mean, f.p50, f.p90, f.p99, f.max, starts, l->unpaired_ends);
			break;
		case USERTP__LATENCY_JSON:
			fprintf(out, "%s\n  {\"latency\": ", i ? "," : "");
			print_quoted(out, l->text, true);
			fprintf(out, ", \"unit\": \"%s\", \"count\": %zu, \"min\": %llu, \"mean\": %.1f, "
				"\"p50\": %llu, \"p90\": %llu, \"p99\": %llu, \"max\": %llu, "
				"\"unpaired_starts\": %llu, \"unpaired_ends\": %llu}", unit, l->nr, f.min,
				f.mean, f.p50, f.p90, f.p99, f.max, starts, l->unpaired_ends);
			break;
		case USERTP__LATENCY_TEXT:
			if (i)
				fputc('\n', out);
			fprintf(out, "%s: %zu paired; unpaired: %llu start%s, %llu end%s\n", l->text,
				l->nr, starts, starts == 1 ? "" : "s", l->unpaired_ends,
				l->unpaired_ends == 1 ? "" : "s");
			if (!l->nr)
				break;
			fprintf(out, "  min %s  mean %s  p50 %s  p90 %s  p99 %s  max %s\n",
				human(f.min, ns, v[0], 32), human((unsigned long long)(f.mean + 0.5), ns, v[1], 32),
				human(f.p50, ns, v[2], 32), human(f.p90, ns, v[3], 32),
				human(f.p99, ns, v[4], 32), human(f.max, ns, v[5], 32));
			print_histogram(out, l, ns);
			break;
		}
	}
	if (format == USERTP__LATENCY_JSON)
		fputs("\n]\n", out);
}
