/* SPDX-License-Identifier: MIT */
/*
 * report.c - usertp report (not written yet).
 */
#include "tool.h"

int usertp_cmd_report(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	usertp_tool_error("report", "not implemented yet");
	return 2;
}
