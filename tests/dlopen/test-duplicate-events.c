/* SPDX-License-Identifier: MIT */
/*
 * test-duplicate-events.c - one event (dupsys:dup_ev) defined by several libraries.
 *
 * The libraries (see CMakeLists.txt):
 *	dup-a	dup-lib.c, default visibility
 *	dup-b	dup-lib.c, default visibility linked with -Wl,-Bsymbolic: always its own
 *		tracepoint object (and so is dup-f)
 *	dup-e	dup-lib.c, hidden visibility: its own tracepoint object, nothing exported
 *	dup-d	dup-lib.c, default visibility: its tracepoint is interposed by dup-a's when
 *		dup-a was opened RTLD_GLOBAL first (the two then share one tracepoint)
 *	dup-alt	dup-alt.c: the same system:name with a different format, plus
 *		dupsys:dup_alt_only
 *
 * What registry.c promises: no abort; one event with one id for the definitions of the
 * same format, each call recorded exactly once whichever library made it; the definition
 * with a different format ignored (not recorded, not replacing the first); when the first
 * definition is unloaded the next one takes over; when all are gone the event is gone.
 *
 * Run as "test-duplicate-events listener-first", the listeners exist before the second and
 * later definitions are loaded.  That order currently makes registry.c's event_add() read
 * the instance array it has just passed to realloc() (a use after free that ASan reports),
 * so ctest runs that variant as a disabled test until it is fixed; the default run creates
 * the listeners once every definition is loaded and checks everything else the same way.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <usertp/usertp.h>

#include "../harness.h"
#include "dup-lib.h"

#define MAX_RECS 16

/* Whether listeners are created before the later definitions are loaded (see above). */
static bool listener_first;

struct rec {
	int listener;
	const struct usertp_event *ev;
	unsigned int size;
	unsigned char data[256];
};
static struct rec recs[MAX_RECS];
static int nr_recs, recs_overflow;

static void on_record(const struct usertp_event *ev, const void *record, unsigned int size,
		      void *arg)
{
	struct rec *r;

	if (nr_recs >= MAX_RECS || size > sizeof(recs[0].data)) {
		recs_overflow++;
		return;
	}
	r = &recs[nr_recs++];
	r->listener = (int)(intptr_t)arg;
	r->ev = ev;
	r->size = size;
	memcpy(r->data, record, size);
}

/* One record a call should produce. */
struct expect {
	int listener;
	const char *name;
	int id;
	const char *text;
	const struct usertp_event *ev; /* the handle the listener must get (NULL: any) */
};

static void *load(const char *path, int flags)
{
	void *h = dlopen(path, flags);

	CHECK(h != NULL);
	if (!h)
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
	return h;
}

static void unload(void *h)
{
	if (h)
		CHECK_INT(dlclose(h), ==, 0);
}

static struct usertp_tracepoint *lib_tracepoint(void *h)
{
	dup_tracepoint_fn fn = h ? (dup_tracepoint_fn)dlsym(h, DUP_TRACEPOINT) : NULL;

	CHECK(fn != NULL);
	return fn ? fn() : NULL;
}

/*
 * Call dup_fire(seq) of the library @h and check that exactly the records in @exp (in any
 * order) arrived: so each call is recorded once per listener, never twice, never missed.
 */
