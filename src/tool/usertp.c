/* SPDX-License-Identifier: MIT */
/*
 * usertp.c - the usertp command: "usertp SUBCOMMAND [OPTIONS]", as trace-cmd is used.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "tool.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} subcommands[] = {
	{ "list", usertp__cmd_list, "list the events of running programs that use libusertp" },
	{ "record", usertp__cmd_record, "record events of programs into a trace.dat file" },
	{ "report", usertp__cmd_report, "print the events of trace.dat files" },
	{ "stream", usertp__cmd_stream, "print events of programs live, as report prints them" },
	{ "snapshot", usertp__cmd_snapshot, "ask flight recorders for a snapshot" },
	{ "mount", usertp__cmd_mount, "serve tracefs's files for the events of running programs" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: usertp COMMAND [OPTIONS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		fprintf(out, "  %-8s %s\n", subcommands[i].name, subcommands[i].summary);
	fprintf(out, "\n'usertp COMMAND -h' describes a command; 'man usertp-COMMAND' in full.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("usertp %s\n", USERTP_VERSION_STRING);
		return 0;
	}
	/* Option errors are said by the subcommands, in their own words (tool.h). */
	opterr = 0;
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (!strcmp(argv[1], subcommands[i].name))
			return subcommands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "usertp: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
