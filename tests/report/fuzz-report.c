/* SPDX-License-Identifier: MIT */
/*
 * fuzz-report.c - the fuzz target of usertp report's trace.dat reader. With
 * -DUSERTP_FUZZ_REPORT=ON and clang it is built as a libFuzzer target (fuzz-report); built
 * with tests/fuzz-replay.c (always, as fuzz-report-replay) it runs every file of the
 * directories given as arguments through the reader once, which is how ctest replays corpus/.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "private/usertp-consumer-private.h"
#include "tool.h"
#include "../fuzz-tep.h"

/* The command's error printer: a fuzzing run shows no messages. */
void usertp__tool_error(const char *cmd, const char *fmt, ...)
{
	(void)cmd;
	(void)fmt;
}

void usertp__tool_bad_option(const char *cmd, const char *optstring, char **argv)
{
	(void)cmd;
	(void)optstring;
	(void)argv;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return usertp_report_fuzz_one(data, size);
}
