/* SPDX-License-Identifier: MIT */
/*
 * test-filter - the filter compiler and evaluator (src/common/filter.c) against the tables of
 * docs/tracefs.md section 4: every error with its errno, message and caret (in the filter-file and
 * error_log forms), and accepted expressions with records that match and records that do not.
 *
 * The fields are sched_switch's (the event the reference observed the kernel with), plus an
 * event of our own with a __data_loc string, a __rel_loc string, unsigned and 1-, 2-, 8-byte
 * fields.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "filter-fields.h"
#include "format-field.h"

#include "../harness.h"

/* --- errors (docs/tracefs.md 4.5) ------------------------------------------------------------- */

static const struct {
	const char *text;
	int err;
	const char *msg; /* NULL: "Error: (0)" */
	int caret;	 /* column in the filter file */
} errors[] = {
	{ "nosuchfield == 1", -EINVAL, "Field not found", 12 },
	{ "common_pid == abc", -EINVAL, "Invalid value (did you forget quotes)?", 15 },
	{ "common_pid =! 1", -EINVAL, "Invalid operator", 12 },
	{ "common_pid", -EINVAL, "Invalid operator", 10 },
	{ "common_pid !~ \"x\"", -EINVAL, "Invalid operator", 12 },
	{ "COMM < \"a\"", -EINVAL, "Illegal operation for field type", 8 },
	{ "common_pid ~ 1", -EINVAL, "Illegal operation for field type", 14 },
	{ "common_pid == \"1\"", -EINVAL, "Expecting numeric field", 15 },
	{ "COMM == 1", -EINVAL, "Expecting string field", 9 },
	{ "(common_pid == 1", -ENOENT, "Too many '('", 0 },
	{ "((common_pid == 1", -ENOENT, "Too many '('", 1 },
	{ "(common_pid == 1 && (common_pid == 2)", -ENOENT, "Too many '('", 0 },
	{ "common_pid == 1)", -EPERM, "Too few '('", 15 },
	{ "COMM == \"abc", -ESRCH, "Missing matching quote", 8 },
	{ "common_pid == 1 | common_pid == 2", -EPERM, "Too many terms in predicate expression", 16 },
	{ "common_pid == 1 common_pid == 2", -EPERM, "Too many terms in predicate expression", 16 },
	{ "common_pid == 1.5", -EPERM, "Too many terms in predicate expression", 15 },
	{ "common_pid == 0x", -EINVAL, "Illegal integer value", 15 },
	{ "common_pid == 1x", -EINVAL, "Illegal integer value", 15 },
	{ "common_pid == 08", -EINVAL, "Illegal integer value", 15 },
	{ "common_pid == - 1", -EINVAL, "Illegal integer value", 15 },
	{ "common_pid == +1", -EINVAL, "Invalid value (did you forget quotes)?", 15 },
	{ "common_pid == 99999999999999999999", -EINVAL, "Illegal integer value", 15 },
	{ "common_pid == 1234567890123456789012345", -EINVAL, "Operand too long", 39 },
	{ "common_type == -1", -EINVAL, "Illegal integer value", 16 },
	{ "!", -EINVAL, "No filter found", 1 },
	{ "   ", -EINVAL, NULL, 0 },
	{ "()", -EINVAL, NULL, 0 },
	{ "&& common_pid == 1", -EPERM, NULL, 0 },
	{ "common_pid == 1 && ()", -EPERM, NULL, 0 },
	{ "common_pid == 1 && || common_pid == 2", -EPERM, NULL, 0 },
	{ "CPU & CPUS{", -EINVAL, "Missing '}'", 11 },
	{ "CPU & CPUS{}", -EINVAL, "Invalid cpulist", 12 },
	{ "CPU & CPUS{99999}", -EINVAL, "Invalid cpulist", 17 },
	{ "CPU & CPUS0", -EINVAL, "Missing '{'", 11 },
	{ "prev_pid.function == 1", -EINVAL, "Illegal operation for field type", 22 },
	/* The kernel takes these (a bug its selftests name): refused here. */
	{ "common_pid == 1 &&", -EINVAL, "Meaningless filter expression", 16 },
	{ "common_pid == 1 ||", -EINVAL, "Meaningless filter expression", 16 },
};

