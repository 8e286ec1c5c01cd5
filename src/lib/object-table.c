/* SPDX-License-Identifier: MIT */
/*
 * object-table.c - the objects registered (each library or executable with tracepoints,
 * objects.c registers them), and the one lock that guards them and everything else of the
 * registry (internal.h): the bottom of libusertp, which the jump labels, the formats and the
 * tracepoints read.
 */
#define _GNU_SOURCE
#include <string.h>

#include "internal.h"

pthread_mutex_t usertp__lock = PTHREAD_MUTEX_INITIALIZER;

static struct usertp__object **objects;
static unsigned int nr_objects, objects_cap;

unsigned int usertp__objects_count_locked(void)
{
	return nr_objects;
}

struct usertp__object *usertp__object_at_locked(unsigned int i)
{
	return objects[i];
}

bool usertp__objects_add_locked(struct usertp__object *obj)
{
	if (!usertp__grow((void **)&objects, &objects_cap, nr_objects + 1, sizeof(*objects)))
		return false;
	objects[nr_objects++] = obj;
	return true;
}

void usertp__objects_remove_locked(struct usertp__object *obj)
{
	for (unsigned int i = 0; i < nr_objects; i++) {
		if (objects[i] == obj) {
			memmove(&objects[i], &objects[i + 1], (nr_objects - i - 1) * sizeof(*objects));
			nr_objects--;
			return;
		}
	}
}
