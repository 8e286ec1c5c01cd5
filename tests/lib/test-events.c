/* SPDX-License-Identifier: MIT */
/*
 * test-events.c - every TRACE_EVENT feature end to end: the header in fixtures/trace-all.h
 * is compiled here (as C, and as C++ by the same file built as test-events-cxx), its events
 * are recorded through a listener, and for every record usertp's own printing is compared
 * with libtraceevent's printing of the same bytes through the format text usertp wrote.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CREATE_TRACE_POINTS
#include "trace-all.h"

#include <event-parse.h>
#include <usertp/usertp.h>

#include "../harness.h"

static int fn_regs, fn_unregs;

int test_fn_reg(void)
{
	fn_regs++;
	return 0;
}

void test_fn_unreg(void)
{
	fn_unregs++;
}

struct captured {
	const struct usertp_event *ev;
	unsigned int size;
	unsigned char data[USERTP_RECORD_MAX] __attribute__((aligned(8)));
};

static struct captured recs[64];
static int nr_recs;

static void capture(const struct usertp_event *ev, const void *record, unsigned int size,
		    void *arg)
{
	(void)arg;
	if (nr_recs < 64) {
		recs[nr_recs].ev = ev;
		recs[nr_recs].size = size;
		memcpy(recs[nr_recs].data, record, size);
		nr_recs++;
	}
}

static void fire_strings(const char *str, const char *bytes, int len, const char *fmt, ...)
{
	va_list va;

	va_start(va, fmt);
	trace_t_strings(str, bytes, len, fmt, &va);
	va_end(va);
}

static int local_var;

static void fire_all(void)
{
	static const int arr[5] = { 1, -2, 3, 40000, -5 };
	static const unsigned long mask[2] = { 0xdeadbeefUL, 0x1UL };
	static const unsigned char buf[4] = { 0x01, 0x02, 0xfe, 0xff };
	struct test_pair pair = { 3, 4 };

	trace_t_scalars(-7, -1234567890123L, 4000000000u, 'A', 18000000000000000000ull, -300, true,
			&local_var, pair, "worker-thread-long-name");
	fire_strings("hello", "abcdefgh", 5, "n=%d s=%s", 42, "fmt");
	trace_t_dynamic(arr, 5, mask, 128, buf, 4);
	trace_t_dynamic(arr, 0, mask, 32, buf, 0);
	trace_t_helpers(1 | 4 | 0x100, TEST_LEVEL_HIGH, 0xbeef, 0x123456789abcULL);
	trace_t_helpers(0, 3, 0, 0);
	trace_t_rel("relative", arr, 3, mask, 64);
	trace_t_rel_len(arr, 3);
	trace_t_class_plain(5, "plain");
	trace_t_class_plain(6, NULL);
	trace_t_class_print(7, "print");
	trace_t_class_cond(-1, "skipped");
	trace_t_class_cond(8, "cond");
	trace_t_class_fn(9, "fn");
	trace_t_cond(1);
	trace_t_cond(2);
	trace_t_fn(10);
	trace_t_plain_text(11);
	trace_t_sizes(12);
}

static struct tep_handle *tep_new(void)
{
	struct tep_handle *tep = tep_alloc();

	tep_set_long_size(tep, (int)sizeof(long));
	tep_set_page_size(tep, 4096);
	tep_set_file_bigendian(tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, TEP_LITTLE_ENDIAN);
	return tep;
}

static int parse_one(const struct usertp_event *ev, void *arg)
{
	struct tep_handle *tep = (struct tep_handle *)arg;
	char text[8192];
	struct tep_event *tev = NULL;
	int len;

	if (strcmp(usertp_event_system(ev), "usertp-test"))
		return 0;
	len = usertp_event_format(ev, text, sizeof(text));
	CHECK(len > 0 && len < (int)sizeof(text));
	CHECK_INT(tep_parse_format(tep, &tev, text, (unsigned long)len, "usertp-test"), ==, 0);
	CHECK(tev != NULL);
	if (tev) {
		CHECK_INT(tev->id, ==, usertp_event_id(ev));
		if (tev->flags & TEP_EVENT_FL_FAILED)
			fprintf(stderr, "libtraceevent failed to parse:\n%s\n", text);
		CHECK(!(tev->flags & TEP_EVENT_FL_FAILED));
	}
	return 0;
}

static int count_events(const struct usertp_event *ev, void *arg)
{
	if (!strcmp(usertp_event_system(ev), "usertp-test"))
		(*(int *)arg)++;
	return 0;
}

static void test_print_matches_libtraceevent(void)
{
	struct usertp_listener *l = NULL;
	struct tep_handle *tep = tep_new();
	int i, n_events = 0;

	usertp_event_foreach(count_events, &n_events);
	CHECK_INT(n_events, ==, 14);
	usertp_event_foreach(parse_one, tep);

	nr_recs = 0;
	CHECK_INT(usertp_listener_create("usertp-test:*", capture, NULL, &l), ==, 0);
	fire_all();
	usertp_listener_destroy(l);
	/* Everything but the two calls whose condition is false. */
	CHECK_INT(nr_recs, ==, 17);

	for (i = 0; i < nr_recs; i++) {
		const struct usertp_trace_entry *ent = (const struct usertp_trace_entry *)recs[i].data;
		struct tep_record rec;
		struct trace_seq seq;
		char ours[4096];
		int n;

		CHECK_INT(ent->type, ==, usertp_event_id(recs[i].ev));
		CHECK_INT(ent->pid, ==, syscall(SYS_gettid));
		n = usertp_event_print(recs[i].ev, recs[i].data, recs[i].size, ours, sizeof(ours));
		CHECK_INT(n, ==, (int)strlen(ours));

		/* libtraceevent 1.7.1 crashes on __get_rel_dynamic_array_len(): checked below. */
		if (!strcmp(usertp_event_name(recs[i].ev), "t_rel_len"))
			continue;
		memset(&rec, 0, sizeof(rec));
		rec.data = recs[i].data;
		rec.size = (int)recs[i].size;
		trace_seq_init(&seq);
		tep_print_event(tep, &seq, &rec, "%s", TEP_PRINT_INFO);
		trace_seq_terminate(&seq);
		CHECK_STR(ours, seq.buffer);
		if (getenv("VERBOSE"))
			printf("%s: %s\n", usertp_event_name(recs[i].ev), ours);
		trace_seq_destroy(&seq);
	}
	tep_free(tep);
}

