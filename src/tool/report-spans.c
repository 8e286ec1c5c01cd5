/* SPDX-License-Identifier: MIT */
/*
 * report-spans.c - usertp report --spans: the events of <usertp/track.h> (system usertp) summed
 * up, read as Perfetto reads its kernel track events:
 *   usertp_span   'B' begins a span on its thread, 'E' ends the last one begun there (an end
 *                 that names another is counted, renamed_ends), 'I' is an instant: durations
 *                 by the begin's name;
 *   usertp_async  'B' and 'E' of one name and id (scope_span_id) pair, on any threads;
 *   usertp_counter each value, by name (track_name) and process (scope_tgid);
 * An end with nothing begun, and what is still begun at the end, are counted unpaired.
 */
#define _GNU_SOURCE
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <event-parse.h>

#include "grow.h"
#include "report-spans.h"

#define MAX_INPUTS 256
/* A name longer is cut there (two such names alike up to it are taken as one). */
#define NAME_MAX_LEN 1024

/* Per file: the events and fields, found by name (ids differ between files). */
struct bound {
	struct tep_handle *tep;
	int span, async, counter;	/* event ids, -1: none */
	struct tep_format_field *span_type, *span_name, *async_type, *async_name, *async_id;
	struct tep_format_field *counter_value, *counter_name, *counter_tgid, *pid;
};

/* What a thread has begun and not ended. */
struct begun {
	char *name;
	unsigned long long ts;
};
struct thread {
	int tid;
	struct begun *stack;
	unsigned int depth, cap;
};

struct named {
	char *key;			/* kind, a tab, the name (counters: and the process) */
	struct usertp__series *series;
};

struct usertp__spans {
	struct bound in[MAX_INPUTS];
	bool any;
	void *threads;			/* tsearch() tree of struct thread, by tid */
	void *names;			/* tsearch() tree of struct named, by key */
	struct usertp__pairing async;	/* "name\tid" */
	struct usertp__series **all;	/* the series, in the order found */
	unsigned int nr_all, cap_all;
};

struct usertp__spans *usertp__spans_new(void)
{
	struct usertp__spans *sp = calloc(1, sizeof(*sp));

	for (int i = 0; sp && i < MAX_INPUTS; i++)
		sp->in[i].span = sp->in[i].async = sp->in[i].counter = -1;
	return sp;
}

static void free_thread(void *node)
{
	struct thread *t = node;

	for (unsigned int i = 0; i < t->depth; i++)
		free(t->stack[i].name);
	free(t->stack);
	free(t);
}

static void free_named(void *node)
{
	struct named *n = node;

	free(n->key);
	free(n);
}

void usertp__spans_free(struct usertp__spans *sp)
{
	if (!sp)
		return;
	tdestroy(sp->threads, free_thread);
	tdestroy(sp->names, free_named);
	usertp__pairing_free(&sp->async);
	for (unsigned int i = 0; i < sp->nr_all; i++)
		usertp__series_free(sp->all[i]);
	free(sp->all);
	free(sp);
}

static int find_event(struct tep_handle *tep, const char *name)
{
	struct tep_event *ev = tep_find_event_by_name(tep, "usertp", name);

	return ev ? ev->id : -1;
}

static struct tep_format_field *field(struct tep_handle *tep, int id, const char *name)
{
	struct tep_event *ev = id >= 0 ? tep_find_event(tep, id) : NULL;

	return ev ? tep_find_any_field(ev, name) : NULL;
}

