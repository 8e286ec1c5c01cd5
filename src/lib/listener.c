/* SPDX-License-Identifier: MIT */
/*
 * listener.c - in-process consumers of records.
 *
 * A listener is a set of event specs and a sink: the public listeners hand each record to a
 * callback; the recorder (recorder.c) is a listener whose sink is the ring buffers.
 *
 * A listener owns one event file per event its specs select.  Its records are written into
 * a per-thread scratch area (allocated on a thread's first record, freed when the thread
 * exits; up to four nested records, for a listener whose callback hits a tracepoint) and
 * handed to the callback at commit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "listener.h"
#include "scratch.h"
#include "thread.h"

/* A filter of a listener: the events @spec selects, filtered by @text where it compiles. */
struct listener_filter {
	struct listener_filter *next;
	char *spec, *text;
};

struct usertp_listener {
	struct usertp_listener *next;
	char **specs; /* as given, a leading '!' meaning "take out" */
	unsigned int nr_specs;
	const struct usertp_event_file_head *ops; /* where its records go */
	usertp_record_func fn;
	void *arg;
	struct usertp_event_file *files; /* next_in_owner */
	struct listener_filter *filters; /* in the order set (the last that applies wins) */
	/* The pid filter: the lists as set (and followed), and as its files have it. */
	struct usertp__pid_list trace_pids, notrace_pids;
	bool event_fork;
	bool following; /* counted in usertp__pid_following */
	struct usertp__pid_filter *pids;
	/* Set: an event that comes later and refuses its filter is not recorded, and said. */
	usertp__filter_refused_func filter_refused;
	unsigned long lost;
};

static struct usertp_listener *listeners;