static const struct captured *find_rec(const char *name, int nth)
{
	int i;

	for (i = 0; i < nr_recs; i++)
		if (!strcmp(usertp_event_name(recs[i].ev), name) && nth-- == 0)
			return &recs[i];
	return NULL;
}

static void print_rec(const char *name, int nth, char *out, size_t size)
{
	const struct captured *c = find_rec(name, nth);

	snprintf(out, size, "(missing)");
	if (c)
		usertp_event_print(c->ev, c->data, c->size, out, size);
}

/* What the records say, checked against the arguments (not only against libtraceevent). */
static void test_record_contents(void)
{
	char text[4096], expect[256];

	print_rec("t_scalars", 0, text, sizeof(text));
	snprintf(expect, sizeof(expect),
		 "i=-7 l=-1234567890123 u=4000000000 c=65 ull=18000000000000000000 s=-300 b=1 "
		 "p=%p name=worker-thre nums=4294967289 4294967282 4294967275",
		 (void *)&local_var);
	CHECK_STR(text, expect);
	print_rec("t_strings", 0, text, sizeof(text));
	CHECK_STR(text, "str=hello old=hello bytes=abcde msg=n=42 s=fmt");
	print_rec("t_dynamic", 0, text, sizeof(text));
	CHECK_STR(text, "n=5 len=20 arr=1 4294967294 3 40000 4294967291 "
			"mask=00000000,00000001,00000000,deadbeef "
			"hex=01 02 fe ff hexstr=0102feff");
	print_rec("t_dynamic", 1, text, sizeof(text));
	CHECK_STR(text, "n=0 len=0 arr= mask=00000000,deadbeef hex= hexstr=");
	print_rec("t_helpers", 0, text, sizeof(text));
	CHECK_STR(text, "flags=READ|SYNC|0x100 level=high wides=48879 48880 "
			"bigs=20015998343868 320255973501888");
	print_rec("t_helpers", 1, text, sizeof(text));
	CHECK_STR(text, "flags= level=0x3 wides=0 1 bigs=0 0");
	print_rec("t_rel", 0, text, sizeof(text));
	CHECK_STR(text, "str=relative part=rel mask=00000000,deadbeef");
	print_rec("t_rel_len", 0, text, sizeof(text));
	CHECK_STR(text, "len=12 arr=1 4294967294 3");
	print_rec("t_class_plain", 1, text, sizeof(text));
	CHECK_STR(text, "a=6 who=(null)");
	print_rec("t_class_print", 0, text, sizeof(text));
	CHECK_STR(text, "only a=7");
	print_rec("t_class_cond", 0, text, sizeof(text));
	CHECK_STR(text, "a=8 who=cond");
	CHECK(find_rec("t_class_cond", 1) == NULL);
	print_rec("t_cond", 0, text, sizeof(text));
	CHECK_STR(text, "x=2");
	CHECK(find_rec("t_cond", 1) == NULL);
	print_rec("t_plain_text", 0, text, sizeof(text));
	CHECK_STR(text, "no arguments at all");
	print_rec("t_sizes", 0, text, sizeof(text));
	CHECK_STR(text, "x=12 pair=8 ushort=2");
}

