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
	bool defined;	     /* by a program running at the last refresh (or built in) */
	bool builtin;	     /* ftrace:print (trace_marker's records): the mount's own */
	pid_t pid;	     /* one of those programs (its format is asked there) */
	char *format;	     /* the format last asked (of format_pid), kept for when none answers */
	pid_t format_pid;
};

/*
 * Is @ev of ftrace's kind: never enabled by set_event or an enable file, not listed in
 * available_events, no enable or filter file, as the kernel's events/ftrace (the mount's own
 * print and raw_data, and the programs' usertp_printk() records, bprint and bputs)?
 */
static inline bool usertp__catalog_fixed(const struct usertp__catalog_event *ev)
{
	return ev->builtin || (ev->system[0] == 'f' && !__builtin_strcmp(ev->system, "ftrace"));
}

struct usertp__catalog {
	struct usertp__catalog_event *events; /* in the order first seen */
	size_t nr, cap;
	long long refreshed_ms; /* CLOCK_MONOTONIC */
};

/* What the programs said, asked without the catalog (it may be read meanwhile). */
struct usertp__catalog_answers {
	struct {
		pid_t pid;
		char *reply; /* "ok" then "sys:event" lines; NULL: it did not answer in time */
	} *progs;
	size_t nr;
};

/* Is @c older than @max_age_ms? */
bool usertp__catalog_due(const struct usertp__catalog *c, int max_age_ms);
/*
 * Ask every program of the user (as root: of every user) for its events, all at once: 2 s
 * at most for all (another user's, USERTP__FOREIGN_ANSWER_MS).
 * Return: 0 or -ENOMEM.
 */
int usertp__catalog_ask(struct usertp__catalog_answers *a);
/*
 * Take @a into @c: the events defined now; those no running program defines any more stay,
 * not defined; a program that did not answer keeps the events it had.  Return: 0 or -ENOMEM.
 */
int usertp__catalog_take(struct usertp__catalog *c, const struct usertp__catalog_answers *a);
void usertp__catalog_answers_free(struct usertp__catalog_answers *a);
/*
 * The id of @system:@name, an event a program recorded: added (not defined until a program
 * says it defines it) if the catalog has not seen it yet.  Return: the id, or 0 (no memory).
 */
unsigned int usertp__catalog_id(struct usertp__catalog *c, const char *system, const char *name);
/* The event @system:@name if a running program defines it, or NULL (@name NULL: any of @system). */
struct usertp__catalog_event *usertp__catalog_find(struct usertp__catalog *c, const char *system,
						   const char *name);
/*
 * The format text of @system:@name (events/SYS/EV/format) with the catalog's @id, asked of
 * program @pid, which defines it.  Return: the text (to free()), or NULL with errno set.
 */
char *usertp__catalog_format(const char *system, const char *name, unsigned int id, pid_t pid);
void usertp__catalog_free(struct usertp__catalog *c);

#endif
