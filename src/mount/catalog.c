/* SPDX-License-Identifier: MIT */
/* catalog.c - usertp mount's events (catalog.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "catalog.h"
#include "private/usertp-consumer-private.h"
#include "format-field.h"

#define CALL_TIMEOUT_MS 2000

static struct usertp__catalog_event *find(const struct usertp__catalog *c, const char *system,
					  size_t system_len, const char *name)
{
	for (size_t i = 0; i < c->nr; i++)
		if (strlen(c->events[i].system) == system_len &&
		    !strncmp(c->events[i].system, system, system_len) && !strcmp(c->events[i].name, name))
			return &c->events[i];
	return NULL;
}

/* The event @system (@system_len bytes):@name, added (the next id, not defined) if new. */
static struct usertp__catalog_event *find_or_add(struct usertp__catalog *c, const char *system,
						 size_t system_len, const char *name)
{
	struct usertp__catalog_event *ev = find(c, system, system_len, name);

	if (!ev) {
		if (c->nr == c->cap) {
			size_t cap = c->cap ? 2 * c->cap : 64;
			struct usertp__catalog_event *more = realloc(c->events, cap * sizeof(*more));

			if (!more)
				return NULL;
			c->events = more;
			c->cap = cap;
		}
		ev = &c->events[c->nr];
		*ev = (struct usertp__catalog_event){ .system = strndup(system, system_len),
						      .name = strdup(name),
						      .id = (unsigned int)c->nr + 1 };
		if (!ev->system || !ev->name) {
			free(ev->system);
			free(ev->name);
			return NULL;
		}
		c->nr++;
	}
	return ev;
}

unsigned int usertp__catalog_id(struct usertp__catalog *c, const char *system, const char *name)
{
	struct usertp__catalog_event *ev = find_or_add(c, system, strlen(system), name);

	return ev ? ev->id : 0;
}

/* "sys:event" of program @pid: defined; new ones get the next id.  Return: 0 or -ENOMEM. */
static int note(struct usertp__catalog *c, const char *line, pid_t pid)
{
	const char *colon = strchr(line, ':');
	struct usertp__catalog_event *ev;

	if (!colon || colon == line || !colon[1])
		return 0;
	ev = find_or_add(c, line, (size_t)(colon - line), colon + 1);
	if (!ev)
		return -ENOMEM;
	if (!ev->defined) {
		ev->defined = true;
		ev->pid = pid;
	}
	return 0;
}

bool usertp__catalog_due(const struct usertp__catalog *c, int max_age_ms)
{
	return !c->refreshed_ms || usertp__mono_ms() - c->refreshed_ms >= max_age_ms;
}

int usertp__catalog_ask(struct usertp__catalog_answers *a)
{
	struct usertp__program *progs;
	int n = usertp__client_programs(&progs, true), ret = 0, *results = NULL;
	char **replies = NULL;

	*a = (struct usertp__catalog_answers){ NULL, 0 };
	if (n <= 0)
		return 0;
	/* (Not ourselves: the mount's own thread would have to answer the mount.) */
	for (int i = 0; i < n; i++)
		if (progs[i].pid == getpid())
			progs[i--] = progs[--n];
	a->progs = calloc((size_t)n + 1, sizeof(*a->progs));
	replies = calloc((size_t)n + 1, sizeof(*replies));
	results = calloc((size_t)n + 1, sizeof(*results));
	if (!a->progs || !replies || !results ||
	    usertp__client_ask_all(progs, (size_t)n, USERTP_CTL_MSG_EVENTS, CALL_TIMEOUT_MS, replies,
				   results))
		ret = -ENOMEM;
	for (int i = 0; i < n && !ret; i++) {
		if (results[i] == -ENOENT)
			continue; /* gone */
		/* A program that does not answer (stopped?) keeps what it had: reply NULL. */
		if (results[i]) {
			free(replies[i]);
			replies[i] = NULL;
		}
		a->progs[a->nr].pid = progs[i].pid;
		a->progs[a->nr++].reply = replies[i];
	}
	free(replies);
	free(results);
	free(progs);
	return ret;
}

/* The kernel's common fields, as every format has them. */
#define COMMON_FIELDS                                                                       \
	"format:\n"                                                                          \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"                  \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"                  \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"          \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"                             \
	"\n"

/*
 * ftrace:print, the record a trace_marker write makes, as the kernel's format has it but for
 * the print fmt: the kernel's "%ps: %s" prints the address of its tracing_mark_write()
 * (found in kallsyms); the mount has none to give (ip is 0), so it says the name itself.
 */