/* The format text: kernel layout, offsets from the compiler's own struct. */
static void test_format_text(void)
{
	const struct usertp_event *ev = usertp_event_find("usertp-test", "t_scalars");
	char text[8192], line[256];

	CHECK(ev != NULL);
	if (!ev)
		return;
	usertp_event_format(ev, text, sizeof(text));
	snprintf(line, sizeof(line), "name: t_scalars\nID: %d\nformat:\n"
		 "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n",
		 usertp_event_id(ev));
	CHECK(!strncmp(text, line, strlen(line)));
	snprintf(line, sizeof(line), "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		 "\tfield:int i;\toffset:8;\tsize:4;\tsigned:1;\n"
		 "\tfield:long l;\toffset:%zu;\tsize:8;\tsigned:1;\n",
		 offsetof(struct trace_event_raw_t_scalars, l));
	CHECK(strstr(text, line) != NULL);
	snprintf(line, sizeof(line), "\tfield:char name[12];\toffset:%zu;\tsize:12;\tsigned:0;\n",
		 offsetof(struct trace_event_raw_t_scalars, name));
	CHECK(strstr(text, line) != NULL);
	snprintf(line, sizeof(line), "\tfield:struct test_pair pair;\toffset:%zu;\tsize:8;\tsigned:0;\n",
		 offsetof(struct trace_event_raw_t_scalars, pair));
	CHECK(strstr(text, line) != NULL);
	snprintf(line, sizeof(line), "\tfield:const void * p;\toffset:%zu;\tsize:8;\tsigned:0;\n",
		 offsetof(struct trace_event_raw_t_scalars, p));
	CHECK(strstr(text, line) != NULL);
	CHECK(strstr(text, "\tfield:char c;\toffset:") != NULL);
	CHECK(strstr(text, "\tfield:int nums[3];\toffset:") != NULL);

	ev = usertp_event_find("usertp-test", "t_class_plain");
	usertp_event_format(ev, text, sizeof(text));
	snprintf(line, sizeof(line), "\tfield:__data_loc char[] who;\toffset:%zu;\tsize:4;\tsigned:0;\n"
		 "\nprint fmt: \"a=%%d who=%%s\", REC->a, __get_str(who)\n",
		 offsetof(struct trace_event_raw_t_class, __data_loc_who));
	CHECK(strstr(text, line) != NULL);

	ev = usertp_event_find("usertp-test", "t_helpers");
	usertp_event_format(ev, text, sizeof(text));
	CHECK(strstr(text, "__print_symbolic(REC->level, { 1, \"low\" }, { 7, \"high\" })") != NULL);

	ev = usertp_event_find("usertp-test", "t_rel");
	usertp_event_format(ev, text, sizeof(text));
	CHECK(strstr(text, "\tfield:__rel_loc char[] str;\toffset:8;\tsize:4;\tsigned:0;\n") != NULL);
	CHECK(strstr(text, "\tfield:__rel_loc unsigned long[] mask;\toffset:20;") != NULL);

	ev = usertp_event_find("usertp-test", "t_plain_text");
	usertp_event_format(ev, text, sizeof(text));
	CHECK(strstr(text, "\nprint fmt: \"no arguments at all\"\n") != NULL);

	ev = usertp_event_find("usertp-test", "t_sizes");
	usertp_event_format(ev, text, sizeof(text));
	CHECK(strstr(text, "print fmt: \"x=%d pair=%d ushort=%d\", REC->x, (int)8, (int)2\n") != NULL);

	ev = usertp_event_find("usertp-test", "t_plain_text");
	/* snprintf-like: the length does not depend on the buffer. */
	CHECK_INT(usertp_event_format(ev, line, 10), ==, usertp_event_format(ev, text, sizeof(text)));
	CHECK_INT(strlen(line), ==, 9);
}