static void fire_expect(const char *what, void *h, int seq, const struct expect *exp, int n)
{
	dup_fire_fn fire = h ? (dup_fire_fn)dlsym(h, DUP_FIRE) : NULL;
	bool used[MAX_RECS] = { false };
	int i, j, failed = harness_failed;

	CHECK(fire != NULL);
	if (!fire)
		return;
	nr_recs = 0;
	fire(seq);
	CHECK_INT(nr_recs, ==, n);
	for (i = 0; i < n; i++) {
		bool found = false;

		for (j = 0; j < nr_recs && !found; j++) {
			const struct rec *r = &recs[j];
			const struct usertp_trace_entry *ent = (const void *)r->data;
			char text[256];

			if (used[j] || r->listener != exp[i].listener ||
			    strcmp(usertp_event_name(r->ev), exp[i].name))
				continue;
			found = used[j] = true;
			CHECK_INT(ent->type, ==, exp[i].id);
			if (exp[i].ev)
				CHECK(r->ev == exp[i].ev);
			CHECK_INT(usertp_event_print(r->ev, r->data, r->size, text, sizeof(text)), ==,
				  (int)strlen(exp[i].text));
			CHECK_STR(text, exp[i].text);
		}
		CHECK(found);
	}
	if (harness_failed != failed) {
		fprintf(stderr, "  ... after %s(%d); records received:\n", what, seq);
		for (j = 0; j < nr_recs; j++) {
			char text[256] = "";

			usertp_event_print(recs[j].ev, recs[j].data, recs[j].size, text,
					   sizeof(text));
			fprintf(stderr, "  listener %d %s: %s\n", recs[j].listener,
				usertp_event_name(recs[j].ev), text);
		}
	}
}

struct count_arg {
	const char *name;
	int n;
};

static int count_cb(const struct usertp_event *ev, void *arg)
{
	struct count_arg *c = arg;

	if (!strcmp(usertp_event_system(ev), "dupsys") && !strcmp(usertp_event_name(ev), c->name))
		c->n++;
	return 0;
}

/* How many events usertp_event_foreach() lists as dupsys:@name. */
static int count_events(const char *name)
{
	struct count_arg c = { name, 0 };

	usertp_event_foreach(count_cb, &c);
	return c.n;
}

/* The event's format is dup-trace.h's, not dup-trace-alt.h's. */
static void check_format_is_first(const struct usertp_event *ev)
{
	char text[4096];
	int len = usertp_event_format(ev, text, sizeof(text));

	CHECK(len > 0 && len < (int)sizeof(text));
	if (len <= 0)
		return;
	CHECK(strstr(text, "name: dup_ev\n") != NULL);
	CHECK(strstr(text, "field:int lib;") != NULL);
	CHECK(strstr(text, "field:__data_loc char[] who;") != NULL);
	CHECK(strstr(text, "value") == NULL);
	CHECK(strstr(text, "print fmt: \"lib=%d seq=%d who=%s\"") != NULL);
}

#define L(listener, name, id, text, ev)                                                            \
	{                                                                                          \
		listener, name, id, text, ev                                                       \
	}

/* One of the libraries that define dupsys:dup_ev with dup-trace.h. */
struct lib {
	const char *path;
	int id; /* DUP_LIB_ID */
	const char *who;
	void *h;
	struct usertp_tracepoint *tp;
};

/*
 * Fire dup_ev from @lib and check that each of the listeners 1..@nr_listeners got exactly
 * one record of it, with the event's @id and handed over as @ev.
 */
static void fire_lib(const struct lib *lib, int seq, int nr_listeners,
		     const struct usertp_event *ev, int id)
{
	char text[64];
	struct expect exp[2];
	int i;

	snprintf(text, sizeof(text), "lib=%d seq=%d who=%s", lib->id, seq, lib->who);
	for (i = 0; i < nr_listeners; i++)
		exp[i] = (struct expect)L(i + 1, "dup_ev", id, text, ev);
	fire_expect(lib->who, lib->h, seq, exp, nr_listeners);
}

/*
 * Phase 1: every definition opened RTLD_LOCAL, each with its own tracepoint object: dup-a
 * (default visibility), dup-b and dup-f (-Bsymbolic), dup-e (hidden visibility), and
 * dup-alt with the different format, loaded between them.
 */
