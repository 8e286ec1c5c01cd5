/* SPDX-License-Identifier: MIT */
/*
 * record.c - usertp record (not written yet).
 */
#include "tool.h"

int usertp_cmd_record(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	usertp_tool_error("record", "not implemented yet");
	return 2;
}
