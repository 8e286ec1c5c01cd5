/* SPDX-License-Identifier: MIT */
/*
 * fuzz-replay.c - the main() of the fuzz targets' replay builds: every file of the
 * directories given (or the files given) through LLVMFuzzerTestOneInput() once, which is how
 * ctest replays each target's corpus in every build, sanitizer builds included.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Optional, as for libFuzzer. */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	long size;

	if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
	    !(data = malloc(size ? (size_t)size : 1)) || fread(data, 1, (size_t)size, f) != (size_t)size) {
		fprintf(stderr, "fuzz replay: cannot read %s\n", path);
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
	int files = 0;

	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		struct dirent *e;

		if (!d) {
			if (replay_file(argv[i]))
				return 1;
			files++;
			continue;
		}
		while ((e = readdir(d))) {
			char path[4096];

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			if (replay_file(path)) {
				closedir(d);
				return 1;
			}
			files++;
		}
		closedir(d);
	}
	printf("fuzz replay: %d inputs\n", files);
	return files ? 0 : 1;
}