static void test_local_definitions(void)
{
	struct lib libs[4] = {
		{ DUP_A_PATH, 1, "dup-a", NULL, NULL },
		{ DUP_B_PATH, 2, "dup-b", NULL, NULL },
		{ DUP_E_PATH, 5, "dup-e", NULL, NULL },
		{ DUP_F_PATH, 6, "dup-f", NULL, NULL },
	};
	struct lib *a = &libs[0], *b = &libs[1], *e = &libs[2], *f = &libs[3];
	struct usertp_listener *l1 = NULL, *l2 = NULL;
	const struct usertp_event *ev_a, *ev_b, *ev_f, *alt;
	struct usertp_tracepoint *tp_c;
	void *hc;
	int id, alt_id, seq = 0, i, j;

	CHECK(usertp_event_find("dupsys", "dup_ev") == NULL);
	if (listener_first)
		CHECK_INT(usertp_listener_create("dupsys:*", on_record, (void *)1, &l1), ==, 0);

	a->h = load(a->path, RTLD_NOW | RTLD_LOCAL);
	ev_a = usertp_event_find("dupsys", "dup_ev");
	CHECK(ev_a != NULL);
	if (!a->h || !ev_a)
		return;
	id = usertp_event_id(ev_a);
	CHECK_INT(id, >, 0);

	b->h = load(b->path, RTLD_NOW | RTLD_LOCAL);
	hc = load(DUP_ALT_PATH, RTLD_NOW | RTLD_LOCAL);
	e->h = load(e->path, RTLD_NOW | RTLD_LOCAL);
	f->h = load(f->path, RTLD_NOW | RTLD_LOCAL);
	if (!b->h || !hc || !e->h || !f->h)
		return;

	/* One event, still the first definition, same id; the alternative did not replace it. */
	CHECK(usertp_event_find("dupsys", "dup_ev") == ev_a);
	CHECK_INT(usertp_event_id(ev_a), ==, id);
	CHECK_INT(count_events("dup_ev"), ==, 1);
	check_format_is_first(ev_a);
	alt = usertp_event_find("dupsys", "dup_alt_only");
	CHECK(alt != NULL);
	alt_id = usertp_event_id(alt);
	CHECK(alt_id > 0 && alt_id != id);

	/* Five tracepoint objects. */
	tp_c = lib_tracepoint(hc);
	CHECK(tp_c != NULL);
	if (!tp_c)
		return;
	for (i = 0; i < 4; i++) {
		libs[i].tp = lib_tracepoint(libs[i].h);
		if (!libs[i].tp)
			return;
		CHECK(libs[i].tp != tp_c);
		for (j = 0; j < i; j++)
			CHECK(libs[i].tp != libs[j].tp);
	}
	if (!listener_first) {
		for (i = 0; i < 4; i++)
			CHECK_INT(libs[i].tp->enabled, ==, 0);
		CHECK_INT(usertp_listener_create("dupsys:*", on_record, (void *)1, &l1), ==, 0);
	}
	CHECK_INT(usertp_event_id(ev_a), ==, id);

	/* The listener switched on every same-format definition, and only those. */
	for (i = 0; i < 4; i++)
		CHECK_INT(libs[i].tp->enabled, ==, 1);
	CHECK_INT(tp_c->enabled, ==, 0);
	CHECK(tp_c->probes == NULL);
	{
		const struct expect c[] = { L(1, "dup_alt_only", alt_id, "seq=100", alt) };

		for (i = 0; i < 4; i++)
			fire_lib(&libs[i], ++seq, 1, ev_a, id);
		fire_expect("dup-alt", hc, 100, c, 1);
	}

	/* A second listener, created while all definitions are there: once each, too. */
	CHECK_INT(usertp_listener_create("dup_ev", on_record, (void *)2, &l2), ==, 0);
	{
		const struct expect c[] = { L(1, "dup_alt_only", alt_id, "seq=101", alt) };

		for (i = 0; i < 4; i++)
			fire_lib(&libs[i], ++seq, 2, ev_a, id);
		fire_expect("dup-alt", hc, 101, c, 1);
	}
	CHECK_INT(tp_c->enabled, ==, 0);
	usertp_listener_destroy(l2);
	for (i = 0; i < 4; i++)
		fire_lib(&libs[i], ++seq, 1, ev_a, id);

	/* The first definition goes: the next one (dup-b's) takes over, with the same id. */
	unload(a->h);
	ev_b = usertp_event_find("dupsys", "dup_ev");
	CHECK(ev_b != NULL);
	if (!ev_b)
		return;
	CHECK_INT(usertp_event_id(ev_b), ==, id);
	CHECK_INT(count_events("dup_ev"), ==, 1);
	check_format_is_first(ev_b);
	CHECK_INT(tp_c->enabled, ==, 0);
	{
		const struct expect c[] = { L(1, "dup_alt_only", alt_id, "seq=102", alt) };

		for (i = 1; i < 4; i++) {
			CHECK_INT(libs[i].tp->enabled, ==, 1);
			fire_lib(&libs[i], ++seq, 1, ev_b, id);
		}
		fire_expect("dup-alt", hc, 102, c, 1);
	}

	/* The different definition goes: nothing changes for dup_ev. */
	unload(hc);
	CHECK(usertp_event_find("dupsys", "dup_alt_only") == NULL);
	CHECK(usertp_event_find("dupsys", "dup_ev") == ev_b);
	CHECK_INT(usertp_event_id(ev_b), ==, id);
	for (i = 1; i < 4; i++)
		fire_lib(&libs[i], ++seq, 1, ev_b, id);

	/* One from the middle goes. */
	unload(e->h);
	CHECK(usertp_event_find("dupsys", "dup_ev") == ev_b);
	fire_lib(b, ++seq, 1, ev_b, id);
	fire_lib(f, ++seq, 1, ev_b, id);

	/* The describing one goes again: dup-f's is the last. */
	unload(b->h);
	ev_f = usertp_event_find("dupsys", "dup_ev");
	CHECK(ev_f != NULL);
	if (!ev_f)
		return;
	CHECK_INT(usertp_event_id(ev_f), ==, id);
	CHECK_INT(count_events("dup_ev"), ==, 1);
	check_format_is_first(ev_f);
	fire_lib(f, ++seq, 1, ev_f, id);

	/* The last one goes: so does the event. */
	unload(f->h);
	CHECK(usertp_event_find("dupsys", "dup_ev") == NULL);
	CHECK_INT(count_events("dup_ev"), ==, 0);
	CHECK_INT(usertp_listener_lost(l1), ==, 0);
	usertp_listener_destroy(l1);
}