static void test_errors(void)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
		struct usertp__filter *f;
		struct usertp__filter_error e;
		char file[512], want[512], log[512], want_log[512];
		int ret = usertp__filter_compile(errors[i].text, sched_switch,
						 sizeof(sched_switch) / sizeof(sched_switch[0]), &f, &e);

		CHECK(ret == errors[i].err && ret == e.err, "[%s]: %d, want %d", errors[i].text, ret,
		      errors[i].err);
		CHECK(!f, "[%s]: a program for a refused filter", errors[i].text);
		usertp__filter_error_file(errors[i].text, &e, file, sizeof(file));
		if (errors[i].msg)
			snprintf(want, sizeof(want), "%s\n%*s^\nparse_error: %s\n\n", errors[i].text,
				 errors[i].caret, "", errors[i].msg);
		else
			snprintf(want, sizeof(want), "%s\nError: (0)\n\n", errors[i].text);
		CHECK(!strcmp(file, want), "[%s]: the filter file reads\n%swant\n%s", errors[i].text,
		      file, want);
		/* error_log: the caret at 11 + the parser's position. */
		if (errors[i].msg && errors[i].caret < (int)strlen(errors[i].text)) {
			usertp__filter_error_log(errors[i].text, &e, log, sizeof(log));
			snprintf(want_log, sizeof(want_log), "  Command: %s\n%*s^\n", errors[i].text,
				 11 + errors[i].caret, "");
			CHECK(!strcmp(log, want_log), "[%s]: error_log\n%swant\n%s", errors[i].text, log,
			      want_log);
		}
	}
}

/* --- matching ------------------------------------------------------------------------------ */

struct rec {
	unsigned char data[128];
	size_t size;
	unsigned int cpu;
	const char *comm;
};

static void put(struct rec *r, unsigned int off, const void *v, size_t n)
{
	memcpy(r->data + off, v, n);
}

/* A sched_switch record. */
static struct rec sched(int pid, const char *prev, int prev_pid, long state, const char *next,
			int next_pid, unsigned int cpu, const char *comm)
{
	struct rec r = { .size = 64, .cpu = cpu, .comm = comm };
	uint16_t type = 316;

	put(&r, 0, &type, 2);
	put(&r, 4, &pid, 4);
	strncpy((char *)r.data + 8, prev, 16);
	put(&r, 24, &prev_pid, 4);
	put(&r, 32, &state, 8);
	strncpy((char *)r.data + 40, next, 16);
	put(&r, 56, &next_pid, 4);
	return r;
}

/* One of ours: name (__data_loc) at 64, rel (__rel_loc) at 80. */
static struct rec ours(unsigned int id, const char *name, int8_t small, uint16_t half, uint64_t big,
		       const char *rel, uint32_t cpu_field, unsigned int cpu)
{
	struct rec r = { .size = 96, .cpu = cpu, .comm = "ours" };
	uint32_t loc = 64 | (uint32_t)(strlen(name) + 1) << 16;
	uint32_t rloc = (80 - 36) | (uint32_t)(strlen(rel) + 1) << 16;

	put(&r, 8, &id, 4);
	put(&r, 12, &loc, 4);
	put(&r, 16, &small, 1);
	put(&r, 18, &half, 2);
	put(&r, 24, &big, 8);
	put(&r, 32, &rloc, 4);
	put(&r, 36, &cpu_field, 4);
	strcpy((char *)r.data + 64, name);
	strcpy((char *)r.data + 80, rel);
	return r;
}

static bool matches(const char *text, const struct usertp__filter_field *fields, unsigned int nr,
		    const struct rec *r, bool *ok)
{
	struct usertp__filter *f;
	struct usertp__filter_error e;
	struct usertp__filter_record fr = { r->data, r->size, r->cpu, r->comm };
	bool m;

	*ok = !usertp__filter_compile(text, fields, nr, &f, &e);
	if (!*ok)
		return false;
	m = usertp__filter_match(f, &fr);
	usertp__filter_free(f);
	return m;
}


static void expect(int line, const char *text, const struct usertp__filter_field *fields,
		   unsigned int nr, const struct rec *r, bool want)
{
	bool ok, m = matches(text, fields, nr, r, &ok);

	if (!ok || m != want) {
		fprintf(stderr, "FAIL line %d: [%s] %s\n", line, text,
			!ok ? "refused" : want ? "does not match" : "matches");
		harness_failed++;
	}
}
#define YES(text, fields, rec) expect(__LINE__, text, fields, &(rec), true)
#define NO(text, fields, rec) expect(__LINE__, text, fields, &(rec), false)

