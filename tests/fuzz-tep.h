/* SPDX-License-Identifier: MIT */
/*
 * fuzz-tep.h - what the fuzz targets that run libtraceevent share: their entry points, and a
 * libtraceevent that says nothing (a fuzzing run shows no messages).  Included by one source
 * of each target.
 */
#ifndef USERTP_FUZZ_TEP_H
#define USERTP_FUZZ_TEP_H

#include <stddef.h>
#include <stdint.h>

#include <traceevent/event-parse.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	tep_set_loglevel(TEP_LOG_NONE);
	return 0;
}

#endif
