/* SPDX-License-Identifier: MIT */
/* filter-fields.h - the fields the filter tests and the fuzz target compile against. */
#ifndef FILTER_FIELDS_H
#define FILTER_FIELDS_H

#include "filter.h"

/* sched_switch, as the kernel's format gives it (after the 8-byte common header). */
static const struct usertp__filter_field sched_switch[] = {
	{ "prev_comm", 8, 16, false, USERTP__FILTER_CHARS },
	{ "prev_pid", 24, 4, true, USERTP__FILTER_NUMBER },
	{ "prev_prio", 28, 4, true, USERTP__FILTER_NUMBER },
	{ "prev_state", 32, 8, true, USERTP__FILTER_NUMBER },
	{ "next_comm", 40, 16, false, USERTP__FILTER_CHARS },
	{ "next_pid", 56, 4, true, USERTP__FILTER_NUMBER },
	{ "next_prio", 60, 4, true, USERTP__FILTER_NUMBER },
};

/* Ours: strings at the end of the record. */
static const struct usertp__filter_field mine[] = {
	{ "id", 8, 4, false, USERTP__FILTER_NUMBER },
	{ "name", 12, 4, false, USERTP__FILTER_DATA_LOC },
	{ "small", 16, 1, true, USERTP__FILTER_NUMBER },
	{ "half", 18, 2, false, USERTP__FILTER_NUMBER },
	{ "big", 24, 8, false, USERTP__FILTER_NUMBER },
	{ "rel", 32, 4, false, USERTP__FILTER_REL_LOC },
	{ "cpu", 36, 4, false, USERTP__FILTER_NUMBER }, /* hides the pseudo-field */
	{ "arr", 40, 12, false, USERTP__FILTER_OTHER },
};

#define SCHED sched_switch, sizeof(sched_switch) / sizeof(sched_switch[0])
#define MINE mine, sizeof(mine) / sizeof(mine[0])

#endif
