/* SPDX-License-Identifier: MIT */
/*
 * event-filter.c - filters in the traced program: each event file (a listener's, the embedded
 * recorder's, a session's) may have one, compiled against the event's fields (filter.c).
 *
 * A filtered record is written first into a scratch record of the thread (listener.c), the
 * filter runs on it whole, and only a record that passes goes into the ring buffer: one that
 * does not leaves nothing there (no padding, no lost count) and is counted in the file's
 * `filtered`.  Listeners' records are in scratch anyway: their commit runs the filter.
 *
 * The heads the generated probes call are swapped, not tested on every event: setting a
 * filter or a pid filter (thread.c) on a ring-buffer file installs a commit that takes both kinds of records (it looks
 * whether the record is the thread's scratch one) and then a reserve that writes to scratch;
 * removing it puts back the plain reserve and leaves that commit, so that a record reserved
 * either way is always committed right; with only a pid filter, the reserve checks it and
 * goes on to the plain one.  The filter a record must pass is read once, at its
 * reserve, and kept beside it; a replaced filter is freed after a grace period, when no
 * thread can still be running it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "rb-sink.h"

/* The event's fields, as the filter compiler takes them.  Return: how many, or -ENOMEM. */
static int event_fields(const struct usertp_event *ev, struct usertp__filter_field **out)
{
	unsigned int nr = 0;
	const struct usertp_event_field *f = ev->event_class->fields(&nr);
	struct usertp__filter_field *ff = calloc(nr + 1, sizeof(*ff));

	if (!ff)
		return -ENOMEM;
	for (unsigned int i = 0; i < nr; i++)
		ff[i] = (struct usertp__filter_field){ f[i].name, f[i].offset, f[i].size,
						       f[i].is_signed != 0,
						       usertp__filter_type_of(f[i].type) };
	*out = ff;
	return (int)nr;
}

/* tracefs's "0" (white space around it) removes the filter. */
static bool is_clear(const char *text)
{
	size_t i = strspn(text, " \t\n\r\v\f");

	return text[i] == '0' && !text[i + 1 + strspn(text + i + 1, " \t\n\r\v\f")];
}

void usertp__event_file_heads_locked(struct usertp_event_file *file)
{
	struct usertp_event_file_head filtered;

	if (!file->filter && !file->pids) {
		/* The plain reserve again; the commit that takes both stays (see above). */
		__atomic_store_n(&file->head.reserve, file->ops->reserve, __ATOMIC_RELEASE);
		return;
	}
	if (!usertp__rb_sink_filter_heads(file->ops, &filtered))
		return; /* (a listener's heads run the filters themselves) */
	/* The commit that takes both kinds first, then the reserve to scratch. */
	__atomic_store_n(&file->head.commit, filtered.commit, __ATOMIC_RELEASE);
	__atomic_store_n(&file->head.reserve, filtered.reserve, __ATOMIC_RELEASE);
}

int usertp__event_file_set_filter_locked(struct usertp_event_file *file, const char *text,
					 struct usertp__filter_error *err)
{
	struct usertp__filter_error none;
	struct usertp__filter_field *fields;
	struct usertp__filter *f = NULL, *old;
	char *copy = NULL;
	int nr, ret;

	if (!err)
		err = &none;
	*err = (struct usertp__filter_error){ 0, NULL, 0 };
	if (text && !is_clear(text)) {
		nr = event_fields(file->node->instances[0], &fields);
		if (nr < 0)
			return nr;
		ret = usertp__filter_compile(text, fields, (unsigned int)nr, &f, err);
		free(fields);
		if (ret)
			return ret;
		copy = strdup(text);
		if (!copy) {
			usertp__filter_free(f);
			return -ENOMEM;
		}
	}
	old = file->filter;
	__atomic_store_n(&file->filter, f, __ATOMIC_RELEASE);
	usertp__event_file_heads_locked(file);
	if (old)
		usertp__defer_free_locked(old);
	free(file->filter_text);
	file->filter_text = copy;
	return 0;
}