void usertp__spans_bind(struct usertp__spans *sp, int input, struct tep_handle *tep)
{
	struct bound *b;

	if (input >= MAX_INPUTS)
		return;
	b = &sp->in[input];
	b->tep = tep;
	b->span = find_event(tep, "usertp_span");
	b->async = find_event(tep, "usertp_async");
	b->counter = find_event(tep, "usertp_counter");
	b->span_type = field(tep, b->span, "track_event_type");
	b->span_name = field(tep, b->span, "slice_name");
	b->pid = field(tep, b->span, "common_pid");
	b->async_type = field(tep, b->async, "track_event_type");
	b->async_name = field(tep, b->async, "slice_name");
	b->async_id = field(tep, b->async, "scope_span_id");
	b->counter_value = field(tep, b->counter, "counter_value");
	b->counter_name = field(tep, b->counter, "track_name");
	b->counter_tgid = field(tep, b->counter, "scope_tgid");
	/* (Events with other fields are someone else's that happen to share the names.) */
	if (!b->span_type || !b->span_name || !b->pid)
		b->span = -1;
	if (!b->async_type || !b->async_name || !b->async_id)
		b->async = -1;
	if (!b->counter_value || !b->counter_name || !b->counter_tgid)
		b->counter = -1;
	sp->any |= b->span >= 0 || b->async >= 0 || b->counter >= 0;
}

bool usertp__spans_bound(const struct usertp__spans *sp)
{
	return sp->any;
}

static int compare_thread(const void *a, const void *b)
{
	int x = ((const struct thread *)a)->tid, y = ((const struct thread *)b)->tid;

	return x < y ? -1 : x > y;
}

static int compare_named(const void *a, const void *b)
{
	return strcmp(((const struct named *)a)->key, ((const struct named *)b)->key);
}

/* The series of @kind and @name (made when new; NULL: no memory). */
static struct usertp__series *series(struct usertp__spans *sp, const char *kind, const char *name)
{
	char key[NAME_MAX_LEN + 32];
	struct named probe = { key, NULL }, **found, *n;

	snprintf(key, sizeof(key), "%s\t%s", kind, name);
	found = tfind(&probe, &sp->names, compare_named);
	if (found)
		return (*found)->series;
	n = calloc(1, sizeof(*n));
	if (!n || !usertp__grow((void **)&sp->all, &sp->cap_all, sp->nr_all + 1, sizeof(*sp->all)) ||
	    !(n->key = strdup(key)) ||
	    !(n->series = usertp__series_new(kind, name, strcmp(kind, "counter") != 0))) {
		if (n)
			free(n->key);
		free(n);
		return NULL;
	}
	if (!tsearch(n, &sp->names, compare_named)) {
		usertp__series_free(n->series);
		free_named(n);
		return NULL;
	}
	sp->all[sp->nr_all++] = n->series;
	return n->series;
}

static unsigned long long number_of(struct tep_format_field *f, struct tep_record *rec)
{
	unsigned long long v = 0;

	tep_read_number_field(f, rec->data, &v);
	return v;
}

static struct thread *thread_of(struct usertp__spans *sp, int tid)
{
	struct thread probe = { .tid = tid }, **found, *t;

	found = tfind(&probe, &sp->threads, compare_thread);
	if (found)
		return *found;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	if (!tsearch(t, &sp->threads, compare_thread)) {
		free(t);
		return NULL;
	}
	return t;
}

static void feed_span(struct usertp__spans *sp, const struct bound *b, struct tep_record *rec)
{
	char type = (char)number_of(b->span_type, rec), name[NAME_MAX_LEN];
	struct thread *t = thread_of(sp, (int)number_of(b->pid, rec));
	struct usertp__series *s;

	usertp__report_field_text(b->span_name, rec, name, sizeof(name));
	if (!t)
		return;
	if (type == 'I') {
		if ((s = series(sp, "instant", name)))
			usertp__series_add(s, 0);
	} else if (type == 'B') {
		if (!usertp__grow((void **)&t->stack, &t->cap, t->depth + 1, sizeof(*t->stack)))
			return;
		t->stack[t->depth].name = strdup(name);
		t->stack[t->depth].ts = rec->ts;
		if (t->stack[t->depth].name)
			t->depth++;
	} else if (type == 'E') {
		struct begun *top;

		if (!t->depth) {
			if ((s = series(sp, "span", name)))
				s->unpaired_ends++;
			return;
		}
		top = &t->stack[--t->depth];
		if ((s = series(sp, "span", top->name))) {
			usertp__series_add(s, rec->ts >= top->ts ? (long long)(rec->ts - top->ts) : 0);
			/* (Ended all the same, as Perfetto ends it: said, not paired otherwise.) */
			if (strcmp(top->name, name))
				s->renamed_ends++;
		}
		free(top->name);
	}
}

