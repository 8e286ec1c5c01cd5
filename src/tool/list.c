/* SPDX-License-Identifier: MIT */
/*
 * list.c - usertp list: the events of running programs that use libusertp.
 *
 *	usertp list [-P PID]... [-f FILE]... [-k] [-v] [-F] [SPEC...]
 *
 * One "sys:event" line per event (available_events form), each event once however many
 * programs define it, in the order found (programs by pid).  SPECs (set_event forms, as in
 * `usertp record -e`) select events; -F prints their format texts instead, each after a
 * "system: SYS" line, separated by blank lines, as `trace-cmd list -F` does.  -v groups the
 * events by program ("PID COMM:" then its events).  -f FILE lists the events an executable
 * or shared library defines, from its ELF file, without running it (elf-events.c).  -k lists
 * the kernel's events too (tracefs's available_events, as `trace-cmd list -e`), those that
 * `usertp record -e` records beside the programs' (kernel-rec.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spec.h"
#include "number.h"
#include "private/usertp-consumer-private.h"
#include "elf-events.h"
#include "tool.h"

#define CALL_TIMEOUT_MS 5000

static const char usage_text[] =
	"usage: usertp list [-P PID]... [-f FILE]... [-k] [-v] [-F] [SPEC...]\n"
	"  -P PID   only this program (repeatable; default: every program of this user)\n"
	"  -f FILE  the events FILE (an executable or a library) defines, without running it\n"
	"  -k       the kernel's events too (tracefs's available_events; needs access to it)\n"
	"  -v       by program: \"PID COMM:\" (or \"FILE:\"), its events, and the sessions\n"
	"           recording it with their events, filters and pid filters\n"
	"  -F       print the format texts (of running programs)\n"
	"  SPEC     sys:event, sys:*, *:event, event or sys, globs (sys:io_*), all;\n"
	"           !SPEC to leave out\n";

struct seen {
	char **names;
	size_t n, cap;
};

static bool seen_add(struct seen *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->names[i], name))
			return false;
	if (s->n == s->cap) {
		char **p = realloc(s->names, (s->cap = s->cap ? 2 * s->cap : 64) * sizeof(*p));

		if (!p)
			return false;
		s->names = p;
	}
	s->names[s->n++] = strdup(name);
	return true;
}

/* Does the SPEC list select sys:event?  No SPEC (or "all"): everything. */
static bool selected(char **specs, int nr_specs, const char *sysname)
{
	char system[256];
	const char *colon = strchr(sysname, ':');
	bool on = nr_specs == 0;

	if (!colon || (size_t)(colon - sysname) >= sizeof(system))
		return false;
	memcpy(system, sysname, (size_t)(colon - sysname));
	system[colon - sysname] = 0;
	for (int i = 0; i < nr_specs; i++) {
		bool negate = specs[i][0] == '!';

		if (negate && i == 0)
			on = true; /* "!x" alone: everything but x */
		if (!strcmp(specs[i], "all") ||
		    usertp__spec_match(specs[i] + negate, system, colon + 1))
			on = !negate;
	}
	return on;
}

/* Print the selected events of @lines ("sys:event" lines): once each, or under @header. */
static void list_lines(char *lines, const char *header, char **specs, int nr_specs,
		       struct seen *seen)
{
	char *line, *save = NULL;
	bool headed = false;

	for (line = strtok_r(lines, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!selected(specs, nr_specs, line))
			continue;
		if (header && !headed)
			printf("%s:\n", header);
		headed = true;
		if (header)
			printf("  %s\n", line);
		else if (seen_add(seen, line))
			printf("%s\n", line);
		if (header)
			seen_add(seen, line);
	}
}