struct direct_probe {
	int calls;
	int last_lib, last_seq;
};

/* A probe attached straight to dup-a's tracepoint with register_trace-style calls. */
static void direct_probe(void *data, int lib, int seq, const char *who)
{
	struct direct_probe *d = data;

	(void)who;
	d->calls++;
	d->last_lib = lib;
	d->last_seq = seq;
}

/*
 * Phase 2: dup-a opened RTLD_GLOBAL, so that dup-d's references to __tracepoint_dup_ev
 * and __traceiter_dup_ev bind to dup-a's: two event definitions on ONE tracepoint object,
 * whose probe must still record each call once.  dup-b (-Bsymbolic) keeps its own.  The
 * listener is created after the libraries this time; dup-d leaves under it and comes back
 * while the shared tracepoint is on.
 */
static void test_shared_tracepoint(void)
{
	struct usertp_listener *l = NULL;
	struct usertp_tracepoint *tp_a, *tp_b, *tp_d;
	const struct usertp_event *ev;
	struct direct_probe direct = { 0, 0, 0 };
	void *ha, *hb, *hd;
	int id;

	ha = load(DUP_A_PATH, RTLD_NOW | RTLD_GLOBAL);
	hd = load(DUP_D_PATH, RTLD_NOW | RTLD_LOCAL);
	hb = load(DUP_B_PATH, RTLD_NOW | RTLD_LOCAL);
	if (!ha || !hd || !hb)
		return;
	tp_a = lib_tracepoint(ha);
	tp_d = lib_tracepoint(hd);
	tp_b = lib_tracepoint(hb);
	CHECK(tp_a != NULL && tp_d == tp_a); /* interposed */
	CHECK(tp_b != NULL && tp_b != tp_a); /* -Bsymbolic */
	if (!tp_a || tp_d != tp_a || !tp_b)
		return;

	ev = usertp_event_find("dupsys", "dup_ev");
	CHECK(ev != NULL);
	if (!ev)
		return;
	id = usertp_event_id(ev);
	CHECK_INT(id, >, 0);
	CHECK_INT(count_events("dup_ev"), ==, 1);
	CHECK_INT(tp_a->enabled, ==, 0);

	CHECK_INT(usertp_listener_create("dupsys:dup_ev", on_record, (void *)3, &l), ==, 0);
	CHECK_INT(tp_a->enabled, ==, 1);
	CHECK_INT(tp_b->enabled, ==, 1);
	/* One probe on the shared tracepoint, not one per definition. */
	CHECK(tp_a->probes && tp_a->probes[0].func && !tp_a->probes[1].func);
	{
		const struct expect a[] = { L(3, "dup_ev", id, "lib=1 seq=20 who=dup-a", ev) };
		const struct expect d[] = { L(3, "dup_ev", id, "lib=4 seq=21 who=dup-d", ev) };
		const struct expect b[] = { L(3, "dup_ev", id, "lib=2 seq=22 who=dup-b", ev) };

		fire_expect("dup-a", ha, 20, a, 1);
		fire_expect("dup-d", hd, 21, d, 1);
		fire_expect("dup-b", hb, 22, b, 1);
	}

	/* dup-d leaves: dup-a's tracepoint, which it shared, stays on. */
	unload(hd);
	CHECK(usertp_event_find("dupsys", "dup_ev") == ev);
	CHECK_INT(tp_a->enabled, ==, 1);
	{
		const struct expect a[] = { L(3, "dup_ev", id, "lib=1 seq=23 who=dup-a", ev) };
		const struct expect b[] = { L(3, "dup_ev", id, "lib=2 seq=24 who=dup-b", ev) };

		fire_expect("dup-a", ha, 23, a, 1);
		fire_expect("dup-b", hb, 24, b, 1);
	}

	/*
	 * dup-d comes back while the shared tracepoint is on (a probe of our own keeps it on
	 * even without the listener): dup-d's sites must follow it from the start.
	 */
	CHECK_INT(tracepoint_probe_register(tp_a, (void *)direct_probe, &direct), ==, 0);
	if (!listener_first) {
		usertp_listener_destroy(l);
		l = NULL;
	}
	CHECK_INT(tp_a->enabled, ==, 1);
	hd = load(DUP_D_PATH, RTLD_NOW | RTLD_LOCAL);
	if (!hd)
		return;
	CHECK(lib_tracepoint(hd) == tp_a);
	CHECK_INT(count_events("dup_ev"), ==, 1);
	if (!listener_first) {
		const struct expect none[1] = { L(0, "", 0, "", NULL) };

		fire_expect("dup-d", hd, 30, none, 0);
		CHECK_INT(direct.calls, ==, 1);
		CHECK_INT(direct.last_lib, ==, 4);
		CHECK_INT(direct.last_seq, ==, 30);
		CHECK_INT(usertp_listener_create("dupsys:dup_ev", on_record, (void *)3, &l), ==,
			  0);
	}
	/* Our probe and the listener's: two probes, not one per event definition. */
	CHECK(tp_a->probes && tp_a->probes[0].func && tp_a->probes[1].func &&
	      !tp_a->probes[2].func);
	direct.calls = 0;
	{
		const struct expect d[] = { L(3, "dup_ev", id, "lib=4 seq=25 who=dup-d", ev) };
		const struct expect a[] = { L(3, "dup_ev", id, "lib=1 seq=26 who=dup-a", ev) };

		fire_expect("dup-d", hd, 25, d, 1);
		fire_expect("dup-a", ha, 26, a, 1);
	}
	CHECK_INT(direct.calls, ==, 2);
	CHECK_INT(tracepoint_probe_unregister(tp_a, (void *)direct_probe, &direct), ==, 0);
	CHECK(tp_a->probes && tp_a->probes[0].func && !tp_a->probes[1].func);

	/*
	 * dlclose() of dup-a: dup-d's bindings keep it loaded (glibc), so everything must go on
	 * as before.  Then dup-d's dlclose() unloads both, and dup-b's definition takes over.
	 */
	unload(ha);
	{
		const struct expect d[] = { L(3, "dup_ev", id, "lib=4 seq=27 who=dup-d", NULL) };
		const struct expect b[] = { L(3, "dup_ev", id, "lib=2 seq=28 who=dup-b", NULL) };

		CHECK(usertp_event_find("dupsys", "dup_ev") != NULL);
		fire_expect("dup-d", hd, 27, d, 1);
		fire_expect("dup-b", hb, 28, b, 1);
	}
	unload(hd);
	ev = usertp_event_find("dupsys", "dup_ev");
	CHECK(ev != NULL);
	CHECK_INT(usertp_event_id(ev), ==, id);
	CHECK_INT(tp_b->enabled, ==, 1);
	{
		const struct expect b[] = { L(3, "dup_ev", id, "lib=2 seq=29 who=dup-b", ev) };

		fire_expect("dup-b", hb, 29, b, 1);
	}
	unload(hb);
	CHECK(usertp_event_find("dupsys", "dup_ev") == NULL);
	CHECK_INT(count_events("dup_ev"), ==, 0);
	CHECK_INT(usertp_listener_lost(l), ==, 0);
	usertp_listener_destroy(l);
}