static void test_matching(void)
{
	struct rec a = sched(22289, "bash", 22289, 1, "swapper/1", 0, 1, "bash");
	struct rec b = sched(1, "systemd", 1, 0, "kworker/0:1", 17, 0, "systemd");
	struct rec m = ours(7, "job-seven", -3, 0xfff0, 0xfffffffffffffff0ull, "rel-text", 3, 1);

	/* The seeds' forms. */
	YES("common_pid == 22289", SCHED, a);
	NO("common_pid == 22289", SCHED, b);
	YES("(common_pid == 1 || common_flags == 1)", SCHED, b);
	NO("(common_pid == 1 || common_flags == 1)", SCHED, a);
	/* Spacing is optional; && binds tighter than ||; ! per predicate and group. */
	YES("common_pid==1&&next_pid!=2", SCHED, b);
	YES("common_pid == 5 || common_pid == 1 && next_pid == 17", SCHED, b);
	NO("(common_pid == 5 || common_pid == 1) && next_pid == 18", SCHED, b);
	YES("!common_pid == 5", SCHED, b);
	YES("!!(common_pid == 1)", SCHED, b);
	NO("!(common_pid == 1 || next_pid == 0)", SCHED, a);
	YES("!prev_state > 0", SCHED, b);
	NO("!prev_state > 0", SCHED, a);
	/* Numbers: hex, octal, negative, comparisons by sign and size, & */
	YES("common_pid == 0x5711", SCHED, a);
	YES("common_pid == 053421", SCHED, a);
	YES("prev_state & 1", SCHED, a);
	NO("prev_state & 2", SCHED, a);
	YES("next_pid >= 17 && next_pid <= 17 && next_pid > 16 && next_pid < 18", SCHED, b);
	YES("small == -3 && small < 0 && small > -4", MINE, m);
	YES("small == 253", MINE, m); /* the literal at the field's size: 253 is -3 as an s8 */
	YES("half == 0xfff0 && half > 0x7fff", MINE, m);
	YES("big > 0x7fffffffffffffff", MINE, m);
	YES("big == 18446744073709551600", MINE, m);
	/* Strings: fixed arrays, __data_loc, __rel_loc, COMM; ==, !=, globs. */
	YES("prev_comm == \"bash\"", SCHED, a);
	NO("prev_comm == \"bas\"", SCHED, a);
	YES("prev_comm != 'bas'", SCHED, a);
	YES("next_comm ~ \"swapper*\"", SCHED, a);
	YES("next_comm ~ \"*per/1\"", SCHED, a); /* "ends with": the kernel's bug not kept */
	YES("next_comm ~ \"*app*\"", SCHED, a);
	YES("next_comm ~ \"sw?pper/[0-9]\"", SCHED, a);
	NO("next_comm ~ \"sw?pper/[!0-9]\"", SCHED, a);
	YES("next_comm ~ \"!kw*\"", SCHED, a);
	NO("next_comm ~ \"!sw*\"", SCHED, a);
	YES("COMM ~ \"ba*\" && comm == \"bash\"", SCHED, a);
	NO("COMM ~ \"!ba*\"", SCHED, a);
	NO("COMM == \"\"", SCHED, a);
	NO("COMM ~ \"\"", SCHED, a);
	YES("COMM ~ \"*\"", SCHED, a);
	YES("name == \"job-seven\" && name ~ \"job-*\" && name ~ \"*seven\"", MINE, m);
	YES("rel == 'rel-text' && rel ~ \"*-t*\"", MINE, m);
	NO("name == \"job\"", MINE, m);
	/* A pattern starting with a digit is literal. */
	NO("name ~ \"1*\"", MINE, m);
	/* CPU and CPUS{}; an event field named cpu hides the pseudo-field. */
	YES("CPU == 1 && common_cpu != 0 && CPU < 2", SCHED, a);
	NO("CPU & 1", SCHED, a); /* & on CPU: accepted, never matches */
	YES("CPU == CPUS{0-1} && CPU & CPUS{1}", SCHED, a);
	NO("CPU != CPUS{1}", SCHED, a);
	YES("cpu == 3", MINE, m);
	YES("CPU == 1", MINE, m);
	/* Arrays that are not char: accepted, never match. */
	NO("arr == 0", MINE, m);
	/* No filter: everything passes. */
	CHECK(usertp__filter_match(NULL, &(struct usertp__filter_record){ a.data, a.size, 0, "" }),
	      "no filter");
}

