/* SPDX-License-Identifier: MIT */
/*
 * fuzz-report.c - the fuzz target of usertp report's trace.dat reader. With
 * -DUSERTP_FUZZ_REPORT=ON and clang it is built as a libFuzzer target (fuzz-report); built
 * with FUZZ_REPLAY (always, as fuzz-report-replay) it runs every file of the directories
 * given as arguments through the reader once, which is how ctest replays corpus/.
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dat-read.h"
#include "tool.h"

/* The command's error printer: a fuzzing run shows no messages. */
void usertp_tool_error(const char *cmd, const char *fmt, ...)
{
	(void)cmd;
	(void)fmt;
}

void usertp_tool_bad_option(const char *cmd, const char *optstring, char **argv)
{
	(void)cmd;
	(void)optstring;
	(void)argv;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	tep_set_loglevel(TEP_LOG_NONE);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return usertp_report_fuzz_one(data, size);
}

#ifdef FUZZ_REPLAY
static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	long size;

	if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
	    !(data = malloc(size ? size : 1)) || fread(data, 1, size, f) != (size_t)size) {
		fprintf(stderr, "fuzz-report-replay: cannot read %s\n", path);
		if (f)
			fclose(f);
		free(data);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(data, size);
	free(data);
	return 0;
}

int main(int argc, char **argv)
{
	int files = 0;

	LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		struct dirent *e;

		if (!d) {
			fprintf(stderr, "fuzz-report-replay: cannot open %s\n", argv[i]);
			return 1;
		}
		while ((e = readdir(d))) {
			char path[4096];

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			if (replay_file(path))
				return 1;
			files++;
		}
		closedir(d);
	}
	printf("%d files replayed\n", files);
	return files ? 0 : 1;
}
#endif
