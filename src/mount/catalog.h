/* SPDX-License-Identifier: MIT */
/*
 * catalog.h - usertp mount's events (catalog.c): those of every running program of the user
 * that uses libusertp, as tracefs lists them (available_events, events/SYS/EV/), each with an
 * id of the mount's that does not change while it runs, and its format text with that id.
 * Not locked: the caller holds the mount's lock.
 */
#ifndef USERTP_CATALOG_H
#define USERTP_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct usertp__catalog_event {
	char *system, *name;
	unsigned int id;     /* the mount's, from 1, in the order first seen */
	bool defined;	     /* by a program running at the last refresh */
	pid_t pid;	     /* one of those programs (its format is asked there) */
};

struct usertp__catalog {
	struct usertp__catalog_event *events; /* in the order first seen */
	size_t nr, cap;
	long long refreshed_ms; /* CLOCK_MONOTONIC */
};

/*
 * Ask every program of the user (as root: of every user) for its events, unless that was
 * done less than @max_age_ms ago.  Events no running program defines any more stay, not
 * defined.  Return: 0 or -ENOMEM.
 */
int usertp__catalog_refresh(struct usertp__catalog *c, int max_age_ms);
/* The event @system:@name if a running program defines it, or NULL (@name NULL: any of @system). */
const struct usertp__catalog_event *usertp__catalog_find(const struct usertp__catalog *c,
							 const char *system, const char *name);
/*
 * The format text of @ev (events/SYS/EV/format), with the catalog's id, asked of a program
 * that defines it.  Return: the text (to free()), or NULL with errno set.
 */
char *usertp__catalog_format(const struct usertp__catalog *c,
			     const struct usertp__catalog_event *ev);
void usertp__catalog_free(struct usertp__catalog *c);

#endif
