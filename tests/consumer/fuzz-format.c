/* SPDX-License-Identifier: MIT */
/*
 * fuzz-format.c - the fuzz target of what a program usertp does not trust hands over: an
 * event's format text and its records, taken as the session and the mount take them
 * (issue 21, item 12).  The format goes through usertp__format_check() and, if it passes,
 * libtraceevent's parser; then the record, through usertp__tep_record_ok() and, if it passes,
 * libtraceevent's printer.  Nothing may fault, leak or read outside the record.
 *
 * Input: u16 length of the format text, the text, then the record (its first two bytes are
 * set to the event's id).  The record sits in a buffer of its size and 8 zeroes, as the
 * session's page copies end in zeroes, so that AddressSanitizer sees any read further.
 *
 * With -DUSERTP_FUZZ_REPORT=ON and clang: the libFuzzer target fuzz-format; always built with
 * tests/fuzz-replay.c as fuzz-format-replay, which ctest runs on corpus-format/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#include "format-field.h"
#include "private/usertp-consumer-private.h"
#include "../fuzz-tep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tep_handle *tep;
	struct tep_event *ev = NULL;
	struct tep_record rec;
	struct trace_seq s;
	char why[256], *text;
	size_t text_len, rec_size;
	unsigned char *record;

	if (size < 2)
		return 0;
	text_len = (size_t)data[0] | (size_t)data[1] << 8;
	if (text_len > size - 2)
		return 0;
	text = malloc(text_len + 1);
	if (!text)
		return 0;
	memcpy(text, data + 2, text_len);
	text[text_len] = 0;
	if (!usertp__format_check(text, text_len, why, sizeof(why)) || !(tep = tep_alloc())) {
		free(text);
		return 0;
	}
	tep_set_long_size(tep, 8);
	tep_set_file_bigendian(tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, TEP_LITTLE_ENDIAN);
	/* As the session (reader.c): parsed only where it parsed whole, in a child first. */
	if (!usertp__tep_format_ok(text, text_len, "fuzz", 8) ||
	    tep_parse_format(tep, &ev, text, text_len, "fuzz") || !ev)
		goto out;
	rec_size = size - 2 - text_len;
	/* (zeroes after it, as after the session's page copies: reader.c's queued_page) */
	record = calloc(1, rec_size + 8);
	if (!record)
		goto out;
	memcpy(record, data + 2 + text_len, rec_size);
	if (rec_size >= 2) {
		uint16_t id = (uint16_t)ev->id;

		memcpy(record, &id, 2);
	}
	memset(&rec, 0, sizeof(rec));
	rec.data = record;
	rec.size = (int)rec_size;
	rec.ts = 1000;
	if (rec_size >= 8 && usertp__tep_record_ok(ev, record, (int)rec_size, NULL)) {
		trace_seq_init(&s);
		tep_print_event(tep, &s, &rec, "%s: %s", TEP_PRINT_NAME, TEP_PRINT_INFO);
		trace_seq_destroy(&s);
	}
	free(record);
out:
	tep_free(tep);
	free(text);
	return 0;
}
