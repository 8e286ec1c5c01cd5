/* SPDX-License-Identifier: MIT */
/*
 * list.c - usertp list (not written yet).
 */
#include "tool.h"

int usertp_cmd_list(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	usertp_tool_error("list", "not implemented yet");
	return 2;
}