/* Deep nesting and many predicates compile and run without deep recursion. */
static void test_big(void)
{
	char *text = malloc(4096);
	size_t len = 0;
	struct rec b = sched(1, "systemd", 1, 0, "kworker/0:1", 17, 0, "systemd");
	bool ok, m;
	int depth = 1000;

	for (int i = 0; i < depth; i++)
		text[len++] = '(';
	len += (size_t)sprintf(text + len, "common_pid==1");
	for (int i = 0; i < depth; i++)
		text[len++] = ')';
	text[len] = 0;
	m = matches(text, SCHED, &b, &ok);
	CHECK(ok && m, "1000 parentheses deep: %s", ok ? "no match" : "refused");
	len = 0;
	for (int i = 0; i < 240; i++)
		len += (size_t)sprintf(text + len, "%snext_pid==%d", i ? "||" : "", i);
	m = matches(text, SCHED, &b, &ok);
	CHECK(ok && m, "240 predicates: %s", ok ? "no match" : "refused");
	memset(text, ' ', 4095);
	text[4095] = 0;
	memcpy(text, "common_pid == 1", 15);
	m = matches(text, SCHED, &b, &ok);
	CHECK(ok && m, "4095 bytes");
	free(text);
}

/* Without fields: what does not depend on them. */
static void test_check(void)
{
	static const struct {
		const char *text;
		int err;
	} checks[] = {
		{ "nosuch == 1", 0 }, { "x == \"a\" && y ~ \"b*\"", 0 }, { "x < 5 || CPU & CPUS{0}", 0 },
		{ "x.function == 1", 0 }, { "(x == 1", -ENOENT }, { "x == 1)", -EPERM },
		{ "x == \"a", -ESRCH }, { "x == 1 &&", -EINVAL }, { "x == 08", -EINVAL },
		{ "x == abc", -EINVAL }, { "x =! 1", -EINVAL }, { "x == 1 | y == 2", -EPERM },
	};

	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		struct usertp__filter_error e;
		int ret = usertp__filter_check(checks[i].text, &e);

		CHECK(ret == checks[i].err, "check [%s]: %d, want %d", checks[i].text, ret,
		      checks[i].err);
	}
}

/*
 * Fields from format texts (format-field.c): the bundled example's job_done and job_queued as
 * libusertp writes them (a fixed char array, a dynamic array of numbers, a string after
 * numbers), and the kernel's irq_handler_entry (a number before a string), each field typed by
 * its own line.
 */