/* -k: the kernel's events (their formats with -F), "kernel:" first with -v.  Return: 0 or 1. */
static int list_kernel(bool formats, bool verbose, char **specs, int nr_specs, struct seen *seen)
{
	char why[512], *lines = usertp__kernel_events(why, sizeof(why));

	if (!lines) {
		usertp__tool_error("list", "-k: %s", why);
		return 1;
	}
	if (!formats) {
		list_lines(lines, verbose ? "kernel" : NULL, specs, nr_specs, seen);
		free(lines);
		return 0;
	}
	for (char *save = NULL, *line = strtok_r(lines, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *fmt;

		if (!selected(specs, nr_specs, line) || !seen_add(seen, line))
			continue;
		fmt = usertp__kernel_format(line);
		if (fmt)
			printf("%ssystem: %.*s\n%s", seen->n > 1 ? "\n" : "", (int)strcspn(line, ":"),
			       line, fmt);
		free(fmt);
	}
	free(lines);
	return 0;
}

static int list_program(const struct usertp__program *prog, bool formats, bool verbose,
			char **specs, int nr_specs, struct seen *seen)
{
	char *reply = NULL, *line, *save = NULL, err[256];
	int sock = usertp__client_connect(prog), ret;

	if (sock < 0)
		return sock;
	ret = usertp__client_call(sock, USERTP_CTL_MSG_EVENTS, NULL, &reply, NULL, CALL_TIMEOUT_MS);
	if (ret) {
		if (ret == -EREMOTEIO)
			usertp__tool_error("list", "process %d: %s", (int)prog->pid,
					  usertp__client_error_text(reply, err, sizeof(err)));
		free(reply);
		close(sock);
		return ret;
	}
	if (!formats) {
		char header[64];

		snprintf(header, sizeof(header), "%d %s", (int)prog->pid, prog->comm);
		list_lines((char *)usertp__client_body(reply), verbose ? header : NULL, specs,
			   nr_specs, seen);
		free(reply);
		/* -v: the sessions recording it, with their events and filters. */
		reply = NULL;
		if (verbose && !usertp__client_call(sock, USERTP_CTL_MSG_SESSIONS, NULL, &reply, NULL,
						  CALL_TIMEOUT_MS))
			for (line = strtok_r((char *)usertp__client_body(reply), "\n", &save); line;
			     line = strtok_r(NULL, "\n", &save))
				printf("  %s%s\n", strncmp(line, "session ", 8) ? "  " : "", line);
		free(reply);
		close(sock);
		return 0;
	}
	for (line = strtok_r((char *)usertp__client_body(reply), "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *fmt = NULL;

		if (!selected(specs, nr_specs, line) || !seen_add(seen, line))
			continue;
		if (!formats) {
			printf("%s\n", line);
			continue;
		}
		if (!usertp__client_call(sock, USERTP_CTL_MSG_FORMAT, line, &fmt, NULL,
					 CALL_TIMEOUT_MS))
			printf("%ssystem: %.*s\n%s", seen->n > 1 ? "\n" : "",
			       (int)strcspn(line, ":"), line, usertp__client_body(fmt));
		free(fmt);
	}
	free(reply);
	close(sock);
	return 0;
}

int usertp__cmd_list(int argc, char **argv)
{
	static const struct option longopts[] = { { "help", no_argument, NULL, 'h' }, { 0 } };
	static const char optstring[] = "+P:f:kvFh";
	struct usertp__program *progs = NULL;
	struct seen seen = { NULL, 0, 0 };
	pid_t *pids = NULL;
	const char **files = NULL;
	int nr_pids = 0, nr_files = 0, nr = 0, opt, status = 0;
	bool formats = false, verbose = false, kernel = false;

	while ((opt = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		switch (opt) {
		case 'P': {
			uint64_t pid;

			if (usertp__parse_u64(optarg, 1, INT32_MAX, &pid)) {
				usertp__tool_error("list", "-P %s: not a process id", optarg);
				return 2;
			}
			pids = realloc(pids, (size_t)(nr_pids + 1) * sizeof(*pids));
			if (!pids)
				return 1;
			pids[nr_pids++] = (pid_t)pid;
			break;
		}
		case 'f':
			files = realloc(files, (size_t)(nr_files + 1) * sizeof(*files));
			if (!files)
				return 1;
			files[nr_files++] = optarg;
			break;
		case 'k':
			kernel = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'F':
			formats = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			usertp__tool_bad_option("list", optstring, argv);
			return 2;
		}
	}
	for (int i = optind; i < argc; i++) {
		if (strcmp(argv[i], "all") &&
		    usertp__spec_check(argv[i] + (argv[i][0] == '!'), USERTP__SPEC_GLOB)) {
			usertp__tool_error("list", "%s: not an event spec (sys:event, sys:*, *:event, "
					  "event, globs such as sys:io_*, all)", argv[i]);
			return 2;
		}
	}
	if (kernel)
		status |= list_kernel(formats, verbose, argv + optind, argc - optind, &seen);
	if (nr_files && formats) {
		usertp__tool_error("list", "-F needs running programs (formats are made at run time)");
		return 2;
	}
	/* Files: what they define, read from them. */
	for (int i = 0; i < nr_files; i++) {
		char err[600], *lines;

		if (usertp_elf_events(files[i], &lines, err, sizeof(err))) {
			usertp__tool_error("list", "%s", err);
			status = 1;
			continue;
		}
		list_lines(lines, verbose ? files[i] : NULL, argv + optind, argc - optind, &seen);
		free(lines);
	}
	if (nr_pids) {
		progs = calloc((size_t)nr_pids, sizeof(*progs));
		for (int i = 0; progs && i < nr_pids; i++) {
			int ret = usertp__client_find(pids[i], &progs[nr]);

			if (ret) {
				usertp__tool_error("list", "process %d: %s", (int)pids[i],
						  usertp__client_find_error(ret));
				status = 1;
				continue;
			}
			nr++;
		}
	} else if (!nr_files) {
		char dir[4096];

		nr = usertp__client_programs(&progs, false);
		if (nr < 0) {
			usertp__tool_error("list", "cannot read the runtime directory: %s",
					  strerror(-nr));
			return 1;
		}
		/* An empty list is not an answer anyone can read: say why it is empty. */
		if (!nr && kernel)
			; /* (the kernel's are listed) */
		else if (!nr && !usertp__client_dir(dir, sizeof(dir), false))
			usertp__tool_error("list", "no program of yours that uses libusertp is running "
					  "(none has an endpoint in %s); -f FILE lists the events of a "
					  "program that is not running", dir);
		else if (!nr)
			usertp__tool_error("list", "no program of yours that uses libusertp is running; "
					  "-f FILE lists the events of a program that is not running");
	}
	for (int i = 0; i < nr; i++)
		if (list_program(&progs[i], formats, verbose, argv + optind, argc - optind, &seen) &&
		    nr_pids)
			status = 1;
	if (argc > optind && !seen.n && (nr || nr_files || kernel)) {
		usertp__tool_error("list", "no %s has events matching %s%s",
				  kernel ? "program, file or kernel system"
				  : nr_files ? "program or file" : "running program", argv[optind],
				  argc - optind > 1 ? " ..." : "");
		status = 1;
	}
	for (size_t i = 0; i < seen.n; i++)
		free(seen.names[i]);
	free(seen.names);
	free(progs);
	free(pids);
	free(files);
	return status;
}
