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
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <event-parse.h>

#include "report-latency.h"
#include "report-series.h"
#include "spec.h"

#define MAX_INPUTS_BOUND 256
/* A key longer is cut there (two such keys alike up to it are taken as one). */
#define KEY_MAX 4096

/* One side of the pair: the event and its field, as the spec names them. */
struct side {
	char system[128], event[128], field[128];
	int id[MAX_INPUTS_BOUND];			/* per input: the event's id (-1: none) */
	struct tep_format_field *f[MAX_INPUTS_BOUND];
	bool found;
};

struct usertp__latency {
	char *text;
	struct side start, end;
	struct tep_handle *tep[MAX_INPUTS_BOUND];
	char *names;				/* "sys:event" lines of the files, for close matches */
	size_t names_len;
	struct usertp__pairing waiting;		/* starts, by key */
	struct usertp__series *series;		/* the durations */
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

	if (!l || !(l->text = strdup(text)) ||
	    !(l->series = usertp__series_new("latency", text, true))) {
		if (l)
			free(l->text);
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

void usertp__latency_free(struct usertp__latency *l)
{
	if (!l)
		return;
	usertp__pairing_free(&l->waiting);
	usertp__series_free(l->series);
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

static bool bind_side(struct side *s, int input, struct tep_handle *tep, const char *file,
		      char *err, size_t err_size)
{
	struct tep_event *ev = tep_find_event_by_name(tep, s->system[0] ? s->system : NULL, s->event);
	struct tep_format_field **fields;
	char names[4096], close[512], spec[400];
	size_t used = 0;

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
	return bind_side(&l->start, input, tep, file, err, err_size) &&
	       bind_side(&l->end, input, tep, file, err, err_size);
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
static bool record_key(struct tep_format_field *f, struct tep_record *rec, char *key, size_t size)
{
	unsigned long long v;

	if (f->flags & (TEP_FIELD_IS_STRING | TEP_FIELD_IS_DYNAMIC) ||
	    ((f->flags & TEP_FIELD_IS_ARRAY) && f->elementsize == 1)) {
		key[0] = 's';
		key[1] = ':';
		return usertp__report_field_text(f, rec, key + 2, size - 2);
	}
	if (tep_read_number_field(f, rec->data, &v))
		return false;
	snprintf(key, size, "n:%llu", v);
	return true;
}

void usertp__latency_feed(struct usertp__latency *l, int input, struct tep_record *rec)
{
	struct tep_handle *tep = input < MAX_INPUTS_BOUND ? l->tep[input] : NULL;
	unsigned long long started;
	char key[KEY_MAX];
	int type;

	if (!tep)
		return;
	type = tep_data_type(tep, rec);
	/* (A record whose fields lie outside it is left out: libtraceevent would read there.) */
	if ((type == l->start.id[input] || type == l->end.id[input]) &&
	    !usertp__report_record_ok(tep, type, rec))
		return;
	if (type == l->start.id[input] && l->start.f[input]) {
		if (record_key(l->start.f[input], rec, key, sizeof(key)) &&
		    usertp__pairing_start(&l->waiting, key, rec->ts))
			l->series->unpaired_starts++; /* (the one waiting, replaced) */
	} else if (type == l->end.id[input] && l->end.f[input]) {
		if (!record_key(l->end.f[input], rec, key, sizeof(key)))
			return;
		if (!usertp__pairing_end(&l->waiting, key, &started))
			l->series->unpaired_ends++;
		else
			usertp__series_add(l->series, rec->ts >= started ? (long long)(rec->ts - started) : 0);
	}
}

void usertp__latency_print(FILE *out, struct usertp__latency *const *ls, int nr,
			   enum usertp__summary_format format, bool ns)
{
	struct usertp__series **all = calloc(nr ? (size_t)nr : 1, sizeof(*all));

	if (!all)
		return;
	for (int i = 0; i < nr; i++) {
		/* The starts still waiting are unpaired too. */
		ls[i]->series->unpaired_starts += ls[i]->waiting.waiting;
		usertp__pairing_free(&ls[i]->waiting);
		all[i] = ls[i]->series;
	}
	usertp__series_print(out, all, nr, format, ns);
	free(all);
}
