/* SPDX-License-Identifier: MIT */
/*
 * list.c - usertp list: the events of running programs that use libusertp.
 *
 *	usertp list [-P PID]... [-F] [SPEC...]
 *
 * One "sys:event" line per event (available_events form), each event once however many
 * programs define it, in the order found (programs by pid).  SPECs (set_event forms, as in
 * `usertp record -e`) select events; -F prints their format texts instead, each after a
 * "system: SYS" line, separated by blank lines, as `trace-cmd list -F` does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/internal.h"
#include "../lib/number.h"
#include "client.h"
#include "tool.h"

#define CALL_TIMEOUT_MS 5000

static const char usage_text[] =
	"usage: usertp list [-P PID]... [-F] [SPEC...]\n"
	"  -P PID   only this program (repeatable; default: every program of this user)\n"
	"  -F       print the format texts\n"
	"  SPEC     sys:event, sys:*, *:event, event or sys, !SPEC to leave out\n";

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

/* Does the SPEC list select sys:event?  No SPEC: everything. */
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
		if (usertp__spec_match(specs[i] + negate, system, colon + 1))
			on = !negate;
	}
	return on;
}

static int list_program(const struct usertp_program *prog, bool formats, char **specs,
			int nr_specs, struct seen *seen)
{
	char *reply = NULL, *line, *save = NULL, err[256];
	int sock = usertp_client_connect(prog), ret;

	if (sock < 0)
		return sock;
	ret = usertp_client_call(sock, "events", &reply, NULL, CALL_TIMEOUT_MS);
	if (ret) {
		if (ret == -EREMOTEIO)
			usertp_tool_error("list", "process %d: %s", (int)prog->pid,
					  usertp_client_error_text(reply, err, sizeof(err)));
		free(reply);
		close(sock);
		return ret;
	}
	for (line = strtok_r((char *)usertp_client_body(reply), "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char req[512], *fmt = NULL;

		if (!selected(specs, nr_specs, line) || !seen_add(seen, line))
			continue;
		if (!formats) {
			printf("%s\n", line);
			continue;
		}
		snprintf(req, sizeof(req), "format %s", line);
		if (!usertp_client_call(sock, req, &fmt, NULL, CALL_TIMEOUT_MS))
			printf("%ssystem: %.*s\n%s", seen->n > 1 ? "\n" : "",
			       (int)strcspn(line, ":"), line, usertp_client_body(fmt));
		free(fmt);
	}
	free(reply);
	close(sock);
	return 0;
}

int usertp_cmd_list(int argc, char **argv)
{
	static const struct option longopts[] = { { "help", no_argument, NULL, 'h' }, { 0 } };
	struct usertp_program *progs = NULL;
	struct seen seen = { NULL, 0, 0 };
	pid_t *pids = NULL;
	int nr_pids = 0, nr = 0, opt, status = 0;
	bool formats = false;

	while ((opt = getopt_long(argc, argv, "+P:Fh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'P': {
			uint64_t pid;

			if (usertp__parse_u64(optarg, 1, INT32_MAX, &pid)) {
				usertp_tool_error("list", "-P %s: not a process id", optarg);
				return 2;
			}
			pids = realloc(pids, (size_t)(nr_pids + 1) * sizeof(*pids));
			if (!pids)
				return 1;
			pids[nr_pids++] = (pid_t)pid;
			break;
		}
		case 'F':
			formats = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			usertp_tool_bad_option("list", "+P:Fh", argv);
			return 2;
		}
	}
	for (int i = optind; i < argc; i++) {
		if (strcmp(argv[i], "all") &&
		    usertp__spec_check(argv[i] + (argv[i][0] == '!'), USERTP__SPEC_GLOB)) {
			usertp_tool_error("list", "%s: not an event spec (sys:event, sys:*, *:event, "
					  "event)", argv[i]);
			return 2;
		}
	}
	if (nr_pids) {
		progs = calloc((size_t)nr_pids, sizeof(*progs));
		for (int i = 0; progs && i < nr_pids; i++) {
			int ret = usertp_client_find(pids[i], &progs[nr]);

			if (ret) {
				usertp_tool_error("list", "process %d: %s", (int)pids[i],
						  usertp_client_find_error(ret));
				status = 1;
				continue;
			}
			nr++;
		}
	} else {
		nr = usertp_client_programs(&progs);
		if (nr < 0) {
			usertp_tool_error("list", "cannot read the runtime directory: %s",
					  strerror(-nr));
			return 1;
		}
	}
	for (int i = 0; i < nr; i++)
		if (list_program(&progs[i], formats, argv + optind, argc - optind, &seen) &&
		    nr_pids)
			status = 1;
	if (argc > optind && !seen.n) {
		usertp_tool_error("list", "no running program has events matching %s%s",
				  argv[optind], argc - optind > 1 ? " ..." : "");
		status = 1;
	}
	for (size_t i = 0; i < seen.n; i++)
		free(seen.names[i]);
	free(seen.names);
	free(progs);
	free(pids);
	return status;
}
