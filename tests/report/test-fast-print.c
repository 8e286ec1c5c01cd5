/* SPDX-License-Identifier: MIT */
/*
 * test-fast-print - usertp report's quick way to an event's text (src/consumer/fast-print.c)
 * against libtraceevent's own: events parsed by libtraceevent from format texts, records
 * made with chosen values (negative, zero, the largest, strings short and long, NUL or not),
 * the text of each compared byte for byte with tep_print_event()'s TEP_PRINT_INFO.  Formats
 * that are not its own must be left to libtraceevent (fast_print_info() says false).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "private/usertp-consumer-private.h"

#include "../harness.h"


/* The fields of every test event (after the common ones), at fixed offsets. */
static const char fields[] =
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:int i;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\tfield:long l;\toffset:16;\tsize:8;\tsigned:1;\n"
	"\tfield:unsigned int u;\toffset:24;\tsize:4;\tsigned:0;\n"
	"\tfield:short h;\toffset:28;\tsize:2;\tsigned:1;\n"
	"\tfield:char c;\toffset:30;\tsize:1;\tsigned:1;\n"
	"\tfield:unsigned char uc;\toffset:31;\tsize:1;\tsigned:0;\n"
	"\tfield:char name[12];\toffset:32;\tsize:12;\tsigned:1;\n"
	"\tfield:__data_loc char[] s;\toffset:44;\tsize:4;\tsigned:1;\n"
	"\tfield:__rel_loc char[] r;\toffset:48;\tsize:4;\tsigned:1;\n"
	"\tfield:unsigned long long ull;\toffset:56;\tsize:8;\tsigned:0;\n";
#define RECORD_FIXED 64

struct format_case {
	const char *print;	/* the print fmt's text after "print fmt: " */
	int fast;		/* 1: fast_print_info() must do it; 0: must leave it */
};

static const struct format_case cases[] = {
	{ "\"i=%d l=%ld u=%u s=%s\", REC->i, REC->l, REC->u, __get_str(s)", 1 },
	{ "\"%i|%5d|%-5d|%05d|%x|%X|%08x|%lx|%#lx|%llu|%lld\", REC->i, REC->i, REC->i, REC->i, "
	  "REC->u, REC->u, REC->u, REC->l, REC->l, REC->ull, REC->ull", 1 },
	{ "\"h=%hd hu=%hu hx=%hx c=%hhd uc=%hhu o=%o lo=%lo\", REC->h, REC->h, REC->h, REC->c, "
	  "REC->uc, REC->u, REC->l", 1 },
	{ "\"d of long=%d u of long=%u ld of int=%ld x of char=%x\", REC->l, REC->l, REC->i, REC->c", 1 },
	{ "\"name=%s [%10s] [%-10s] [%.3s] [%.3s]\", REC->name, __get_str(s), __get_str(s), "
	  "__get_str(s), REC->name", 1 },
	{ "\"rel=%s s=%s 100%% done\\tnext\\n\", __get_rel_str(r), __get_str(s)", 1 },
	{ "\"no arguments at all\"", 1 },
	{ "\"%zu %zd %Lu\", REC->ull, REC->l, REC->ull", 1 },
	/* left to libtraceevent */
	{ "\"p=%p\", REC->l", 0 },
	{ "\"plus=%+d\", REC->i", 0 },
	{ "\"cast=%u\", (unsigned char)REC->i", 0 },
	{ "\"sum=%d\", REC->i + 1", 0 },
	{ "\"sym=%s\", __print_symbolic(REC->i, { 0, \"zero\" }, { 1, \"one\" })", 0 },
	{ "\"star=%*d\", REC->i, REC->i", 0 },
	{ "\"wide=%1234d\", REC->i", 0 },
	{ "\"long as string=%s\", REC->l", 0 },
};

/* Record values, one record per row. */
struct values {
	int32_t i;
	int64_t l;
	uint32_t u;
	int16_t h;
	int8_t c;
	uint8_t uc;
	const char *name; /* up to 12 bytes, NUL-less if 12 */
	const char *s, *r;
	uint64_t ull;
};

static const struct values rows[] = {
	{ 0, 0, 0, 0, 0, 0, "", "", "", 0 },
	{ -1, -1, 0xffffffffu, -1, -1, 0xff, "twelve-chars", "a", "rel", UINT64_MAX },
	{ INT32_MIN, INT64_MIN, 0x80000000u, INT16_MIN, INT8_MIN, 0x80, "alpha", "a longer string here",
	  "r", 1ull << 63 },
	{ 123456, 9876543210LL, 42, 1234, 'A', 'z', "x", "twelvechars!", "", 5 },
};