static void feed_async(struct usertp__spans *sp, const struct bound *b, struct tep_record *rec)
{
	char type = (char)number_of(b->async_type, rec), name[NAME_MAX_LEN], key[NAME_MAX_LEN + 32];
	struct usertp__series *s;
	unsigned long long started;

	usertp__report_field_text(b->async_name, rec, name, sizeof(name));
	snprintf(key, sizeof(key), "%s\t%llu", name, number_of(b->async_id, rec));
	if (!(s = series(sp, "async", name)))
		return;
	if (type == 'B' && usertp__pairing_start(&sp->async, key, rec->ts))
		s->unpaired_starts++;
	else if (type == 'E' && !usertp__pairing_end(&sp->async, key, &started))
		s->unpaired_ends++;
	else if (type == 'E')
		usertp__series_add(s, rec->ts >= started ? (long long)(rec->ts - started) : 0);
}

static void feed_counter(struct usertp__spans *sp, const struct bound *b, struct tep_record *rec)
{
	char name[NAME_MAX_LEN], label[NAME_MAX_LEN + 32];
	struct usertp__series *s;

	usertp__report_field_text(b->counter_name, rec, name, sizeof(name));
	snprintf(label, sizeof(label), "%s (pid %d)", name, (int)number_of(b->counter_tgid, rec));
	if ((s = series(sp, "counter", label)))
		usertp__series_add(s, (long long)number_of(b->counter_value, rec));
}

void usertp__spans_feed(struct usertp__spans *sp, int input, struct tep_record *rec)
{
	const struct bound *b = input < MAX_INPUTS ? &sp->in[input] : NULL;
	int type;

	if (!b || !b->tep)
		return;
	type = tep_data_type(b->tep, rec);
	/* (A record whose fields lie outside it is left out: libtraceevent would read there.) */
	if ((type == b->span || type == b->async || type == b->counter) &&
	    !usertp__report_record_ok(b->tep, type, rec))
		return;
	if (type == b->span)
		feed_span(sp, b, rec);
	else if (type == b->async)
		feed_async(sp, b, rec);
	else if (type == b->counter)
		feed_counter(sp, b, rec);
}

/* What is still begun: unpaired starts of its name. */
static void count_begun(const void *node, VISIT which, void *closure)
{
	struct thread *t = *(struct thread *const *)node;
	struct usertp__series *s;

	if (which != postorder && which != leaf)
		return;
	for (unsigned int i = 0; i < t->depth; i++)
		if ((s = series(closure, "span", t->stack[i].name)))
			s->unpaired_starts++;
}

static void count_waiting(const char *key, void *arg)
{
	char name[NAME_MAX_LEN + 32];
	struct usertp__series *s;

	snprintf(name, sizeof(name), "%.*s", (int)strcspn(key, "\t"), key);
	if ((s = series(arg, "async", name)))
		s->unpaired_starts++;
}

static int compare_series(const void *a, const void *b)
{
	static const char *order[] = { "span", "async", "instant", "counter" };
	const struct usertp__series *x = *(struct usertp__series *const *)a;
	const struct usertp__series *y = *(struct usertp__series *const *)b;
	int kx = 0, ky = 0;

	for (int k = 0; k < 4; k++) {
		kx = strcmp(x->kind, order[k]) ? kx : k;
		ky = strcmp(y->kind, order[k]) ? ky : k;
	}
	return kx != ky ? kx - ky : strcmp(x->name, y->name);
}

void usertp__spans_print(FILE *out, struct usertp__spans *sp, enum usertp__summary_format format,
			 bool ns)
{
	twalk_r(sp->threads, count_begun, sp);
	usertp__pairing_each(&sp->async, count_waiting, sp);
	usertp__pairing_free(&sp->async);
	qsort(sp->all, (size_t)sp->nr_all, sizeof(*sp->all), compare_series);
	usertp__series_print(out, sp->all, (int)sp->nr_all, format, ns);
}
