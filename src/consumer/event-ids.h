/* SPDX-License-Identifier: MIT */
/*
 * event-ids.h - private to libusertp-consumer: one id space for the events of several
 * programs, the rule the trace.dat merge and the session's reader share.
 *
 * Each program numbers its events itself.  Two programs' events are the same event when
 * their system, name and format text (but for the "ID:" line) are the same; each distinct
 * event gets one id: the id it has in the first program that declares it, where no event
 * added before wants or has it, else the lowest free one.  Its format text is then rewritten
 * with that id.
 */
#ifndef USERTP_EVENT_IDS_H
#define USERTP_EVENT_IDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define USERTP__IDS_MAX 0xffffu /* common_type is a u16 */

struct usertp__id_event {
	char *system;
	char *head;  /* "name: NAME\n" */
	char *body;  /* what follows the "ID: N\n" line */
	uint64_t hash;
	unsigned int want; /* its id in the first program that declared it */
	unsigned int id;   /* 0 until given (usertp__ids_assign()) */
};

struct usertp__ids {
	struct usertp__id_event *events;
	unsigned int nr, cap;
	uint8_t used[(USERTP__IDS_MAX + 1) / 8];
	unsigned int next_free;
};

/*
 * The event with @system and @format ("name: NAME\nID: N\n..."), added if new, declared with
 * id @want.  Return: its index, -EINVAL (a format text without its name and ID lines, an id
 * out of range), -E2BIG (the space is full) or -ENOMEM.  *added says if it is new.
 */
int usertp__ids_add(struct usertp__ids *ids, const char *system, const char *format,
		    unsigned int want, bool *added);
/* Give every event without an id one: the ids they want where free first, then the lowest. */
void usertp__ids_assign(struct usertp__ids *ids);
/* The format text of event @index with its id (to free()), or NULL. */
char *usertp__ids_format(const struct usertp__ids *ids, unsigned int index);
void usertp__ids_free(struct usertp__ids *ids);

#endif