static int evaluated;
static int side_effect(void)
{
	return ++evaluated;
}

static void count_probe(void *data, int x)
{
	(void)x;
	(*(int *)data)++;
}

static int order[8], nr_order;
static void order_probe(void *data, int x)
{
	(void)x;
	order[nr_order++] = (int)(long)data;
}

static void test_tracepoint_api(void)
{
	int hits = 0;

	/* Off: usertp_trace() does not evaluate the arguments, and nothing runs. */
	CHECK(!trace_t_cond_enabled());
	usertp_trace(t_cond, side_effect());
	CHECK_INT(evaluated, ==, 0);

	CHECK_INT(register_trace_t_cond(count_probe, &hits), ==, 0);
	CHECK(trace_t_cond_enabled());
	CHECK_INT(register_trace_t_cond(count_probe, &hits), ==, -EEXIST);
	usertp_trace(t_cond, side_effect() * 2); /* even: the condition holds */
	CHECK_INT(evaluated, ==, 1);
	CHECK_INT(hits, ==, 1);
	trace_t_cond(3); /* odd: the condition stops it */
	CHECK_INT(hits, ==, 1);
	CHECK_INT(unregister_trace_t_cond(count_probe, &hits), ==, 0);
	CHECK_INT(unregister_trace_t_cond(count_probe, &hits), ==, -ENOENT);
	tracepoint_synchronize_unregister();
	CHECK(!trace_t_cond_enabled());
	trace_t_cond(4);
	CHECK_INT(hits, ==, 1);

	/* Priorities: higher first, equal ones in registration order. */
	CHECK_INT(register_trace_prio_t_cond(order_probe, (void *)1, 10), ==, 0);
	CHECK_INT(register_trace_prio_t_cond(order_probe, (void *)2, 20), ==, 0);
	CHECK_INT(register_trace_prio_t_cond(order_probe, (void *)3, 10), ==, 0);
	CHECK_INT(register_trace_prio_t_cond(order_probe, (void *)4, 5), ==, 0);
	CHECK_INT(register_trace_t_cond(order_probe, (void *)5), ==, 0);
	/* A failed call changes nothing. */
	CHECK_INT(register_trace_prio_t_cond(order_probe, (void *)3, 99), ==, -EEXIST);
	trace_t_cond(0);
	CHECK_INT(nr_order, ==, 5);
	CHECK(order[0] == 2 && order[1] == 1 && order[2] == 3 && order[3] == 5 && order[4] == 4);
	for (long i = 1; i <= 5; i++)
		CHECK_INT(unregister_trace_t_cond(order_probe, (void *)i), ==, 0);
	tracepoint_synchronize_unregister();
	CHECK(!trace_t_cond_enabled());
}