static const char print_format[] =
	COMMON_FIELDS
	"\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:char buf[];\toffset:16;\tsize:0;\tsigned:0;\n"
	"\n"
	"print fmt: \"tracing_mark_write: %s\", REC->buf\n";

/* ftrace:raw_data, the record a trace_marker_raw write makes: the kernel's format. */
static const char raw_data_format[] =
	COMMON_FIELDS
	"\tfield:unsigned int id;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:char buf[];\toffset:12;\tsize:0;\tsigned:0;\n"
	"\n"
	"print fmt: \"id:%04x %08x\", REC->id, (int)REC->buf[0]\n";

/* The mount's own events (ftrace:*): their format texts after the name and ID lines. */
static const struct {
	const char *name, *format;
} builtins[] = { { "print", print_format }, { "raw_data", raw_data_format } };

int usertp__catalog_take(struct usertp__catalog *c, const struct usertp__catalog_answers *a)
{
	int ret = 0;

	for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++) {
		struct usertp__catalog_event *ev = find_or_add(c, "ftrace", 6, builtins[i].name);

		if (!ev)
			return -ENOMEM;
		ev->defined = ev->builtin = true;
	}
	c->refreshed_ms = usertp__mono_ms();
	for (size_t i = 0; i < c->nr; i++) {
		struct usertp__catalog_event *ev = &c->events[i];
		bool answered = false;

		if (ev->builtin)
			continue;
		for (size_t k = 0; k < a->nr; k++)
			answered |= a->progs[k].reply && a->progs[k].pid == ev->pid;
		/* One that runs and did not answer (stopped, busy) keeps what it had. */
		ev->defined &= !answered && (!kill(ev->pid, 0) || errno == EPERM);
	}
	for (size_t i = 0; i < a->nr && !ret; i++) {
		const char *at;

		if (!a->progs[i].reply)
			continue;
		at = usertp__client_body(a->progs[i].reply);

		while (*at && !ret) {
			size_t len = strcspn(at, "\n");
			char line[600];

			if (len < sizeof(line)) {
				memcpy(line, at, len);
				line[len] = 0;
				ret = note(c, line, a->progs[i].pid);
			}
			at += len + (at[len] == '\n');
		}
	}
	return ret;
}

void usertp__catalog_answers_free(struct usertp__catalog_answers *a)
{
	for (size_t i = 0; i < a->nr; i++)
		free(a->progs[i].reply);
	free(a->progs);
	*a = (struct usertp__catalog_answers){ NULL, 0 };
}

struct usertp__catalog_event *usertp__catalog_find(struct usertp__catalog *c, const char *system,
						   const char *name)
{
	for (size_t i = 0; i < c->nr; i++) {
		struct usertp__catalog_event *ev = &c->events[i];

		if (ev->defined && !strcmp(ev->system, system) && (!name || !strcmp(ev->name, name)))
			return ev;
	}
	return NULL;
}

char *usertp__catalog_format(const char *system, const char *name, unsigned int id, pid_t pid)
{
	for (size_t i = 0; !strcmp(system, "ftrace") && i < sizeof(builtins) / sizeof(builtins[0]); i++) {
		char *text;

		if (!strcmp(name, builtins[i].name))
			return asprintf(&text, "name: %s\nID: %u\n%s", name, id, builtins[i].format) < 0
				       ? NULL
				       : text;
	}
	struct usertp__program prog;
	char req[600], *reply = NULL, *text = NULL;
	const char *body;
	int sock, ret;

	ret = usertp__client_find(pid, &prog);
	sock = ret ? ret : usertp__client_connect(&prog);
	if (sock < 0) {
		errno = -sock;
		return NULL;
	}
	snprintf(req, sizeof(req), "%s:%s", system, name);
	ret = usertp__client_call(sock, USERTP_CTL_MSG_FORMAT, req, &reply, NULL, CALL_TIMEOUT_MS);
	close(sock);
	body = ret ? NULL : usertp__client_body(reply);
	/* The program's id becomes the mount's. */
	text = body ? usertp__format_with_id(body, id) : NULL;
	if (!text)
		errno = ret == -ETIMEDOUT ? ETIMEDOUT : EIO;
	free(reply);
	return text;
}

void usertp__catalog_free(struct usertp__catalog *c)
{
	for (size_t i = 0; i < c->nr; i++) {
		free(c->events[i].system);
		free(c->events[i].name);
		free(c->events[i].format);
	}
	free(c->events);
	*c = (struct usertp__catalog){ NULL, 0, 0, 0 };
}
