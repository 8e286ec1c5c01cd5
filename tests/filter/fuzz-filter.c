/* SPDX-License-Identifier: MIT */
/*
 * fuzz-filter - the libFuzzer target of the filter compiler and evaluator (src/common/filter.c):
 * any text compiled against one of two field sets, and what compiles evaluated on any record
 * (shorter than its fields, strings that point anywhere).  Built with FUZZ_REPLAY (always, as
 * fuzz-filter-replay) it runs every file of the directories given once: how ctest replays
 * corpus/.  With -DUSERTP_FUZZ_FILTER=ON under clang, fuzz-filter is the libFuzzer binary:
 *	fuzz-filter -max_total_time=1800 new-corpus-dir tests/filter/corpus
 *
 * Input: byte 0 chooses the fields (bit 0) and the CPU (bits 1-3); byte 1 the record's length
 * (at most 128); then the record; the rest is the filter's text.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct usertp__filter_field fields_a[] = {
	{ "prev_comm", 8, 16, false, USERTP__FILTER_CHARS },
	{ "prev_pid", 24, 4, true, USERTP__FILTER_NUMBER },
	{ "prev_state", 32, 8, true, USERTP__FILTER_NUMBER },
	{ "next_pid", 56, 4, true, USERTP__FILTER_NUMBER },
};
static const struct usertp__filter_field fields_b[] = {
	{ "id", 8, 4, false, USERTP__FILTER_NUMBER },
	{ "name", 12, 4, false, USERTP__FILTER_DATA_LOC },
	{ "small", 16, 1, true, USERTP__FILTER_NUMBER },
	{ "half", 18, 2, false, USERTP__FILTER_NUMBER },
	{ "big", 24, 8, false, USERTP__FILTER_NUMBER },
	{ "rel", 32, 4, false, USERTP__FILTER_REL_LOC },
	{ "arr", 40, 12, false, USERTP__FILTER_OTHER },
};

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
	if (data[0] & 1 ? usertp__filter_compile(text, fields_b, 7, &f, &e)
			: usertp__filter_compile(text, fields_a, 4, &f, &e)) {
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

#ifdef FUZZ_REPLAY
static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	long size;

	if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
	    !(data = malloc(size ? (size_t)size : 1)) || fread(data, 1, (size_t)size, f) != (size_t)size) {
		fprintf(stderr, "fuzz-filter-replay: cannot read %s\n", path);
		if (f)
			fclose(f);
		free(data);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(data, (size_t)size);
	free(data);
	return 0;
}

int main(int argc, char **argv)
{
	int n = 0, bad = 0;

	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		struct dirent *de;

		if (!d) {
			bad += replay_file(argv[i]) < 0;
			n++;
			continue;
		}
		while ((de = readdir(d))) {
			char path[4096];

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
			bad += replay_file(path) < 0;
			n++;
		}
		closedir(d);
	}
	printf("fuzz-filter-replay: %d inputs\n", n);
	return bad || !n;
}
#endif