static void *listener_reserve(struct usertp_event_file *file, size_t size)
{
	struct usertp_listener *l = file->owner;
	void *record;

	if (!usertp__event_file_pid_passes(file))
		return NULL;
	record = usertp__scratch_push(size, __atomic_load_n(&file->filter, __ATOMIC_ACQUIRE));
	if (!record) {
		__atomic_fetch_add(&l->lost, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	return usertp__entry_fill(file, record);
}

/* @record is the innermost record being written in this thread: the last reserved. */
static void listener_commit(struct usertp_event_file *file, void *record)
{
	struct usertp_listener *l = file->owner;
	const struct usertp_event *ev = __atomic_load_n(&file->event, __ATOMIC_ACQUIRE);
	const void *filter;
	size_t size;

	if (!usertp__scratch_pop(record, &size, &filter))
		return;
	if (filter && !usertp__event_file_passes(file, filter, record, size))
		return;
	l->fn(ev, record, size, l->arg);
}

static const struct usertp_event_file_head listener_ops = {
	listener_reserve,
	listener_commit,
};

static bool listener_selects(const struct usertp_listener *l, const struct usertp_event *ev)
{
	bool on = false;
	unsigned int i;

	for (i = 0; i < l->nr_specs; i++) {
		const char *spec = l->specs[i];
		bool negate = spec[0] == '!';

		if (usertp__spec_match(spec + negate, ev->event_class->system, ev->name))
			on = !negate;
	}
	return on;
}

static void listener_attach_locked(struct usertp_listener *l, struct usertp__event_node *node)
{
	struct usertp_event_file *file;

	if (!listener_selects(l, node->instances[0]))
		return;
	file = calloc(1, sizeof(*file));
	if (!file)
		return;
	file->node = node;
	file->ops = l->ops;
	file->owner = l;
	file->sink = l->arg;
	file->pids = l->pids;
	/* A filter set for events this one is among applies to it, from its first record. */
	for (const struct listener_filter *lf = l->filters; lf; lf = lf->next) {
		const struct usertp_event *ev = node->instances[0];
		struct usertp__filter_error e;

		if (!usertp__spec_match(lf->spec, ev->event_class->system, ev->name) ||
		    !usertp__event_file_set_filter_locked(file, lf->text, &e) || !l->filter_refused)
			continue;
		l->filter_refused(l->arg, lf->spec, ev, lf->text, &e);
		usertp__event_file_set_filter_locked(file, NULL, NULL);
		free(file);
		return;
	}
	if (usertp__event_file_enable_locked(file)) {
		usertp__event_file_set_filter_locked(file, NULL, NULL);
		free(file);
		return;
	}
	file->next_in_node = node->files;
	node->files = file;
	file->next_in_owner = l->files;
	l->files = file;
}

void usertp__listener_describe(const struct usertp_listener *l, FILE *f)
{
	pthread_mutex_lock(&usertp__lock);
	fputs("events=", f);
	for (unsigned int i = 0; i < l->nr_specs; i++)
		fprintf(f, "%s%s", i ? "," : "", l->specs[i]);
	fputc('\n', f);
	for (const struct listener_filter *lf = l->filters; lf; lf = lf->next) {
		fprintf(f, "filter %s ", lf->spec);
		for (const char *c = lf->text ? lf->text : "0"; *c; c++)
			fputc(*c == '\n' ? ' ' : *c, f);
		fputc('\n', f);
	}
	if (l->trace_pids.nr || l->notrace_pids.nr || l->event_fork) {
		char *trace = usertp__pid_list_text(&l->trace_pids, ','),
		     *notrace = usertp__pid_list_text(&l->notrace_pids, ',');

		fprintf(f, "pids %s\nnotrace_pids %s\nevent_fork %d\n", trace ? trace : "?",
			notrace ? notrace : "?", l->event_fork);
		free(trace);
		free(notrace);
	}
	pthread_mutex_unlock(&usertp__lock);
}

void usertp__listener_on_filter_refused(struct usertp_listener *l, usertp__filter_refused_func fn)
{
	l->filter_refused = fn;
}

/* Take @file off its event and its owner; it is freed after a grace period. */
static void file_release_locked(struct usertp_event_file *file)
{
	struct usertp_event_file **pp;
	struct usertp_listener *l = file->owner;

	usertp__event_file_disable_locked(file);
	for (pp = &file->node->files; *pp; pp = &(*pp)->next_in_node) {
		if (*pp == file) {
			*pp = file->next_in_node;
			break;
		}
	}
	for (pp = &l->files; *pp; pp = &(*pp)->next_in_owner) {
		if (*pp == file) {
			*pp = file->next_in_owner;
			break;
		}
	}
	if (file->filter)
		usertp__defer_free_locked(file->filter);
	free(file->filter_text);
	usertp__defer_free_locked(file);
}

static void listeners_event_added_locked(struct usertp__event_node *node)
{
	struct usertp_listener *l;

	for (l = listeners; l; l = l->next)
		listener_attach_locked(l, node);
}

static void listeners_event_removed_locked(struct usertp__event_node *node)
{
	while (node->files)
		file_release_locked(node->files);
}

/* Split @events at commas and white space and check every spec (spec.h). */
static int specs_parse(const char *events, unsigned int flags, char ***out, unsigned int *nr)
{
	struct usertp__spec_list list;
	int ret = usertp__spec_list_parse(events, flags, &list, NULL);

	*out = list.specs;
	*nr = list.nr;
	return ret;
}

static void specs_free(char **specs, unsigned int n)
{
	usertp__spec_list_free(&(struct usertp__spec_list){ specs, n });
}

int usertp_listener_create(const char *events, usertp_record_func fn, void *arg,
			   struct usertp_listener **out)
{
	if (!fn)
		return -EINVAL;
	return usertp__listener_create_ops(events, 0, &listener_ops, fn, arg, out);
}

static const struct usertp__registry_watcher listeners_watch = {
	.added_locked = listeners_event_added_locked,
	.removed_locked = listeners_event_removed_locked,
};

int usertp__listener_create_ops(const char *events, unsigned int spec_flags,
				const struct usertp_event_file_head *ops,
				usertp_record_func fn, void *arg, struct usertp_listener **out)
{
	struct usertp_listener *l;
	struct usertp__event_node *node;
	int ret;

	if (!events || !ops || !out)
		return -EINVAL;
	usertp__init();
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	ret = specs_parse(events, spec_flags, &l->specs, &l->nr_specs);
	if (ret) {
		free(l);
		return ret;
	}
	l->ops = ops;
	l->fn = fn;
	l->arg = arg;
	pthread_mutex_lock(&usertp__lock);
	usertp__registry_watch_locked(&listeners_watch);
	l->next = listeners;
	listeners = l;
	for (node = usertp__events_first_locked(); node; node = node->next)
		listener_attach_locked(l, node);
	pthread_mutex_unlock(&usertp__lock);
	*out = l;
	return 0;
}

/* The file of @l on @node, or NULL.  Under usertp__lock. */
static struct usertp_event_file *listener_file_locked(const struct usertp_listener *l,
						      const struct usertp__event_node *node)
{
	struct usertp_event_file *f;

	for (f = node->files; f; f = f->next_in_node)
		if (f->owner == l)
			return f;
	return NULL;
}

int usertp__listener_set_specs(struct usertp_listener *l, const char *events,
			       unsigned int spec_flags)
{
	struct usertp__event_node *node;
	char **specs, **old;
	unsigned int n, nr_old;
	int ret;

	if (!l || !events)
		return -EINVAL;
	ret = specs_parse(events, spec_flags, &specs, &n);
	if (ret)
		return ret;
	pthread_mutex_lock(&usertp__lock);
	old = l->specs;
	nr_old = l->nr_specs;
	l->specs = specs;
	l->nr_specs = n;
	/* Events that stay selected keep their file: not one of their records is missed. */
	for (node = usertp__events_first_locked(); node; node = node->next) {
		struct usertp_event_file *file = listener_file_locked(l, node);

		if (!file)
			listener_attach_locked(l, node);
		else if (!listener_selects(l, node->instances[0]))
			file_release_locked(file);
	}
	pthread_mutex_unlock(&usertp__lock);
	specs_free(old, nr_old);
	return 0;
}

void usertp_listener_destroy(struct usertp_listener *l)
{
	struct usertp_listener **pp;

	if (!l)
		return;
	pthread_mutex_lock(&usertp__lock);
	for (pp = &listeners; *pp; pp = &(*pp)->next) {
		if (*pp == l) {
			*pp = l->next;
			break;
		}
	}
	while (l->files)
		file_release_locked(l->files);
	if (l->following)
		__atomic_fetch_sub(&usertp__pid_following, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&usertp__lock);
	/* After this no thread is inside l->fn, and the files are freed. */
	usertp__synchronize();
	specs_free(l->specs, l->nr_specs);
	free(l->pids);
	usertp__pid_list_free(&l->trace_pids);
	usertp__pid_list_free(&l->notrace_pids);
	while (l->filters) {
		struct listener_filter *lf = l->filters;

		l->filters = lf->next;
		free(lf->spec);
		free(lf->text);
		free(lf);
	}
	free(l);
}

int usertp_listener_set_filter(struct usertp_listener *l, const char *events, const char *filter,
			       char *err, size_t errlen)
{
	struct usertp__filter_error fe = { 0, NULL, 0 };
	struct listener_filter *lf, **pp;
	struct usertp_event_file *file;
	unsigned int selected = 0, taken = 0;
	int ret = 0, first_err = 0;

	if (err && errlen)
		err[0] = 0;
	if (!l || !events || usertp__spec_check(events, USERTP__SPEC_GLOB))
		return -EINVAL;
	if (filter && strlen(filter) > USERTP__FILTER_MAX)
		return -EINVAL;
	lf = calloc(1, sizeof(*lf));
	if (!lf || !(lf->spec = strdup(events)) || (filter && !(lf->text = strdup(filter)))) {
		if (lf)
			free(lf->spec);
		free(lf);
		return -ENOMEM;
	}
	pthread_mutex_lock(&usertp__lock);
	for (file = l->files; file; file = file->next_in_owner) {
		const struct usertp_event *ev = file->node->instances[0];
		struct usertp__filter_error e;

		if (!usertp__spec_match(events, ev->event_class->system, ev->name))
			continue;
		selected++;
		ret = usertp__event_file_set_filter_locked(file, filter, &e);
		if (!ret) {
			taken++;
		} else if (!first_err) {
			first_err = ret;
			fe = e;
		}
	}
	/* Kept for events that come later: replaces an earlier filter of the same events. */
	for (pp = &l->filters; *pp; pp = &(*pp)->next)
		if (!strcmp((*pp)->spec, events)) {
			struct listener_filter *old = *pp;

			*pp = old->next;
			free(old->spec);
			free(old->text);
			free(old);
			break;
		}
	for (pp = &l->filters; *pp; pp = &(*pp)->next)
		;
	*pp = lf;
	pthread_mutex_unlock(&usertp__lock);
	/* As tracefs's subsystem filter: taken where it compiles; an error only if nowhere. */
	if (selected && !taken) {
		if (err && errlen && first_err != -ENOMEM)
			usertp__filter_error_file(filter, &fe, err, errlen);
		return first_err;
	}
	return 0;
}

/* --- pid filters (thread.c) --------------------------------------------------------- */

/* Compile @l's lists into a new pid filter and give it to every file of @l. */
static bool listeners_pid_follow_locked(int parent, int child);
static void listeners_pid_exit_locked(int tid);

/* What the listeners do for thread.c when threads and processes come and go. */
static const struct usertp__thread_followers listeners_follow = {
	.follow_locked = listeners_pid_follow_locked,
	.exit_locked = listeners_pid_exit_locked,
};

static int listener_pids_update_locked(struct usertp_listener *l)
{
	struct usertp__pid_filter *f, *old = l->pids;
	int ret = usertp__pid_filter_new(&l->trace_pids, &l->notrace_pids, l->event_fork, &f);

	if (ret)
		return ret;
	l->pids = f;
	for (struct usertp_event_file *file = l->files; file; file = file->next_in_owner) {
		__atomic_store_n(&file->pids, f, __ATOMIC_RELEASE);
		usertp__event_file_heads_locked(file);
	}
	if (l->following != (f && l->event_fork)) {
		l->following = !l->following;
		if (l->following)
			usertp__thread_followers_set_locked(&listeners_follow);
		__atomic_fetch_add(&usertp__pid_following, l->following ? 1u : -1u, __ATOMIC_RELAXED);
	}
	if (old)
		usertp__defer_free_locked(old);
	return 0;
}

int usertp__listener_set_pid_lists(struct usertp_listener *l, const struct usertp__pid_list *trace,
				   const struct usertp__pid_list *notrace, bool follow)
{
	struct usertp__pid_list t, n, old_t, old_n;
	bool old_follow;
	int ret;

	if (usertp__pid_list_copy(&t, trace))
		return -ENOMEM;
	if (usertp__pid_list_copy(&n, notrace)) {
		usertp__pid_list_free(&t);
		return -ENOMEM;
	}
	pthread_mutex_lock(&usertp__lock);
	old_t = l->trace_pids;
	old_n = l->notrace_pids;
	old_follow = l->event_fork;
	l->trace_pids = t;
	l->notrace_pids = n;
	l->event_fork = follow;
	ret = listener_pids_update_locked(l);
	if (ret) {
		l->trace_pids = old_t;
		l->notrace_pids = old_n;
		l->event_fork = old_follow;
		old_t = t;
		old_n = n;
	}
	pthread_mutex_unlock(&usertp__lock);
	usertp__pid_list_free(&old_t);
	usertp__pid_list_free(&old_n);
	return ret;
}

int usertp_listener_set_pid_filter(struct usertp_listener *l, const pid_t *pids, size_t nr_pids,
				   const pid_t *notrace, size_t nr_notrace, bool event_fork)
{
	struct usertp__pid_list t = { NULL, 0 }, n = { NULL, 0 };
	int ret = l ? usertp__pid_list_from(&t, pids, nr_pids) : -EINVAL;

	if (!ret)
		ret = usertp__pid_list_from(&n, notrace, nr_notrace);
	if (!ret)
		ret = usertp__listener_set_pid_lists(l, &t, &n, event_fork);
	usertp__pid_list_free(&t);
	usertp__pid_list_free(&n);
	return ret;
}

static bool listeners_pid_follow_locked(int parent, int child)
{
	bool listed = false;

	for (struct usertp_listener *l = listeners; l; l = l->next) {
		bool traced, excluded;

		if (!l->pids || !l->event_fork)
			continue;
		traced = usertp__pid_list_has(&l->trace_pids, parent) &&
			 !usertp__pid_list_add(&l->trace_pids, child);
		excluded = usertp__pid_list_has(&l->notrace_pids, parent) &&
			   !usertp__pid_list_add(&l->notrace_pids, child);
		/* (Out of memory: the child is not listed, as if it had not been followed.) */
		if ((traced || excluded) && !listener_pids_update_locked(l))
			listed = true;
	}
	return listed;
}

static void listeners_pid_exit_locked(int tid)
{
	for (struct usertp_listener *l = listeners; l; l = l->next) {
		if (!l->pids || !l->event_fork ||
		    (!usertp__pid_list_has(&l->trace_pids, tid) &&
		     !usertp__pid_list_has(&l->notrace_pids, tid)))
			continue;
		usertp__pid_list_remove(&l->trace_pids, tid);
		usertp__pid_list_remove(&l->notrace_pids, tid);
		listener_pids_update_locked(l);
	}
}

unsigned long usertp_listener_lost(const struct usertp_listener *l)
{
	return l ? __atomic_load_n(&l->lost, __ATOMIC_RELAXED) : 0;
}

void usertp__listener_files(const struct usertp_listener *l,
			    void (*fn)(const struct usertp_event_file *file, void *arg), void *arg)
{
	const struct usertp_event_file *f;

	for (f = __atomic_load_n(&l->files, __ATOMIC_ACQUIRE); f; f = f->next_in_owner)
		fn(f, arg);
}
