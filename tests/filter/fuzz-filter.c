/* SPDX-License-Identifier: MIT */
/*
 * fuzz-filter - the libFuzzer target of the filter compiler and evaluator (src/common/filter.c):
 * any text compiled against one of two field sets, and what compiles evaluated on any record
 * (shorter than its fields, strings that point anywhere).  Built with tests/fuzz-replay.c
 * (always, as fuzz-filter-replay) it runs every file of the directories given once: how ctest
 * replays corpus/.  With -DUSERTP_FUZZ_FILTER=ON under clang, fuzz-filter is the libFuzzer binary:
 *	fuzz-filter -max_total_time=1800 new-corpus-dir tests/filter/corpus
 *
 * Input: byte 0 chooses the fields (bit 0) and the CPU (bits 1-3); byte 1 the record's length
 * (at most 128); then the record; the rest is the filter's text.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "filter-fields.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char record[128];
	struct usertp__filter_error e;
	struct usertp__filter *f;
	char text[USERTP__FILTER_MAX + 1], out[16384];
	size_t len, tlen;

	if (size < 2)
		return 0;
	len = data[1] % (sizeof(record) + 1);
	if (size < 2 + len)
		return 0;
	memcpy(record, data + 2, len);
	tlen = size - 2 - len;
	if (tlen > USERTP__FILTER_MAX)
		tlen = USERTP__FILTER_MAX;
	memcpy(text, data + 2 + len, tlen);
	text[tlen] = 0;
	if (data[0] & 1 ? usertp__filter_compile(text, MINE, &f, &e)
			: usertp__filter_compile(text, SCHED, &f, &e)) {
		usertp__filter_error_file(text, &e, out, sizeof(out));
		usertp__filter_error_log(text, &e, out, sizeof(out));
		return 0;
	}
	usertp__filter_match(f, &(struct usertp__filter_record){ record, len, (data[0] >> 1) & 7u,
								  "fuzz-comm" });
	usertp__filter_free(f);
	usertp__filter_check(text, &e);
	return 0;
}
