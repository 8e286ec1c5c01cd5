/* SPDX-License-Identifier: MIT */
/*
 * registry.c - the events the program's objects define (objects.c has the objects): their
 * ids, formats and event files, found and listed by name.
 *
 * Duplicate events (the same system:name defined by two objects) do not abort anything:
 * with identical formats they are one event with one id, and enabling it enables both
 * definitions; a definition with a different format is ignored and stays off.  If the first
 * definition is unloaded, the next one takes over.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "internal.h"

static struct usertp__event_node *events_head;

/* Definitions left out because an event of that name has another format; they get their
 * turn when that event goes away. */
static struct usertp_event **ignored;
static unsigned int nr_ignored, ignored_cap;

/* Event ids in use: common_type is 16 bits; 0 is never used. */
static unsigned char id_used[65536 / 8];

struct usertp__event_node *usertp__events_first_locked(void)
{
	return events_head;
}

bool usertp__keep_objects;

/* Who hears of events coming and going (the listeners, once there is one). */
static const struct usertp__registry_watcher *registry_watcher;

void usertp__registry_watch_locked(const struct usertp__registry_watcher *w)
{
	registry_watcher = w;
}

static int id_alloc(void)
{
	int id;

	for (id = 1; id < 65536; id++) {
		if (!(id_used[id / 8] & (1u << (id % 8)))) {
			id_used[id / 8] |= (unsigned char)(1u << (id % 8));
			return id;
		}
	}
	return -ENOSPC;
}

static void id_free(int id)
{
	id_used[id / 8] &= (unsigned char)~(1u << (id % 8));
}

static const char *event_print_fmt(const struct usertp_event *ev)
{
	return ev->print_fmt ? ev->print_fmt : ev->event_class->print_fmt;
}

static bool same_format(const struct usertp_event *a, const struct usertp_event *b)
{
	const struct usertp_event_field *fa, *fb;
	unsigned int na, nb, i;

	if (strcmp(event_print_fmt(a), event_print_fmt(b)))
		return false;
	fa = a->event_class->fields(&na);
	fb = b->event_class->fields(&nb);
	if (na != nb)
		return false;
	for (i = 0; i < na; i++) {
		if (strcmp(fa[i].type, fb[i].type) || strcmp(fa[i].name, fb[i].name) ||
		    fa[i].offset != fb[i].offset || fa[i].size != fb[i].size ||
		    fa[i].is_signed != fb[i].is_signed || fa[i].kind != fb[i].kind)
			return false;
	}
	return true;
}

static struct usertp__event_node *node_find(const char *system, const char *name)
{
	struct usertp__event_node *node;

	for (node = events_head; node; node = node->next) {
		const struct usertp_event *ev = node->instances[0];

		if (!strcmp(ev->name, name) && !strcmp(ev->event_class->system, system))
			return node;
	}
	return NULL;
}

/* The probes an event file needs: one per distinct tracepoint among the instances. */
static bool tp_seen_before(const struct usertp__event_node *node, unsigned int i)
{
	unsigned int j;

	for (j = 0; j < i; j++)
		if (node->instances[j]->tp == node->instances[i]->tp)
			return true;
	return false;
}

void usertp__event_file_disable_locked(struct usertp_event_file *file)
{
	struct usertp__event_node *node = file->node;
	unsigned int i;

	for (i = 0; i < node->nr_instances; i++) {
		const struct usertp_event *ev = node->instances[i];

		if (!tp_seen_before(node, i))
			usertp__probe_unregister_locked(ev->tp, ev->event_class->probe, file);
	}
}

int usertp__event_file_enable_locked(struct usertp_event_file *file)
{
	struct usertp__event_node *node = file->node;
	unsigned int i;
	int ret;

	file->id = node->id;
	file->head = *file->ops;
	usertp__event_file_heads_locked(file);
	__atomic_store_n(&file->event, node->instances[0], __ATOMIC_RELEASE);
	for (i = 0; i < node->nr_instances; i++) {
		const struct usertp_event *ev = node->instances[i];

		if (tp_seen_before(node, i))
			continue;
		ret = usertp__probe_register_locked(ev->tp, ev->event_class->probe, file,
						    TRACEPOINT_DEFAULT_PRIO);
		if (ret && ret != -EEXIST) {
			while (i--) {
				ev = node->instances[i];
				if (!tp_seen_before(node, i))
					usertp__probe_unregister_locked(
						ev->tp, ev->event_class->probe, file);
			}
			return ret;
		}
	}
	return 0;
}