static void count_record(const struct usertp_event *ev, const void *record, unsigned int size,
			 void *arg)
{
	char text[128];

	if (usertp_event_print(ev, record, size, text, sizeof(text)) > 0 &&
	    !strcmp(usertp_event_name(ev), "dup_ev") && !strcmp(text, "value=77"))
		(*(int *)arg)++;
}

/*
 * The different-format definition waits: once every same-format definition is unloaded, it
 * becomes the event (with its own format) and is recorded; then it goes too.
 */
static void test_other_format_takes_over(void)
{
	void *ha = load(DUP_A_PATH, RTLD_NOW | RTLD_LOCAL);
	void *halt = load(DUP_ALT_PATH, RTLD_NOW | RTLD_LOCAL);
	struct usertp_listener *l = NULL;
	const struct usertp_event *ev;
	dup_fire_fn fire;
	char text[4096];
	int seen = 0;

	ev = usertp_event_find("dupsys", "dup_ev");
	CHECK(ev != NULL);
	if (ev)
		check_format_is_first(ev);
	CHECK_INT(usertp_listener_create("dupsys:dup_ev", count_record, &seen, &l), ==, 0);
	unload(ha);
	ev = usertp_event_find("dupsys", "dup_ev");
	CHECK(ev != NULL);
	if (ev) {
		usertp_event_format(ev, text, sizeof(text));
		CHECK(strstr(text, "\tfield:long value;") != NULL);
	}
	/* The listener's spec applies to the definition that took over. */
	fire = halt ? (dup_fire_fn)dlsym(halt, DUP_FIRE) : NULL;
	CHECK(fire != NULL);
	if (fire)
		fire(77);
	CHECK_INT(seen, ==, 1);
	usertp_listener_destroy(l);
	unload(halt);
	CHECK(usertp_event_find("dupsys", "dup_ev") == NULL);
}

int main(int argc, char **argv)
{
	listener_first = argc > 1 && !strcmp(argv[1], "listener-first");
	test_local_definitions();
	test_shared_tracepoint();
	test_other_format_takes_over();
	CHECK_INT(recs_overflow, ==, 0);
	return harness_done();
}
