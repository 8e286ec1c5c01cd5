/* SPDX-License-Identifier: MIT */
/*
 * fuzz-filter-format - the libFuzzer target of filters against formats: any format text read
 * for its fields (usertp__filter_fields_of_format()), any filter compiled against them, and
 * what compiles evaluated on any record.  Replayed like fuzz-filter (tests/fuzz-replay.c);
 * with -DUSERTP_FUZZ_FILTER=ON under clang, the libFuzzer binary:
 *	fuzz-filter-format -max_total_time=1800 new-corpus-dir tests/filter/corpus-format
 *
 * Input: the format text, a NUL, the filter text, a NUL, then the record.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul1 = memchr(data, 0, size), *nul2;
	struct usertp__filter_field *fields;
	struct usertp__filter_error e;
	struct usertp__filter *f;
	char *format, *names, out[16384];
	const char *text;
	int nr;

	if (!nul1 || !(nul2 = memchr(nul1 + 1, 0, size - (size_t)(nul1 + 1 - data))))
		return 0;
	format = strdup((const char *)data);
	text = (const char *)nul1 + 1;
	if (!format)
		return 0;
	nr = usertp__filter_fields_of_format(format, &fields, &names);
	free(format);
	if (nr < 0)
		return 0;
	if (strlen(text) <= USERTP__FILTER_MAX) {
		if (usertp__filter_compile(text, fields, (unsigned int)nr, &f, &e)) {
			usertp__filter_error_file(text, &e, out, sizeof(out));
		} else {
			usertp__filter_match(f, &(struct usertp__filter_record){
				nul2 + 1, size - (size_t)(nul2 + 1 - data), 1, "fuzz" });
			usertp__filter_free(f);
		}
	}
	free(fields);
	free(names);
	return 0;
}