static size_t make_record(unsigned char *buf, int id, const struct values *v)
{
	size_t slen = strlen(v->s) + 1, rlen = strlen(v->r) + 1, name_len = strlen(v->name);
	uint32_t loc;
	uint16_t type = (uint16_t)id;
	int32_t pid = 77;

	memset(buf, 0, 512);
	memcpy(buf, &type, 2);
	memcpy(buf + 4, &pid, 4);
	memcpy(buf + 8, &v->i, 4);
	memcpy(buf + 16, &v->l, 8);
	memcpy(buf + 24, &v->u, 4);
	memcpy(buf + 28, &v->h, 2);
	memcpy(buf + 30, &v->c, 1);
	memcpy(buf + 31, &v->uc, 1);
	memcpy(buf + 32, v->name, name_len < 12 ? name_len : 12);
	memcpy(buf + RECORD_FIXED, v->s, slen);
	loc = (uint32_t)(slen << 16) | RECORD_FIXED;
	memcpy(buf + 44, &loc, 4);
	/* __rel_loc: from the end of its own field (48 + 4) */
	memcpy(buf + RECORD_FIXED + slen, v->r, rlen);
	loc = (uint32_t)(rlen << 16) | (uint32_t)(RECORD_FIXED + slen - 52);
	memcpy(buf + 48, &loc, 4);
	memcpy(buf + 56, &v->ull, 8);
	return (RECORD_FIXED + slen + rlen + 3) & ~(size_t)3;
}

int main(void)
{
	struct tep_handle *tep = tep_alloc();
	struct usertp__fast_print *fp = usertp__fast_print_new();
	struct usertp__text text = { 0 };
	unsigned int compared = 0;

	if (!tep || !fp)
		return 1;
	tep_set_long_size(tep, 8);
	tep_set_file_bigendian(tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, TEP_LITTLE_ENDIAN);
	for (unsigned int k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		char format[4096];
		struct tep_event *event;
		int id = 100 + (int)k;

		snprintf(format, sizeof(format), "name: t%u\nID: %d\nformat:\n%s\nprint fmt: %s\n", k, id,
			 fields, cases[k].print);
		if (tep_parse_event(tep, format, strlen(format), "fmt")) {
			printf("FAIL: case %u: libtraceevent does not parse it\n", k);
			harness_failed++;
			continue;
		}
		event = tep_find_event(tep, id);
		for (unsigned int r = 0; event && r < sizeof(rows) / sizeof(rows[0]); r++) {
			static unsigned char data[512];
			struct tep_record rec = { .data = data, .cpu = 0, .ts = 1 };
			struct trace_seq s;
			bool fast;

			rec.size = (int)make_record(data, id, &rows[r]);
			text.len = 0;
			fast = usertp__fast_print_info(fp, event, &rec, &text);
			if (fast != (cases[k].fast != 0)) {
				printf("FAIL: case %u (%s) row %u: fast path %s\n", k, cases[k].print, r,
				       fast ? "taken" : "not taken");
				harness_failed++;
			}
			if (!fast)
				continue;
			trace_seq_init(&s);
			tep_print_event(tep, &s, &rec, "%s", TEP_PRINT_INFO);
			trace_seq_terminate(&s);
			if (text.len != s.len || memcmp(text.buf, s.buffer, s.len)) {
				printf("FAIL: case %u row %u:\n  fast: [%.*s]\n  tep:  [%s]\n", k, r,
				       (int)text.len, text.buf, s.buffer);
				harness_failed++;
			}
			compared++;
			trace_seq_destroy(&s);
		}
	}
	/* A string without its NUL in the record: libtraceevent's (it reads on). */
	{
		static unsigned char data[512];
		struct tep_record rec = { .data = data };
		struct tep_event *event = tep_find_event(tep, 100);

		rec.size = (int)make_record(data, 100, &rows[3]);
		memset(data + RECORD_FIXED, 'x', (size_t)rec.size - RECORD_FIXED);
		text.len = 0;
		if (event && usertp__fast_print_info(fp, event, &rec, &text)) {
			printf("FAIL: a string without a NUL taken\n");
			harness_failed++;
		}
		/* A field past the record's end. */
		rec.size = 20;
		if (event && usertp__fast_print_info(fp, event, &rec, &text)) {
			printf("FAIL: a field past the record's end taken\n");
			harness_failed++;
		}
	}
	printf("%u texts compared with libtraceevent's\n", compared);
	free(text.buf);
	usertp__fast_print_free(fp);
	tep_free(tep);
	return harness_done();
}
