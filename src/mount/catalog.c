/* SPDX-License-Identifier: MIT */
/* catalog.c - usertp mount's events (catalog.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "catalog.h"
#include "client.h"

#define CALL_TIMEOUT_MS 2000

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct usertp__catalog_event *find(const struct usertp__catalog *c, const char *system,
					  size_t system_len, const char *name)
{
	for (size_t i = 0; i < c->nr; i++)
		if (strlen(c->events[i].system) == system_len &&
		    !strncmp(c->events[i].system, system, system_len) && !strcmp(c->events[i].name, name))
			return &c->events[i];
	return NULL;
}

/* "sys:event" of program @pid: defined; new ones get the next id.  Return: 0 or -ENOMEM. */
static int note(struct usertp__catalog *c, const char *line, pid_t pid)
{
	const char *colon = strchr(line, ':');
	struct usertp__catalog_event *ev;

	if (!colon || colon == line || !colon[1])
		return 0;
	ev = find(c, line, (size_t)(colon - line), colon + 1);
	if (!ev) {
		if (c->nr == c->cap) {
			size_t cap = c->cap ? 2 * c->cap : 64;
			struct usertp__catalog_event *more = realloc(c->events, cap * sizeof(*more));

			if (!more)
				return -ENOMEM;
			c->events = more;
			c->cap = cap;
		}
		ev = &c->events[c->nr];
		*ev = (struct usertp__catalog_event){ strndup(line, (size_t)(colon - line)),
						      strdup(colon + 1), (unsigned int)c->nr + 1, false, 0 };
		if (!ev->system || !ev->name) {
			free(ev->system);
			free(ev->name);
			return -ENOMEM;
		}
		c->nr++;
	}
	if (!ev->defined) {
		ev->defined = true;
		ev->pid = pid;
	}
	return 0;
}

int usertp__catalog_refresh(struct usertp__catalog *c, int max_age_ms)
{
	struct usertp__program *progs;
	long long now = now_ms();
	int n, ret = 0;

	if (c->refreshed_ms && now - c->refreshed_ms < max_age_ms)
		return 0;
	c->refreshed_ms = now;
	for (size_t i = 0; i < c->nr; i++)
		c->events[i].defined = false;
	n = usertp__client_programs(&progs);
	for (int i = 0; i < n && !ret; i++) {
		char *reply = NULL, *save = NULL;
		int sock = progs[i].pid == getpid() ? -1 : usertp__client_connect(&progs[i]);

		if (sock < 0)
			continue;
		/* (A program that does not answer is left out of this refresh.) */
		if (!usertp__client_call(sock, "events", &reply, NULL, CALL_TIMEOUT_MS))
			for (char *line = strtok_r((char *)usertp__client_body(reply), "\n", &save);
			     line && !ret; line = strtok_r(NULL, "\n", &save))
				ret = note(c, line, progs[i].pid);
		free(reply);
		close(sock);
	}
	if (n > 0)
		free(progs);
	return ret;
}

const struct usertp__catalog_event *usertp__catalog_find(const struct usertp__catalog *c,
							 const char *system, const char *name)
{
	for (size_t i = 0; i < c->nr; i++) {
		const struct usertp__catalog_event *ev = &c->events[i];

		if (ev->defined && !strcmp(ev->system, system) && (!name || !strcmp(ev->name, name)))
			return ev;
	}
	return NULL;
}

char *usertp__catalog_format(const struct usertp__catalog *c, const struct usertp__catalog_event *ev)
{
	struct usertp__program prog;
	char req[600], *reply = NULL, *text = NULL;
	const char *body, *id_line, *id_end;
	int sock, ret;

	(void)c;
	ret = usertp__client_find(ev->pid, &prog);
	sock = ret ? ret : usertp__client_connect(&prog);
	if (sock < 0) {
		errno = -sock;
		return NULL;
	}
	snprintf(req, sizeof(req), "format %s:%s", ev->system, ev->name);
	ret = usertp__client_call(sock, req, &reply, NULL, CALL_TIMEOUT_MS);
	close(sock);
	body = ret ? NULL : usertp__client_body(reply);
	/* The program's id becomes the mount's: "ID: N" is the third line. */
	id_line = body ? strstr(body, "\nID: ") : NULL;
	if (!id_line) {
		free(reply);
		errno = ret == -ETIMEDOUT ? ETIMEDOUT : EIO;
		return NULL;
	}
	id_end = strchr(id_line + 1, '\n');
	if (asprintf(&text, "%.*s\nID: %u%s", (int)(id_line - body), body, ev->id,
		     id_end ? id_end : "\n") < 0)
		text = NULL;
	free(reply);
	return text;
}

void usertp__catalog_free(struct usertp__catalog *c)
{
	for (size_t i = 0; i < c->nr; i++) {
		free(c->events[i].system);
		free(c->events[i].name);
	}
	free(c->events);
	*c = (struct usertp__catalog){ NULL, 0, 0, 0 };
}
