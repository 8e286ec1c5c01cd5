/* SPDX-License-Identifier: MIT */
/* event-ids.c - one id space for the events of several programs (event-ids.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event-ids.h"
#include "hash.h"
#include "format-field.h"

static bool is_used(const struct usertp__ids *ids, unsigned int id)
{
	return ids->used[id / 8] & (1u << id % 8);
}

static void use(struct usertp__ids *ids, unsigned int id)
{
	ids->used[id / 8] |= (uint8_t)(1u << id % 8);
}

int usertp__ids_add(struct usertp__ids *ids, const char *system, const char *format,
		    unsigned int want, bool *added)
{
	const char *head_end, *body;
	size_t head_len;
	uint64_t hash;
	unsigned int i, old_id;

	*added = false;
	if (!system || !format || want > USERTP__IDS_MAX ||
	    !usertp__format_split_id(format, &head_end, &old_id, &body))
		return -EINVAL;
	head_len = (size_t)(head_end - format);
	hash = usertp__fnv1a(USERTP_FNV1A_START, system, strlen(system) + 1);
	hash = usertp__fnv1a(hash, format, head_len);
	hash = usertp__fnv1a(hash, body, strlen(body));
	for (i = 0; i < ids->nr; i++) {
		const struct usertp__id_event *e = &ids->events[i];

		if (e->hash == hash && !strcmp(e->system, system) && strlen(e->head) == head_len &&
		    !memcmp(e->head, format, head_len) && !strcmp(e->body, body))
			return (int)i;
	}
	if (ids->nr == USERTP__IDS_MAX)
		return -E2BIG;
	if (ids->nr == ids->cap) {
		unsigned int cap = ids->cap ? 2 * ids->cap : 64;
		struct usertp__id_event *more = realloc(ids->events, cap * sizeof(*more));

		if (!more)
			return -ENOMEM;
		ids->events = more;
		ids->cap = cap;
	}
	ids->events[i] = (struct usertp__id_event){ strdup(system), strndup(format, head_len),
						    strdup(body), hash, want, 0 };
	if (!ids->events[i].system || !ids->events[i].head || !ids->events[i].body) {
		free(ids->events[i].system);
		free(ids->events[i].head);
		free(ids->events[i].body);
		return -ENOMEM;
	}
	ids->nr++;
	*added = true;
	return (int)i;
}

void usertp__ids_assign(struct usertp__ids *ids)
{
	unsigned int i;

	use(ids, 0); /* id 0 is not given */
	for (i = 0; i < ids->nr; i++) {
		struct usertp__id_event *e = &ids->events[i];

		if (!e->id && e->want && !is_used(ids, e->want)) {
			e->id = e->want;
			use(ids, e->id);
		}
	}
	for (i = 0; i < ids->nr; i++) {
		struct usertp__id_event *e = &ids->events[i];

		if (e->id)
			continue;
		while (is_used(ids, ids->next_free))
			ids->next_free++; /* (fewer events than ids: there is always one) */
		e->id = ids->next_free;
		use(ids, e->id);
	}
}

char *usertp__ids_format(const struct usertp__ids *ids, unsigned int index)
{
	const struct usertp__id_event *e = &ids->events[index];
	char *text;

	if (asprintf(&text, "%sID: %u\n%s", e->head, e->id, e->body) < 0)
		return NULL;
	return text;
}

void usertp__ids_free(struct usertp__ids *ids)
{
	for (unsigned int i = 0; i < ids->nr; i++) {
		free(ids->events[i].system);
		free(ids->events[i].head);
		free(ids->events[i].body);
	}
	free(ids->events);
	memset(ids, 0, sizeof(*ids));
}
