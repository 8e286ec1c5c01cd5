/* SPDX-License-Identifier: MIT */
/*
 * tool-error.c - how the usertp command's subcommands say what went wrong (tool.h).
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tool.h"

void usertp__tool_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "usertp %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void usertp__tool_bad_option(const char *cmd, const char *optstring, char **argv)
{
	if (optopt > 0 && optopt < 128 && optopt != ':' && strchr(optstring, optopt))
		usertp__tool_error(cmd, "option -%c needs a value", optopt);
	else if (optopt > 0 && optopt < 128)
		usertp__tool_error(cmd, "invalid option -%c", optopt);
	else
		usertp__tool_error(cmd, "%s: unknown option, or its value is missing", argv[optind - 1]);
}