static void test_fields_of_format(void)
{
	static const char job_done[] =
		"name: job_done\nID: 3\nformat:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		"\tfield:int id;\toffset:8;\tsize:4;\tsigned:1;\n"
		"\tfield:char worker[16];\toffset:12;\tsize:16;\tsigned:0;\n"
		"\tfield:unsigned long ns;\toffset:32;\tsize:8;\tsigned:0;\n"
		"\tfield:unsigned int flags;\toffset:40;\tsize:4;\tsigned:0;\n"
		"\tfield:__data_loc unsigned int[] chunk_us;\toffset:44;\tsize:4;\tsigned:0;\n\n"
		"print fmt: \"id=%d\", REC->id\n";
	static const char job_queued[] =
		"name: job_queued\nID: 1\nformat:\n"
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		"\tfield:int id;\toffset:8;\tsize:4;\tsigned:1;\n"
		"\tfield:int kind;\toffset:12;\tsize:4;\tsigned:1;\n"
		"\tfield:__data_loc char[] name;\toffset:16;\tsize:4;\tsigned:0;\n"
		"\tfield:__rel_loc char[] rel;\toffset:20;\tsize:4;\tsigned:0;\n"
		"\tfield:unsigned char mac[6];\toffset:24;\tsize:6;\tsigned:0;\n"
		"\tfield:__data_loc unsigned long[] mask;\toffset:32;\tsize:4;\tsigned:0;\n";
	static const char irq[] =
		"format:\n\tfield:int irq;\toffset:8;\tsize:4;\tsigned:1;\n"
		"\tfield:__data_loc char[] name;\toffset:12;\tsize:4;\tsigned:0;\n";
	static const struct {
		const char *format;
		unsigned int nr;
		struct usertp__filter_field want[6];
	} cases[] = {
		{ job_done, 5, { { "id", 8, 4, true, USERTP__FILTER_NUMBER },
				 { "worker", 12, 16, false, USERTP__FILTER_CHARS },
				 { "ns", 32, 8, false, USERTP__FILTER_NUMBER },
				 { "flags", 40, 4, false, USERTP__FILTER_NUMBER },
				 { "chunk_us", 44, 4, false, USERTP__FILTER_OTHER } } },
		{ job_queued, 6, { { "id", 8, 4, true, USERTP__FILTER_NUMBER },
				   { "kind", 12, 4, true, USERTP__FILTER_NUMBER },
				   { "name", 16, 4, false, USERTP__FILTER_DATA_LOC },
				   { "rel", 20, 4, false, USERTP__FILTER_REL_LOC },
				   { "mac", 24, 6, false, USERTP__FILTER_CHARS },
				   { "mask", 32, 4, false, USERTP__FILTER_OTHER } } },
		{ irq, 2, { { "irq", 8, 4, true, USERTP__FILTER_NUMBER },
			    { "name", 12, 4, false, USERTP__FILTER_DATA_LOC } } },
	};
	static const char *const not_lines[] = {
		"\tfield:int;\toffset:8;\tsize:4;\tsigned:1;", "\tfield:int x;\toffset:8;\tsize:4;",
		"\tfield:int x;\toffset:-8;\tsize:4;\tsigned:1;", "\tfield:int x\toffset:8;",
		"\tfield:int x;\toffset:8;\tsize:99999999999;\tsigned:1;",
		"\tfield:char x[4;\toffset:8;\tsize:4;\tsigned:0;", "field:x;offset:8;size:4;signed:2;",
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct usertp__filter_field *got;
		char *names;
		int n = usertp__filter_fields_of_format(cases[i].format, &got, &names);

		CHECK(n == (int)cases[i].nr, "format %zu: %d fields, want %u", i, n, cases[i].nr);
		for (int k = 0; k < n && k < (int)cases[i].nr; k++) {
			const struct usertp__filter_field *w = &cases[i].want[k];

			CHECK(!strcmp(got[k].name, w->name) && got[k].offset == w->offset &&
				      got[k].size == w->size && got[k].is_signed == w->is_signed &&
				      got[k].type == w->type,
			      "format %zu field %d: %s %u %u %d type %d, want %s %u %u %d type %d", i, k,
			      got[k].name, got[k].offset, got[k].size, got[k].is_signed, got[k].type,
			      w->name, w->offset, w->size, w->is_signed, w->type);
		}
		free(got);
		free(names);
	}
	/* Formats refused before libtraceevent sees them, and the example's taken. */
	{
		static const char *const refused[] = {
			"format:\n\tfield:int a;\toffset:8;\tsizj:4;\tsigned:1;\nprint fmt: \"\"\n",
			"format:\n\tfield:int a;\toffset:1048575;\tsize:4;\tsigned:1;\nprint fmt: \"\"\n",
			"format:\n\tfield:__rel_loc int[] a;\toffset:8;\tsize:8;\tsigned:1;\nprint fmt: \"\"\n",
			"format:\n\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n",
			"format:\n\tfield:__rel_loc int[] a;\toffset:8;\tsize:4;\tsigned:1;\n"
			"print fmt: \"len=%d\", __get_rel_dynamic_array_len(a)\n",
			"format:\n\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n"
			"print fmt: \"a=%d\", REC->b\n",
			"format:\n\tfield:short a[2d:long];\toffset:8;\tsize:4;\tsigned:1;\n"
			"print fmt: \"\"\n",
			"format:\n\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n"
			"print fmt: \"%d\", REC->a / 0x0\n",
			"format:\n\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n"
			"print fmt: \"%d\", 100 % REC->a\n",
			"format:\n\tfield:int a[2];\toffset:8;\tsize:8;\tsigned:1;\n"
			"print fmt: \"%s\", __print_array(RECa, 2, 4)\n",
		};
		char why[256];

		for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
			CHECK(!usertp__format_check(refused[i], strlen(refused[i]), why, sizeof(why)),
			      "format %zu taken", i);
		CHECK(usertp__format_check(job_done, strlen(job_done), why, sizeof(why)),
		      "the example's job_done refused: %s", why);
	}
	for (size_t i = 0; i < sizeof(not_lines) / sizeof(not_lines[0]); i++) {
		struct usertp__format_field ff;

		CHECK(usertp__format_field_parse(not_lines[i], strlen(not_lines[i]), &ff) == -EINVAL,
		      "[%s] taken for a field line", not_lines[i]);
	}
}

int main(void)
{
	test_fields_of_format();
	test_check();
	test_errors();
	test_matching();
	test_big();
	if (harness_failed) {
		fprintf(stderr, "%d failure(s)\n", harness_failed);
		return 1;
	}
	printf("ok\n");
	return 0;
}