static void debug_note(const char *what, const struct usertp_event *ev)
{
	if (secure_getenv("USERTP_DEBUG"))
		fprintf(stderr, "usertp: %s %s:%s\n", what, ev->event_class->system, ev->name);
}

static bool event_valid(const struct usertp_event *ev)
{
	return ev && ev->struct_size >= sizeof(struct usertp_event) && ev->name && ev->tp &&
	       ev->event_class &&
	       ev->event_class->struct_size >= sizeof(struct usertp_event_class) &&
	       ev->event_class->system && ev->event_class->fields && ev->event_class->probe &&
	       ev->event_class->print;
}

/* Re-register the probes of every file of @node around a change of its instances. */
static void files_detach(struct usertp__event_node *node)
{
	struct usertp_event_file *f;

	for (f = node->files; f; f = f->next_in_node)
		usertp__event_file_disable_locked(f);
}

static void files_attach(struct usertp__event_node *node)
{
	struct usertp_event_file *f;

	for (f = node->files; f; f = f->next_in_node)
		usertp__event_file_enable_locked(f);
}

/* The format text in a string of its own (NULL when out of memory). */
static char *format_dup(const struct usertp__event_node *node)
{
	int len = usertp__format_write(node, NULL, 0);
	char *text = len > 0 ? malloc((size_t)len + 1) : NULL;

	if (text)
		usertp__format_write(node, text, (size_t)len + 1);
	return text;
}

void usertp__event_add_locked(struct usertp_event *ev)
{
	struct usertp__event_node *node, **tail;
	const struct usertp_event **inst;

	if (!event_valid(ev))
		return;
	node = node_find(ev->event_class->system, ev->name);
	if (node) {
		if (!same_format(node->instances[0], ev)) {
			debug_note("ignoring a second, different definition of", ev);
			if (usertp__grow((void **)&ignored, &ignored_cap, nr_ignored + 1, sizeof(*ignored)))
				ignored[nr_ignored++] = ev;
			return;
		}
		/* The files' probes follow the instances: take them off before the array moves. */
		files_detach(node);
		inst = realloc(node->instances, (node->nr_instances + 1) * sizeof(*inst));
		if (!inst) {
			files_attach(node);
			return;
		}
		node->instances = inst;
		inst[node->nr_instances++] = ev;
		__atomic_store_n(&ev->runtime, node, __ATOMIC_RELEASE);
		files_attach(node);
		debug_note("one more definition of", ev);
		return;
	}

	node = calloc(1, sizeof(*node));
	if (!node)
		return;
	node->instances = malloc(sizeof(*node->instances));
	node->print_fmt = usertp__print_fmt_eval(event_print_fmt(ev), ev->event_class->system);
	node->id = id_alloc();
	if (!node->instances || !node->print_fmt || node->id < 0) {
		if (node->id > 0)
			id_free(node->id);
		free(node->instances);
		free(node->print_fmt);
		free(node);
		return;
	}
	node->instances[0] = ev;
	node->nr_instances = 1;
	node->fields = ev->event_class->fields(&node->nr_fields);
	/*
	 * Kept only for the embedded recorder, which writes formats at exit or on a fatal signal
	 * (no malloc there); consumers ask for them when they need them.  Writing one costs tens
	 * of thousands of instructions: a program that nobody records does not pay it per event
	 * at its start.
	 */
	if (__atomic_load_n(&usertp__keep_objects, __ATOMIC_RELAXED))
		node->format = format_dup(node);
	for (tail = &events_head; *tail; tail = &(*tail)->next)
		;
	*tail = node;
	__atomic_store_n(&ev->runtime, node, __ATOMIC_RELEASE);
	if (registry_watcher)
		registry_watcher->added_locked(node);
}

void usertp__keep_formats(void)
{
	pthread_mutex_lock(&usertp__lock);
	for (struct usertp__event_node *node = events_head; node; node = node->next)
		if (!node->format)
			node->format = format_dup(node);
	pthread_mutex_unlock(&usertp__lock);
}

/* Forget an ignored definition; true if @ev was one. */
static bool ignored_drop(const struct usertp_event *ev)
{
	unsigned int i;

	for (i = 0; i < nr_ignored; i++) {
		if (ignored[i] == ev) {
			ignored[i] = ignored[--nr_ignored];
			return true;
		}
	}
	return false;
}