static void test_reg_unreg_callbacks(void)
{
	struct usertp_listener *l1 = NULL, *l2 = NULL;
	int hits = 0;

	fn_regs = fn_unregs = 0;
	CHECK_INT(usertp_listener_create("t_fn", capture, NULL, &l1), ==, 0);
	CHECK_INT(fn_regs, ==, 1);
	CHECK_INT(register_trace_t_fn(count_probe, &hits), ==, 0);
	CHECK_INT(fn_regs, ==, 1);
	CHECK_INT(usertp_listener_create("usertp-test:t_fn", capture, NULL, &l2), ==, 0);
	trace_t_fn(1);
	CHECK_INT(hits, ==, 1);
	usertp_listener_destroy(l1);
	usertp_listener_destroy(l2);
	CHECK_INT(fn_unregs, ==, 0);
	CHECK_INT(unregister_trace_t_fn(count_probe, &hits), ==, 0);
	CHECK_INT(fn_unregs, ==, 1);
}

static void test_specs(void)
{
	struct usertp_listener *l = NULL;
	static const char *bad[] = { "*", "!", "a:b:c", "usertp-test:t_*", "*usertp*", "!!t_fn" };
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		l = NULL;
		CHECK_INT(usertp_listener_create(bad[i], capture, NULL, &l), ==, -EINVAL);
		CHECK(l == NULL);
	}
	/* "!" takes events out again; a system name alone selects the whole system. */
	nr_recs = 0;
	CHECK_INT(usertp_listener_create("usertp-test, !t_cond !usertp-test:t_fn", capture, NULL,
					 &l), ==, 0);
	CHECK(!trace_t_cond_enabled());
	CHECK(!trace_t_fn_enabled());
	CHECK(trace_t_plain_text_enabled());
	usertp_listener_destroy(l);
	CHECK_INT(usertp_listener_create(":t_cond *:t_fn", capture, NULL, &l), ==, 0);
	CHECK(trace_t_cond_enabled());
	CHECK(trace_t_fn_enabled());
	CHECK(!trace_t_plain_text_enabled());
	usertp_listener_destroy(l);
	CHECK(!trace_t_cond_enabled());
}

static void test_limits_and_bad_records(void)
{
	struct usertp_listener *l = NULL;
	char *longstr = (char *)malloc(5000);
	char text[4096];
	struct captured bad;
	uint32_t loc;

	memset(longstr, 'x', 4999);
	longstr[4999] = '\0';
	nr_recs = 0;
	CHECK_INT(usertp_listener_create("t_class_plain", capture, NULL, &l), ==, 0);
	trace_t_class_plain(1, longstr);
	usertp_listener_destroy(l);
	free(longstr);
	CHECK_INT(nr_recs, ==, 1);
	usertp_event_print(recs[0].ev, recs[0].data, recs[0].size, text, sizeof(text));
	CHECK_INT(strlen(text), ==, strlen("a=1 who=") + USERTP_STRING_MAX - 1);

	/* A location word pointing outside the record, or an unterminated string: refused. */
	bad = recs[0];
	memcpy(&loc, bad.data + offsetof(struct trace_event_raw_t_class, __data_loc_who), 4);
	loc += 8;
	memcpy(bad.data + offsetof(struct trace_event_raw_t_class, __data_loc_who), &loc, 4);
	CHECK_INT(usertp_event_print(bad.ev, bad.data, bad.size, text, sizeof(text)), ==, -EINVAL);
	bad = recs[0];
	bad.data[bad.size - 1] = 'x';
	CHECK_INT(usertp_event_print(bad.ev, bad.data, bad.size, text, sizeof(text)), ==, -EINVAL);
	CHECK_INT(usertp_event_print(bad.ev, bad.data, 4, text, sizeof(text)), ==, -EINVAL);
}

int main(void)
{
	test_print_matches_libtraceevent();
	test_record_contents();
	test_format_text();
	test_tracepoint_api();
	test_reg_unreg_callbacks();
	test_specs();
	test_limits_and_bad_records();
	return harness_done();
}