/* The event @system:@name is gone: the first ignored definition of that name takes over. */
static void ignored_promote(const char *system, const char *name)
{
	unsigned int i;

	for (i = 0; i < nr_ignored; i++) {
		struct usertp_event *ev = ignored[i];

		if (strcmp(ev->name, name) || strcmp(ev->event_class->system, system))
			continue;
		ignored[i] = ignored[--nr_ignored];
		debug_note("now using the other definition of", ev);
		usertp__event_add_locked(ev); /* same-format ones left in the list join it from here */
		i = (unsigned int)-1;
	}
}

void usertp__event_remove_locked(struct usertp_event *ev)
{
	struct usertp__event_node *node = ev->runtime, **pp;
	char system[128], name[128];
	unsigned int i;

	if (!node) {
		ignored_drop(ev);
		return;
	}
	__atomic_store_n(&ev->runtime, NULL, __ATOMIC_RELEASE);
	if (node->nr_instances > 1) {
		files_detach(node);
		for (i = 0; i < node->nr_instances; i++)
			if (node->instances[i] == ev)
				break;
		memmove(&node->instances[i], &node->instances[i + 1],
			(node->nr_instances - i - 1) * sizeof(*node->instances));
		node->nr_instances--;
		/* The description may have lived in the object going away. */
		node->fields = node->instances[0]->event_class->fields(&node->nr_fields);
		files_attach(node);
		return;
	}
	snprintf(system, sizeof(system), "%s", ev->event_class->system);
	snprintf(name, sizeof(name), "%s", ev->name);
	if (registry_watcher)
		registry_watcher->removed_locked(node);
	for (pp = &events_head; *pp; pp = &(*pp)->next) {
		if (*pp == node) {
			*pp = node->next;
			break;
		}
	}
	id_free(node->id);
	free(node->instances);
	free(node->print_fmt);
	usertp__defer_free_locked(node->format);
	usertp__defer_free_locked(node);
	ignored_promote(system, name);
}

const struct usertp_event *usertp_event_find(const char *system, const char *name)
{
	const struct usertp__event_node *node;
	const struct usertp_event *ev = NULL;

	if (!system || !name)
		return NULL;
	usertp__init();
	pthread_mutex_lock(&usertp__lock);
	node = node_find(system, name);
	if (node)
		ev = node->instances[0];
	pthread_mutex_unlock(&usertp__lock);
	return ev;
}

int usertp_event_foreach(int (*fn)(const struct usertp_event *ev, void *arg), void *arg)
{
	const struct usertp__event_node *node;
	const struct usertp_event **list = NULL;
	unsigned int n = 0, i;
	int ret = 0;

	usertp__init();
	/* Call fn on a snapshot, without the lock, so that it may use the rest of the API. */
	pthread_mutex_lock(&usertp__lock);
	for (node = events_head; node; node = node->next)
		n++;
	list = n ? malloc(n * sizeof(*list)) : NULL;
	if (n && !list) {
		pthread_mutex_unlock(&usertp__lock);
		return -ENOMEM;
	}
	for (node = events_head, i = 0; node; node = node->next)
		list[i++] = node->instances[0];
	pthread_mutex_unlock(&usertp__lock);
	for (i = 0; i < n && !ret; i++)
		ret = fn(list[i], arg);
	free(list);
	return ret;
}

void usertp__event_foreach_locked(void (*fn)(const struct usertp_event *ev, int id, void *arg),
				  void *arg)
{
	usertp__init();
	pthread_mutex_lock(&usertp__lock);
	for (const struct usertp__event_node *node = events_head; node; node = node->next)
		fn(node->instances[0], node->id, arg);
	pthread_mutex_unlock(&usertp__lock);
}

const char *usertp_event_system(const struct usertp_event *ev)
{
	return ev ? ev->event_class->system : NULL;
}

const char *usertp_event_name(const struct usertp_event *ev)
{
	return ev ? ev->name : NULL;
}

int usertp_event_id(const struct usertp_event *ev)
{
	const struct usertp__event_node *node;

	if (!ev)
		return -EINVAL;
	node = __atomic_load_n(&ev->runtime, __ATOMIC_ACQUIRE);
	return node ? node->id : -ENOENT;
}

int usertp_event_format(const struct usertp_event *ev, char *buf, size_t size)
{
	const struct usertp__event_node *node;
	int ret;

	if (!ev || (!buf && size))
		return -EINVAL;
	pthread_mutex_lock(&usertp__lock);
	node = ev->runtime;
	ret = node ? usertp__format_write(node, buf, size) : -ENOENT;
	pthread_mutex_unlock(&usertp__lock);
	return ret;
}
