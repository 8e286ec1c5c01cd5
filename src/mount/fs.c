/* SPDX-License-Identifier: MIT */
/*
 * fs.c - usertp mount's files over FUSE (libfuse3's path API): a path resolves to a node, a
 * directory or a file; a file's text is made when it is opened (tracefs's files have size 0,
 * so every file is direct_io: reads reach us) and read from there by offset.  Writes to files
 * that take none fail with EINVAL, as tracefs's do.  docs/mount-design.md has the plan; so
 * far: README, available_events, available_tracers, current_tracer, events/ with header_page,
 * header_event, the enable files and each event's format and id, and the top level's
 * set_event, tracing_on, trace and trace_pipe (instance.c).  The requests are served by
 * fs-loop.c's threads, which park reads of the pipes that would wait.
 */
#define _GNU_SOURCE
#define FUSE_USE_VERSION 312
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "catalog.h"
#include "instance.h"
#include "fs.h"
#include "fs-loop.h"
#include "trace-dat.h"
#include "tracefs-text.h"

/* available_events and the events/ tree are at most this old. */
#define CATALOG_MAX_AGE_MS 200

static pthread_mutex_t fs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct usertp__catalog catalog;
static bool refreshing; /* a thread is asking the programs */
static struct timespec mounted_at; /* every node's times */
static struct usertp__mount_owner fs_owner; /* every node's owner; the top's mode */

/*
 * An instance of the tree: the top level, or instances/NAME.  Its files are open while
 * users is not 0 (rmdir refuses then: EBUSY); inst is NULL while mkdir makes it.
 */
struct tree_instance {
	char *name; /* NULL: the top level */
	struct usertp__instance *inst;
	unsigned int users;
};
static struct tree_instance top_level;
static struct tree_instance **instances; /* instances/ */
static size_t nr_instances;

enum node_kind {
	NODE_NONE,
	/* directories */
	NODE_ROOT,
	NODE_EVENTS,
	NODE_SYSTEM,
	NODE_EVENT,
	NODE_INSTANCES,
	NODE_INSTANCE, /* instances/NAME; in children[]: a file of every instance, the top's too */
	NODE_OPTIONS,
	NODE_PER_CPU,
	NODE_CPU, /* per_cpu/cpuN */
	/* files */
	NODE_README,
	NODE_AVAILABLE_EVENTS,
	NODE_AVAILABLE_TRACERS,
	NODE_CURRENT_TRACER,
	NODE_HEADER_PAGE,
	NODE_HEADER_EVENT,
	NODE_FORMAT,
	NODE_ID,
	NODE_SET_EVENT,
	NODE_TRACING_ON,
	NODE_TRACE,
	NODE_TRACE_PIPE,
	NODE_EVENTS_ENABLE,
	NODE_SYSTEM_ENABLE,
	NODE_EVENT_ENABLE,
	NODE_SYSTEM_FILTER,
	NODE_EVENT_FILTER,
	NODE_ERROR_LOG,
	NODE_SET_EVENT_PID,
	NODE_SET_EVENT_NOTRACE_PID,
	NODE_TRACE_OPTIONS,
	NODE_OPTION,
	NODE_BUFFER_SIZE_KB,
	NODE_BUFFER_TOTAL_SIZE_KB,
	NODE_TRACE_MARKER,
	NODE_TRACE_MARKER_RAW,
	NODE_TRACE_CLOCK,
	NODE_SAVED_CMDLINES,
	NODE_SAVED_TGIDS,
	NODE_PRINTK_FORMATS,
	NODE_STATS,
	NODE_TRACE_PIPE_RAW,
	NODE_TRIGGER,
};

struct node {
	enum node_kind kind;
	struct tree_instance *ti; /* the instance it belongs to */
	const char *option; /* NODE_OPTION: its name */
	int cpu;	    /* under per_cpu/cpuN: N; else -1 */
	const struct usertp__catalog_event *event; /* NODE_SYSTEM (one of its events), NODE_EVENT and its files */
};

static bool is_dir(enum node_kind k)
{
	return k >= NODE_ROOT && k <= NODE_CPU;
}

/* The files of a directory of each kind, by name. */
static const struct {
	enum node_kind dir;
	const char *name;
	enum node_kind kind;
} children[] = {
	{ NODE_ROOT, "README", NODE_README },
	{ NODE_ROOT, "available_events", NODE_AVAILABLE_EVENTS },
	{ NODE_ROOT, "instances", NODE_INSTANCES },
	{ NODE_INSTANCE, "available_tracers", NODE_AVAILABLE_TRACERS },
	{ NODE_INSTANCE, "current_tracer", NODE_CURRENT_TRACER },
	{ NODE_INSTANCE, "events", NODE_EVENTS },
	{ NODE_INSTANCE, "set_event", NODE_SET_EVENT },
	{ NODE_INSTANCE, "tracing_on", NODE_TRACING_ON },
	{ NODE_INSTANCE, "trace", NODE_TRACE },
	{ NODE_INSTANCE, "trace_pipe", NODE_TRACE_PIPE },
	{ NODE_INSTANCE, "error_log", NODE_ERROR_LOG },
	{ NODE_INSTANCE, "set_event_pid", NODE_SET_EVENT_PID },
	{ NODE_INSTANCE, "set_event_notrace_pid", NODE_SET_EVENT_NOTRACE_PID },
	{ NODE_INSTANCE, "trace_options", NODE_TRACE_OPTIONS },
	{ NODE_INSTANCE, "options", NODE_OPTIONS },
	{ NODE_INSTANCE, "buffer_size_kb", NODE_BUFFER_SIZE_KB },
	{ NODE_INSTANCE, "buffer_total_size_kb", NODE_BUFFER_TOTAL_SIZE_KB },
	{ NODE_INSTANCE, "trace_marker", NODE_TRACE_MARKER },
	{ NODE_INSTANCE, "trace_marker_raw", NODE_TRACE_MARKER_RAW },
	{ NODE_INSTANCE, "trace_clock", NODE_TRACE_CLOCK },
	{ NODE_INSTANCE, "per_cpu", NODE_PER_CPU },
	{ NODE_ROOT, "saved_cmdlines", NODE_SAVED_CMDLINES },
	{ NODE_ROOT, "saved_tgids", NODE_SAVED_TGIDS },
	{ NODE_ROOT, "printk_formats", NODE_PRINTK_FORMATS },
	{ NODE_CPU, "trace", NODE_TRACE },
	{ NODE_CPU, "trace_pipe", NODE_TRACE_PIPE },
	{ NODE_CPU, "buffer_size_kb", NODE_BUFFER_SIZE_KB },
	{ NODE_CPU, "stats", NODE_STATS },
	{ NODE_CPU, "trace_pipe_raw", NODE_TRACE_PIPE_RAW },
	{ NODE_EVENTS, "enable", NODE_EVENTS_ENABLE },
	{ NODE_EVENTS, "header_page", NODE_HEADER_PAGE },
	{ NODE_EVENTS, "header_event", NODE_HEADER_EVENT },
	{ NODE_SYSTEM, "enable", NODE_SYSTEM_ENABLE },
	{ NODE_SYSTEM, "filter", NODE_SYSTEM_FILTER },
	{ NODE_EVENT, "enable", NODE_EVENT_ENABLE },
	{ NODE_EVENT, "filter", NODE_EVENT_FILTER },
	{ NODE_EVENT, "format", NODE_FORMAT },
	{ NODE_EVENT, "trigger", NODE_TRIGGER },
	{ NODE_EVENT, "id", NODE_ID },
};
#define NR_CHILDREN (sizeof(children) / sizeof(children[0]))

/*
 * Is children[@i] in the directory @dir?  (The ftrace system's events have no enable or
 * filter files, as the kernel's: usertp__catalog_fixed().)
 */
static bool child_of(size_t i, const struct node *dir)
{
	enum node_kind k = children[i].kind;

	if (dir->event && usertp__catalog_fixed(dir->event) &&
	    (k == NODE_SYSTEM_ENABLE || k == NODE_SYSTEM_FILTER || k == NODE_EVENT_ENABLE ||
	     k == NODE_EVENT_FILTER))
		return false;
	return children[i].dir == dir->kind ||
	       (children[i].dir == NODE_INSTANCE && dir->kind == NODE_ROOT);
}

/* The instance @name of instances/ (under fs_lock), made or being made, or NULL. */
static struct tree_instance *instance_named(const char *name, size_t *index)
{
	for (size_t i = 0; i < nr_instances; i++)
		if (!strcmp(instances[i]->name, name)) {
			if (index)
				*index = i;
			return instances[i];
		}
	return NULL;
}

/*
 * Bring the catalog up to date if it is older than CATALOG_MAX_AGE_MS: one thread asks the
 * programs, without the lock (a stalled program holds only that thread, 2 s at most each),
 * while the others go on with what the catalog has.
 */
static void catalog_refresh(void)
{
	struct usertp__catalog_answers answers;
	bool ask;

	pthread_mutex_lock(&fs_lock);
	ask = !refreshing && usertp__catalog_due(&catalog, CATALOG_MAX_AGE_MS);
	refreshing |= ask;
	pthread_mutex_unlock(&fs_lock);
	if (!ask)
		return;
	usertp__catalog_ask(&answers);
	pthread_mutex_lock(&fs_lock);
	usertp__catalog_take(&catalog, &answers);
	refreshing = false;
	pthread_mutex_unlock(&fs_lock);
	usertp__catalog_answers_free(&answers);
}

static char *format_of(const char *system, const char *name);

/*
 * Resolve @path (under fs_lock).  Return: 0 or -ENOENT.  libfuse gives no path (NULL) for a
 * directory removed while it is being read (`ls -lR` beside `rmdir instances/x`).
 */
static int resolve(const char *path, struct node *n)
{
	char copy[4096], *save = NULL;

	*n = (struct node){ .kind = NODE_ROOT, .ti = &top_level, .cpu = -1 };
	if (!path)
		return -ENOENT;
	if (strlen(path) >= sizeof(copy))
		return -ENAMETOOLONG;
	strcpy(copy, path);
	for (char *name = strtok_r(copy, "/", &save); name; name = strtok_r(NULL, "/", &save)) {
		size_t i;

		for (i = 0; i < NR_CHILDREN; i++)
			if (child_of(i, n) && !strcmp(children[i].name, name))
				break;
		if (i < NR_CHILDREN) {
			n->kind = children[i].kind;
			continue;
		}
		if (n->kind == NODE_PER_CPU) {
			char *end;
			unsigned long cpu = strncmp(name, "cpu", 3) || !isdigit((unsigned char)name[3])
						    ? ULONG_MAX
						    : strtoul(name + 3, &end, 10);

			if (cpu >= usertp__instance_nr_cpus(n->ti->inst) || *end ||
			    (name[3] == '0' && name[4]))
				return -ENOENT;
			n->cpu = (int)cpu;
			n->kind = NODE_CPU;
			continue;
		}
		if (n->kind == NODE_OPTIONS) {
			for (unsigned int k = 0; usertp__instance_option_name(n->ti->inst, k); k++)
				if (!strcmp(usertp__instance_option_name(n->ti->inst, k), name))
					n->option = usertp__instance_option_name(n->ti->inst, k);
			if (!n->option)
				return -ENOENT;
			n->kind = NODE_OPTION;
			continue;
		}
		if (n->kind == NODE_INSTANCES) {
			n->ti = instance_named(name, NULL);
			if (!n->ti || !n->ti->inst)
				return -ENOENT;
			n->kind = NODE_INSTANCE;
			continue;
		}
		if (n->kind == NODE_EVENTS) {
			n->event = usertp__catalog_find(&catalog, name, NULL);
			n->kind = NODE_SYSTEM;
		} else if (n->kind == NODE_SYSTEM) {
			n->event = usertp__catalog_find(&catalog, n->event->system, name);
			n->kind = NODE_EVENT;
		} else {
			return -ENOENT;
		}
		if (!n->event)
			return -ENOENT;
	}
	return 0;
}

/*
 * A file by the names it concerns, which stay valid without fs_lock (a node's event pointer
 * does not: the catalog's entries move as it grows).
 */
struct target {
	enum node_kind kind;
	char system[USERTP__TFS_TOKEN_MAX + 1], name[USERTP__TFS_TOKEN_MAX + 1];
};

/* Resolve @path into @t.  Return: 0, -ENOENT, -ENAMETOOLONG. */
static int resolve_target(const char *path, struct target *t)
{
	struct node n;
	int ret;

	pthread_mutex_lock(&fs_lock);
	ret = resolve(path, &n);
	if (!ret) {
		t->kind = n.kind;
		t->system[0] = t->name[0] = 0;
		if (n.event && ((size_t)snprintf(t->system, sizeof(t->system), "%s", n.event->system) >=
					sizeof(t->system) ||
				(size_t)snprintf(t->name, sizeof(t->name), "%s", n.event->name) >=
					sizeof(t->name)))
			ret = -ENAMETOOLONG;
	}
	pthread_mutex_unlock(&fs_lock);
	return ret;
}

/* tracefs's modes (docs/tracefs.md §0): files 0440 or 0640, directories 0750 (0755 under events/). */
static mode_t node_mode(enum node_kind k)
{
	switch (k) {
	case NODE_ROOT:
		return S_IFDIR | fs_owner.root_mode;
	case NODE_INSTANCES:
	case NODE_INSTANCE:
	case NODE_OPTIONS:
	case NODE_PER_CPU:
	case NODE_CPU:
		return S_IFDIR | 0750;
	case NODE_TRACE_MARKER:
	case NODE_TRACE_MARKER_RAW:
		return S_IFREG | 0220;
	case NODE_EVENTS:
	case NODE_SYSTEM:
	case NODE_EVENT:
		return S_IFDIR | 0755;
	case NODE_CURRENT_TRACER:
	case NODE_SET_EVENT:
	case NODE_TRACING_ON:
	case NODE_TRACE:
	case NODE_EVENTS_ENABLE:
	case NODE_SYSTEM_ENABLE:
	case NODE_EVENT_ENABLE:
	case NODE_SYSTEM_FILTER:
	case NODE_EVENT_FILTER:
	case NODE_ERROR_LOG:
	case NODE_SET_EVENT_PID:
	case NODE_SET_EVENT_NOTRACE_PID:
	case NODE_TRACE_OPTIONS:
	case NODE_OPTION:
	case NODE_BUFFER_SIZE_KB:
	case NODE_TRACE_CLOCK:
	case NODE_TRIGGER:
		return S_IFREG | 0640;
	default:
		return S_IFREG | 0440;
	}
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct node n;
	int ret;

	(void)fi;
	catalog_refresh();
	pthread_mutex_lock(&fs_lock);
	ret = resolve(path, &n);
	pthread_mutex_unlock(&fs_lock);
	if (ret)
		return ret;
	memset(st, 0, sizeof(*st));
	st->st_mode = node_mode(n.kind);
	st->st_nlink = is_dir(n.kind) ? 2 : 1;
	st->st_uid = fs_owner.uid;
	st->st_gid = fs_owner.gid;
	st->st_size = 0;
	st->st_atim = st->st_mtim = st->st_ctim = mounted_at;
	return 0;
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	struct node n;
	int ret;

	(void)off, (void)fi, (void)flags;
	catalog_refresh();
	pthread_mutex_lock(&fs_lock);
	ret = resolve(path, &n);
	if (!ret && !is_dir(n.kind))
		ret = -ENOTDIR;
	if (ret)
		goto out;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	for (size_t i = 0; i < NR_CHILDREN; i++)
		if (child_of(i, &n))
			fill(buf, children[i].name, NULL, 0, 0);
	for (size_t i = 0; n.kind == NODE_INSTANCES && i < nr_instances; i++)
		if (instances[i]->inst)
			fill(buf, instances[i]->name, NULL, 0, 0);
	for (unsigned int k = 0;
	     n.kind == NODE_OPTIONS && usertp__instance_option_name(n.ti->inst, k); k++)
		fill(buf, usertp__instance_option_name(n.ti->inst, k), NULL, 0, 0);
	for (unsigned int cpu = 0; n.kind == NODE_PER_CPU && cpu < usertp__instance_nr_cpus(n.ti->inst);
	     cpu++) {
		char name[32];

		snprintf(name, sizeof(name), "cpu%u", cpu);
		fill(buf, name, NULL, 0, 0);
	}
	if (n.kind == NODE_EVENTS || n.kind == NODE_SYSTEM) {
		for (size_t i = 0; i < catalog.nr; i++) {
			const struct usertp__catalog_event *ev = &catalog.events[i];

			if (!ev->defined)
				continue;
			if (n.kind == NODE_SYSTEM) {
				if (!strcmp(ev->system, n.event->system))
					fill(buf, ev->name, NULL, 0, 0);
			} else if (usertp__catalog_find(&catalog, ev->system, NULL) == ev) {
				fill(buf, ev->system, NULL, 0, 0); /* (each system once: its first event) */
			}
		}
	}
out:
	pthread_mutex_unlock(&fs_lock);
	return ret;
}

/* An open file: its text, made at open (trace_pipe: what a read left of a record). */
struct open_file {
	struct open_file *prev, *next; /* open_files (a release may never come: see fs_destroy) */
	enum node_kind kind;
	const char *option;	  /* NODE_OPTION: its name (static) */
	int cpu;		  /* per_cpu/cpuN's files: N; else -1 */
	bool paused;		  /* `trace` opened with pause-on-trace */
	struct tree_instance *ti; /* held (users) while the file is open */
	char *text;
	size_t len;
	bool nonblock;
	struct usertp__pipe_reader pipe;
	/*
	 * Requests serving it (under fs_lock), and whether its release came: freed when both
	 * are done.  A reader killed mid-read has its file released while its read is parked,
	 * and the read is served after (fs-loop.c): it must find the file gone, not freed.
	 */
	unsigned int busy;
	bool released;
};

static struct open_file *open_files; /* under fs_lock */

/* The open file @fh names, if it is still open (under fs_lock): a request's handle may outlive
 * its file (see busy above). */
static struct open_file *open_file_find(uint64_t fh)
{
	struct open_file *f;

	for (f = open_files; f && (uint64_t)(uintptr_t)f != fh; f = f->next)
		;
	return f;
}

static const char readme_text[] =
	"usertp mount: the kernel's tracefs files for the events of programs that use libusertp\n"
	"\n"
	"  available_events\t- the events of the running programs (SYSTEM:EVENT)\n"
	"  available_tracers\t- the tracers: nop\n"
	"  current_tracer\t- the tracer in use: nop\n"
	"  set_event\t\t- the events recorded: 'SYS:EV', 'SYS:*', '*:EV', 'NAME', '!' to stop\n"
	"  tracing_on\t\t- 0: nothing is recorded; 1: recording\n"
	"  trace\t\t\t- what is held (echo > trace clears it)\n"
	"  trace_pipe\t\t- what is held, taken as it is read; waits for more\n"
	"  events/enable\t\t- 1: every event recorded; 0: none\n"
	"  events/header_page\t- the ring buffer's page header\n"
	"  events/header_event\t- the ring buffer's event header\n"
	"  events/SYS/enable\t- the events of SYS\n"
	"  events/SYS/EV/enable\t- one event\n"
	"  events/SYS/EV/format\t- an event's record format\n"
	"  events/SYS/EV/id\t- an event's id\n"
	"\n"
	"See usertp-mount(1), and the kernel's Documentation/trace/ftrace.rst and events.rst,\n"
	"for what each file does.\n";

/* What events/SYS/filter reads, whatever was written (docs/tracefs.md §4.6). */
static const char system_filter_banner[] =
	"### global filter ###\n"
	"# Use this to set filters for multiple events.\n"
	"# Only events with the given fields will be affected.\n"
	"# If no events are modified, an error message will be displayed here\n";

/* How many of the defined events @n's enable file covers are enabled, and of how many. */
static char enable_state(const struct node *n)
{
	size_t on = 0, total = 0;

	for (size_t i = 0; i < catalog.nr; i++) {
		const struct usertp__catalog_event *ev = &catalog.events[i];

		if (!ev->defined || usertp__catalog_fixed(ev) ||
		    (n->kind == NODE_SYSTEM_ENABLE && strcmp(ev->system, n->event->system)))
			continue;
		total++;
		on += usertp__instance_enabled(n->ti->inst, ev->system, ev->name);
	}
	return usertp__tfs_enable_state(on, total);
}

/* The text of a file @n, into @f (under fs_lock).  Return: 0 or a negative errno. */
static int file_text(const struct node *n, struct open_file *f)
{
	struct usertp__instance *top = n->ti->inst;
	FILE *out;

	if (n->kind == NODE_TRACE)
		return usertp__instance_trace_text(top, n->cpu, &f->text, &f->len);
	if (n->kind == NODE_TRACE_MARKER || n->kind == NODE_TRACE_MARKER_RAW)
		return -EINVAL; /* (write-only, as tracefs's: a read open fails) */
	if (n->kind == NODE_EVENT_FILTER || n->kind == NODE_ERROR_LOG || n->kind == NODE_TRIGGER ||
	    n->kind == NODE_BUFFER_SIZE_KB || n->kind == NODE_BUFFER_TOTAL_SIZE_KB ||
	    n->kind == NODE_STATS || n->kind == NODE_SAVED_CMDLINES || n->kind == NODE_SAVED_TGIDS ||
	    n->kind == NODE_PRINTK_FORMATS) {
		if (n->kind == NODE_BUFFER_SIZE_KB || n->kind == NODE_BUFFER_TOTAL_SIZE_KB)
			f->text = usertp__instance_buffer_kb_text(top, n->cpu,
								  n->kind == NODE_BUFFER_TOTAL_SIZE_KB);
		else if (n->kind == NODE_STATS)
			f->text = usertp__instance_stats_text(top, (unsigned int)n->cpu);
		else if (n->kind == NODE_SAVED_CMDLINES || n->kind == NODE_SAVED_TGIDS)
			f->text = usertp__instance_saved(top, n->kind == NODE_SAVED_TGIDS);
		else if (n->kind == NODE_PRINTK_FORMATS)
			f->text = usertp__instance_printk_formats(top);
		else if (n->kind == NODE_ERROR_LOG)
			f->text = usertp__instance_error_log(top);
		else if (n->kind == NODE_EVENT_FILTER)
			f->text = usertp__instance_filter_file(top, n->event->system, n->event->name);
		else
			f->text = usertp__instance_trigger_file(top, n->event->system, n->event->name);
		f->len = f->text ? strlen(f->text) : 0;
		return f->text ? 0 : -ENOMEM;
	}
	out = open_memstream(&f->text, &f->len);
	if (!out)
		return -ENOMEM;
	switch (n->kind) {
	case NODE_README:
		fputs(readme_text, out);
		break;
	case NODE_AVAILABLE_EVENTS:
	case NODE_SET_EVENT:
		for (size_t i = 0; i < catalog.nr; i++) {
			const struct usertp__catalog_event *ev = &catalog.events[i];

			if (ev->defined && !usertp__catalog_fixed(ev) && (n->kind == NODE_AVAILABLE_EVENTS ||
					    usertp__instance_enabled(top, ev->system, ev->name)))
				fprintf(out, "%s:%s\n", ev->system, ev->name);
		}
		break;
	case NODE_AVAILABLE_TRACERS:
	case NODE_CURRENT_TRACER:
		fputs(USERTP__TFS_TRACERS "\n", out);
		break;
	case NODE_HEADER_PAGE:
		fputs(usertp__dat_header_page, out);
		break;
	case NODE_HEADER_EVENT:
		fputs(usertp__dat_header_event, out);
		break;
	case NODE_ID:
		fprintf(out, "%u\n", n->event->id);
		break;
	case NODE_TRACING_ON:
		fprintf(out, "%d\n", usertp__instance_tracing(top));
		break;
	case NODE_EVENT_ENABLE:
		fputs(usertp__instance_enable_text(top, n->event->system, n->event->name), out);
		break;
	case NODE_EVENTS_ENABLE:
	case NODE_SYSTEM_ENABLE:
		fprintf(out, "%c\n", enable_state(n));
		break;
	case NODE_SYSTEM_FILTER:
		fputs(system_filter_banner, out);
		break;
	case NODE_OPTION:
		fprintf(out, "%d\n", usertp__instance_option(top, n->option));
		break;
	case NODE_TRACE_CLOCK:
		usertp__instance_clock_text(top, out);
		break;
	case NODE_TRACE_OPTIONS:
		for (unsigned int k = 0; usertp__instance_option_name(top, k); k++)
			fprintf(out, "%s%s\n",
				usertp__instance_option(top, usertp__instance_option_name(top, k)) ? "" : "no",
				usertp__instance_option_name(top, k));
		break;
	default:
		break;
	}
	return fclose(out) ? -ENOMEM : 0;
}

/* Opening with O_TRUNC: set_event disables every event, trace is cleared (docs/tracefs.md §2, §6). */
static int truncate_node(const struct node *n)
{
	struct usertp__instance *top = n->ti->inst;

	switch (n->kind) {
	case NODE_SET_EVENT:
		return usertp__instance_set_events(top, NULL, true);
	case NODE_TRACE:
		usertp__instance_clear(top, n->cpu);
		return 0;
	case NODE_ERROR_LOG:
		usertp__instance_clear_error_log(top);
		return 0;
	case NODE_SET_EVENT_PID:
	case NODE_SET_EVENT_NOTRACE_PID:
		return usertp__instance_add_pids(top, n->kind == NODE_SET_EVENT_NOTRACE_PID, "", 0, true);
	default:
		return 0;
	}
}

/* Let go of @ti (NULL: nothing), held by an open file or a call. */
static void release_instance(struct tree_instance *ti)
{
	if (!ti)
		return;
	pthread_mutex_lock(&fs_lock);
	ti->users--;
	pthread_mutex_unlock(&fs_lock);
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
	struct open_file *f = calloc(1, sizeof(*f));
	struct node n;
	int ret;

	if (!f)
		return -ENOMEM;
	catalog_refresh();
	pthread_mutex_lock(&fs_lock);
	ret = resolve(path, &n);
	if (!ret && is_dir(n.kind))
		ret = -EISDIR;
	if (!ret) {
		f->ti = n.ti;
		f->ti->users++; /* (rmdir: EBUSY until it is released) */
	}
	if (!ret && n.kind != NODE_FORMAT && n.kind != NODE_ID) {
		pthread_mutex_unlock(&fs_lock);
		usertp__instance_sync(n.ti->inst); /* (what was recorded before the open is seen) */
		pthread_mutex_lock(&fs_lock);
		ret = resolve(path, &n);
	}
	if (!ret && n.kind == NODE_FORMAT) {
		/* Asked of a program: without the lock, on a copy of the names. */
		char *system = strdup(n.event->system), *name = strdup(n.event->name);

		pthread_mutex_unlock(&fs_lock);
		f->text = system && name ? format_of(system, name) : NULL;
		f->len = f->text ? strlen(f->text) : 0;
		ret = f->text ? 0 : -EIO;
		free(system);
		free(name);
	} else {
		pthread_mutex_unlock(&fs_lock);
		if (!ret && (fi->flags & O_TRUNC) && (fi->flags & O_ACCMODE) != O_RDONLY)
			ret = truncate_node(&n);
		/* (A write-only open needs no text: a shell's `echo 1 > enable` reads nothing.) */
		if (!ret && (fi->flags & O_ACCMODE) != O_WRONLY &&
		    (n.kind == NODE_SET_EVENT_PID || n.kind == NODE_SET_EVENT_NOTRACE_PID)) {
			/* Without the lock: with event-fork, the programs are asked (under apply). */
			f->text = usertp__instance_pids_text(n.ti->inst,
							     n.kind == NODE_SET_EVENT_NOTRACE_PID);
			f->len = f->text ? strlen(f->text) : 0;
			ret = f->text ? 0 : -ENOMEM;
		} else if (!ret && (fi->flags & O_ACCMODE) != O_WRONLY && n.kind != NODE_TRACE_PIPE &&
			   n.kind != NODE_TRACE_PIPE_RAW) {
			pthread_mutex_lock(&fs_lock);
			ret = resolve(path, &n); /* (again: the catalog may have moved) */
			if (!ret)
				ret = file_text(&n, f);
			pthread_mutex_unlock(&fs_lock);
		}
	}
	if (ret) {
		release_instance(f->ti);
		free(f->text);
		free(f);
		return ret;
	}
	f->kind = n.kind;
	f->option = n.option;
	pthread_mutex_lock(&fs_lock);
	f->next = open_files;
	if (open_files)
		open_files->prev = f;
	open_files = f;
	pthread_mutex_unlock(&fs_lock);
	f->cpu = n.cpu;
	usertp__pipe_reader_init(&f->pipe, n.cpu);
	if (n.kind == NODE_TRACE && (fi->flags & O_ACCMODE) != O_WRONLY)
		f->paused = usertp__instance_pause(f->ti->inst);
	f->nonblock = fi->flags & O_NONBLOCK;
	fi->fh = (uint64_t)(uintptr_t)f;
	fi->direct_io = 1;
	fi->nonseekable = n.kind == NODE_TRACE_PIPE || n.kind == NODE_TRACE_PIPE_RAW;
	return 0;
}

static bool request_interrupted(void)
{
	return fuse_interrupted() || usertp__fs_loop_interrupted();
}

/*
 * Reads of the pipes that may wait now: USERTP__MOUNT_MAX_PIPE_WAITERS at most, and of a user
 * other than root USERTP__MOUNT_MAX_PIPE_WAITERS_PER_USER (counted by user, a slot each).
 */
static struct {
	pthread_mutex_t lock;
	unsigned int all;
	struct {
		uid_t uid;
		unsigned int n;
	} users[64];
} pipe_waiters = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* May a read of @uid wait?  If so it is counted (pipe_wait_end() when done). */
static bool pipe_wait_begin(uid_t uid)
{
	unsigned int free_slot = 64, slot = 64;
	bool ok;

	pthread_mutex_lock(&pipe_waiters.lock);
	for (unsigned int i = 0; i < 64 && uid; i++) {
		if (pipe_waiters.users[i].n && pipe_waiters.users[i].uid == uid)
			slot = i;
		else if (!pipe_waiters.users[i].n && free_slot == 64)
			free_slot = i;
	}
	if (uid && slot == 64)
		slot = free_slot;
	ok = pipe_waiters.all < USERTP__MOUNT_MAX_PIPE_WAITERS &&
	     (!uid || (slot < 64 &&
		       pipe_waiters.users[slot].n < USERTP__MOUNT_MAX_PIPE_WAITERS_PER_USER));
	if (ok) {
		pipe_waiters.all++;
		if (uid) {
			pipe_waiters.users[slot].uid = uid;
			pipe_waiters.users[slot].n++;
		}
	}
	pthread_mutex_unlock(&pipe_waiters.lock);
	return ok;
}

static void pipe_wait_end(uid_t uid)
{
	pthread_mutex_lock(&pipe_waiters.lock);
	pipe_waiters.all--;
	for (unsigned int i = 0; i < 64 && uid; i++) {
		if (pipe_waiters.users[i].n && pipe_waiters.users[i].uid == uid) {
			pipe_waiters.users[i].n--;
			break;
		}
	}
	pthread_mutex_unlock(&pipe_waiters.lock);
}

/*
 * A read of trace_pipe or trace_pipe_raw.  One that may wait holds a thread of the mount
 * until records come: past its share (pipe_wait_begin()), a read takes what there is and,
 * if nothing, fails with EBUSY rather than leave no thread to the other files or users.
 */
static ssize_t pipe_read(struct open_file *f, char *buf, size_t size)
{
	uid_t uid = fuse_get_context()->uid;
	bool waits = !f->nonblock && pipe_wait_begin(uid);
	ssize_t n;

	if (f->kind == NODE_TRACE_PIPE)
		n = usertp__instance_pipe_read(f->ti->inst, &f->pipe, buf, size, !waits,
					       request_interrupted);
	else
		n = usertp__instance_raw_read(f->ti->inst, &f->pipe, buf, size, !waits,
					      request_interrupted);
	if (waits)
		pipe_wait_end(uid);
	else if (!f->nonblock && n == -EAGAIN)
		n = -EBUSY; /* (a reader that would wait, past the share) */
	return n;
}

static struct open_file *file_hold(uint64_t fh);
static void file_let_go(struct open_file *f);

static int fs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct open_file *f = file_hold(fi->fh);
	int ret;

	(void)path;
	if (!f)
		return -EBADF; /* (released meanwhile: its reader is gone) */
	if (f->kind == NODE_TRACE_PIPE || f->kind == NODE_TRACE_PIPE_RAW) {
		ret = (int)pipe_read(f, buf, size);
	} else if (off < 0 || (size_t)off >= f->len) {
		ret = 0;
	} else {
		if (size > f->len - (size_t)off)
			size = f->len - (size_t)off;
		memcpy(buf, f->text + off, size);
		ret = (int)size;
	}
	file_let_go(f);
	return ret;
}

/* A 0 or 1 written to an enable file (docs/tracefs.md §3.1): 0, 1, -EINVAL or -ERANGE. */
static int enable_value(const char *buf, size_t size)
{
	uint64_t v;
	int ret = usertp__tfs_number(buf, size, &v);

	if (ret)
		return ret;
	return v > 1 ? -EINVAL : (int)v;
}

/* A write to set_event: one token (docs/tracefs.md §2).  Return: the bytes taken, or an errno. */
static ssize_t set_event_write(struct usertp__instance *top, const char *buf, size_t size)
{
	struct usertp__spec spec;
	const char *tok;
	size_t tok_len;
	ssize_t taken = usertp__tfs_set_event_token(buf, size, &tok, &tok_len);
	bool matched = false;
	int ret;

	if (taken < 0 || !tok_len)
		return taken;
	if (usertp__spec_parse(tok, tok_len, USERTP__SPEC_TRACEFS, &spec))
		return -EINVAL;
	/* As the kernel: a spec must select an event that exists (that a program defines). */
	catalog_refresh();
	pthread_mutex_lock(&fs_lock);
	for (size_t i = 0; i < catalog.nr && !matched; i++)
		matched = catalog.events[i].defined &&
			  usertp__spec_selects(&spec, catalog.events[i].system,
							 catalog.events[i].name);
	pthread_mutex_unlock(&fs_lock);
	if (!matched)
		return -EINVAL;
	ret = usertp__instance_set_events(top, &spec, false);
	return ret ? ret : taken;
}

/* A write to an enable file. */
static int enable_write(struct usertp__instance *top, const struct target *n, const char *buf,
			size_t size)
{
	struct usertp__spec spec = { .tracefs = true };
	int v = enable_value(buf, size);

	if (v < 0)
		return v;
	spec.disable = !v;
	if (n->kind == NODE_EVENTS_ENABLE)
		return usertp__instance_set_events(top, v ? &spec : NULL, true);
	snprintf(spec.system, sizeof(spec.system), "%s", n->system);
	if (n->kind == NODE_EVENT_ENABLE)
		snprintf(spec.event, sizeof(spec.event), "%s", n->name);
	return usertp__instance_set_events(top, &spec, false);
}

/*
 * The format text of @system:@name (to free()), asked of a program that defines it (without
 * fs_lock: the catalog's entries may move meanwhile, so only names cross it), or NULL.  What
 * a program said is kept: when the one asked has just ended, the event still has its format.
 */
static char *format_of(const char *system, const char *name)
{
	struct usertp__catalog_event *ev;
	unsigned int id = 0;
	pid_t pid = 0;
	char *text = NULL;

	pthread_mutex_lock(&fs_lock);
	ev = usertp__catalog_find(&catalog, system, name);
	if (ev && ev->format && ev->format_pid == ev->pid && !ev->builtin)
		text = strdup(ev->format);
	else if (ev) {
		id = ev->id;
		pid = ev->pid;
	}
	pthread_mutex_unlock(&fs_lock);
	if (text || !ev)
		return text;
	text = usertp__catalog_format(system, name, id, pid);
	pthread_mutex_lock(&fs_lock);
	ev = usertp__catalog_find(&catalog, system, name);
	if (ev && text && (ev->format || (ev->format = strdup(text)))) {
		if (strcmp(ev->format, text)) {
			free(ev->format);
			ev->format = strdup(text);
		}
		ev->format_pid = pid;
	} else if (ev && !text && ev->format) {
		text = strdup(ev->format); /* (the program asked is gone) */
	}
	pthread_mutex_unlock(&fs_lock);
	return text;
}

/* A write to events/SYS/EV/filter or events/SYS/filter (docs/tracefs.md §4.2, §4.6). */
static int filter_write(struct usertp__instance *top, const struct target *t, const char *buf,
			size_t size)
{
	struct usertp__instance_event *events = NULL;
	size_t nr = 0;
	int ret;

	if (t->kind == NODE_EVENT_FILTER) {
		char *format = format_of(t->system, t->name);

		if (!format)
			return -EIO;
		ret = usertp__instance_set_filter(top, t->system, t->name, format, buf, size);
		free(format);
		return ret;
	}
	/* Every event of the system, each with its format. */
	pthread_mutex_lock(&fs_lock);
	events = calloc(catalog.nr ? catalog.nr : 1, sizeof(*events));
	for (size_t i = 0; events && i < catalog.nr; i++)
		if (catalog.events[i].defined && !strcmp(catalog.events[i].system, t->system))
			events[nr++].name = strdup(catalog.events[i].name);
	pthread_mutex_unlock(&fs_lock);
	if (!events)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		events[i].format = events[i].name ? format_of(t->system, events[i].name) : NULL;
		if (!events[i].format)
			events[i].format = strdup(""); /* (gone meanwhile: it compiles nowhere) */
	}
	ret = usertp__instance_set_system_filter(top, t->system, events, nr, buf, size);
	for (size_t i = 0; i < nr; i++) {
		free((char *)events[i].name);
		free((char *)events[i].format);
	}
	free(events);
	return ret;
}

/* A write to trace_options: an option's name, or "no" and its name; white space around it. */
static int trace_options_write(struct usertp__instance *top, const char *buf, size_t size)
{
	char name[64];
	bool on = true;

	while (size && isspace((unsigned char)buf[size - 1]))
		size--;
	while (size && isspace((unsigned char)*buf)) {
		buf++;
		size--;
	}
	if (!size || size >= sizeof(name))
		return -EINVAL;
	memcpy(name, buf, size);
	name[size] = 0;
	if (usertp__instance_option(top, name) < 0 && !strncmp(name, "no", 2)) {
		on = false;
		memmove(name, name + 2, size - 1);
	}
	return usertp__instance_set_option(top, name, on);
}

/* A write to events/SYS/EV/trigger (docs/tracefs.md §5). */
static int trigger_write(struct usertp__instance *top, const struct target *t, const char *buf,
			 size_t size)
{
	struct usertp__tfs_trigger trig;
	char *format;
	int ret = usertp__tfs_trigger(buf, size, &trig);

	if (ret)
		return ret;
	/* enable_event and disable_event aim at an event that exists. */
	if (trig.cmd == USERTP__TFS_ENABLE_EVENT || trig.cmd == USERTP__TFS_DISABLE_EVENT) {
		const struct usertp__catalog_event *target;

		pthread_mutex_lock(&fs_lock);
		target = usertp__catalog_find(&catalog, trig.system, trig.event);
		ret = target && !usertp__catalog_fixed(target) ? 0 : -EINVAL;
		pthread_mutex_unlock(&fs_lock);
		if (ret && !trig.remove)
			return ret;
	}
	format = format_of(t->system, t->name);
	if (!format)
		return -EIO;
	ret = usertp__instance_set_trigger(top, t->system, t->name, format, &trig);
	free(format);
	return ret;
}

/* A write: the file's rule; tracefs's read-only files take the open and fail the write. */
static int write_held(const char *path, const struct open_file *f, const char *buf, size_t size,
		      off_t off)
{
	struct usertp__instance *top = f->ti->inst;
	struct target t;
	uint64_t v;
	int ret;

	(void)off;
	switch (f->kind) {
	case NODE_CURRENT_TRACER:
		ret = usertp__tfs_tracer(buf, size);
		break;
	case NODE_SET_EVENT:
		return (int)set_event_write(top, buf, size);
	case NODE_EVENTS_ENABLE:
	case NODE_SYSTEM_ENABLE:
	case NODE_EVENT_ENABLE:
		ret = resolve_target(path, &t);
		if (!ret)
			ret = enable_write(top, &t, buf, size);
		break;
	case NODE_TRACING_ON:
		ret = usertp__tfs_number(buf, size, &v);
		if (!ret)
			ret = usertp__instance_set_tracing(top, v != 0);
		break;
	case NODE_EVENT_FILTER:
	case NODE_SYSTEM_FILTER:
		ret = resolve_target(path, &t);
		if (!ret)
			ret = filter_write(top, &t, buf, size);
		break;
	case NODE_TRACE:
	case NODE_ERROR_LOG:
		ret = 0; /* taken and ignored, as tracefs's */
		break;
	case NODE_SET_EVENT_PID:
	case NODE_SET_EVENT_NOTRACE_PID:
		ret = usertp__instance_add_pids(top, f->kind == NODE_SET_EVENT_NOTRACE_PID, buf, size,
						false);
		break;
	case NODE_OPTION:
		ret = enable_value(buf, size); /* (0 or 1, as an enable file) */
		if (ret >= 0)
			ret = usertp__instance_set_option(top, f->option, ret);
		break;
	case NODE_TRACE_OPTIONS:
		ret = trace_options_write(top, buf, size);
		break;
	case NODE_TRIGGER:
		ret = resolve_target(path, &t);
		if (!ret)
			ret = trigger_write(top, &t, buf, size);
		break;
	case NODE_BUFFER_SIZE_KB:
		ret = usertp__tfs_number(buf, size, &v);
		if (!ret)
			ret = usertp__instance_set_buffer_kb(top, f->cpu, v);
		break;
	case NODE_TRACE_MARKER:
		return (int)usertp__instance_mark(top, fuse_get_context()->pid, buf, size);
	case NODE_TRACE_MARKER_RAW:
		return (int)usertp__instance_mark_raw(top, fuse_get_context()->pid, buf, size);
	case NODE_TRACE_CLOCK: {
		char name[32];

		ret = usertp__tfs_clock(buf, size, name, sizeof(name));
		if (!ret)
			ret = usertp__instance_set_clock(top, name);
		break;
	}
	default:
		return -EINVAL;
	}
	return ret ? ret : (int)size;
}

static int fs_write(const char *path, const char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct open_file *f = file_hold(fi->fh);
	int ret;

	if (!f)
		return -EBADF;
	ret = write_held(path, f, buf, size, off);
	file_let_go(f);
	return ret;
}

/*
 * An instance's notify: a poll() handle of libfuse's, or (its low bit set) a read parked by
 * fs-loop.c.
 */
static void notify_poll(void *handle)
{
	if ((uintptr_t)handle & 1) {
		usertp__fs_loop_wake((void *)((uintptr_t)handle & ~(uintptr_t)1));
		return;
	}
	fuse_notify_poll(handle);
	fuse_pollhandle_destroy(handle);
}

/* fs-loop.c asks: would this read of open file @fh wait?  Then its instance keeps @parked. */
static bool park_read(uint64_t fh, void *parked)
{
	const struct open_file *f;
	bool kept = false;

	pthread_mutex_lock(&fs_lock);
	f = open_file_find(fh);
	if (f && !f->nonblock && (f->kind == NODE_TRACE_PIPE || f->kind == NODE_TRACE_PIPE_RAW))
		kept = usertp__instance_pipe_park(f->ti->inst, &f->pipe,
						  (void *)((uintptr_t)parked | 1));
	pthread_mutex_unlock(&fs_lock);
	return kept;
}

/* The mount's id of an event a program recorded (instance.c: trace_pipe_raw's records). */
static unsigned int event_id(const char *system, const char *name)
{
	unsigned int id;

	pthread_mutex_lock(&fs_lock);
	id = usertp__catalog_id(&catalog, system, name);
	pthread_mutex_unlock(&fs_lock);
	return id;
}

/* truncate(2) and O_TRUNC where the kernel sends it apart from the open. */
static int fs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	struct node n;
	int ret;

	(void)fi;
	pthread_mutex_lock(&fs_lock);
	ret = resolve(path, &n);
	if (!ret)
		n.ti->users++;
	pthread_mutex_unlock(&fs_lock);
	if (ret)
		return ret;
	ret = size ? 0 : truncate_node(&n);
	release_instance(n.ti);
	return ret;
}

/* mkdir instances/NAME: a new instance, with settings and buffers of its own (§16). */
static int fs_mkdir(const char *path, mode_t mode)
{
	struct tree_instance *ti = NULL, **more;
	struct usertp__instance *made = NULL;
	const char *name = strrchr(path, '/') + 1;
	char err[512] = "";
	struct node n;
	size_t index = 0;
	int ret;

	(void)mode;
	if (strncmp(path, "/instances/", 11) || strchr(path + 11, '/') || !*name)
		return -EPERM; /* (elsewhere: tracefs's own directories take no mkdir) */
	pthread_mutex_lock(&fs_lock);
	ret = resolve("/instances", &n);
	if (!ret && (instance_named(name, NULL) || !resolve(path, &n)))
		ret = -EEXIST;
	more = ret ? NULL : realloc(instances, (nr_instances + 1) * sizeof(*more));
	if (more) {
		instances = more;
		ti = calloc(1, sizeof(*ti));
		if (ti && (ti->name = strdup(name)))
			instances[nr_instances++] = ti; /* (listed once made: inst NULL until then) */
		else
			free(ti), ti = NULL;
	}
	if (!ret && !ti)
		ret = -ENOMEM;
	pthread_mutex_unlock(&fs_lock);
	if (ret)
		return ret;
	ret = usertp__instance_new(name, notify_poll, event_id, &made, err, sizeof(err));
	pthread_mutex_lock(&fs_lock);
	ti->inst = made; /* (others see it only now, whole) */
	if (ret) {
		instance_named(name, &index);
		instances[index] = instances[--nr_instances];
		free(ti->name);
		free(ti);
	}
	pthread_mutex_unlock(&fs_lock);
	return ret;
}

/* rmdir instances/NAME: refused while one of its files is open (EBUSY). */
static int fs_rmdir(const char *path)
{
	struct tree_instance *ti;
	size_t index;

	if (strncmp(path, "/instances/", 11) || strchr(path + 11, '/'))
		return -EPERM;
	pthread_mutex_lock(&fs_lock);
	ti = instance_named(path + 11, &index);
	if (!ti || !ti->inst || ti->users) {
		pthread_mutex_unlock(&fs_lock);
		return !ti ? -ENOENT : -EBUSY;
	}
	instances[index] = instances[--nr_instances];
	pthread_mutex_unlock(&fs_lock);
	usertp__instance_free(ti->inst);
	free(ti->name);
	free(ti);
	return 0;
}


static int poll_held(struct open_file *f, struct fuse_pollhandle *ph, unsigned *reventsp)
{
	if (f->kind != NODE_TRACE_PIPE && f->kind != NODE_TRACE_PIPE_RAW) {
		if (ph)
			fuse_pollhandle_destroy(ph);
		*reventsp = POLLIN | POLLOUT;
		return 0;
	}
	*reventsp = usertp__instance_poll(f->ti->inst, &f->pipe, ph) ? POLLIN : 0;
	return 0;
}

static int fs_poll(const char *path, struct fuse_file_info *fi, struct fuse_pollhandle *ph,
		   unsigned *reventsp)
{
	struct open_file *f = file_hold(fi->fh);
	int ret;

	(void)path;
	if (!f) {
		if (ph)
			fuse_pollhandle_destroy(ph);
		return -EBADF;
	}
	ret = poll_held(f, ph, reventsp);
	file_let_go(f);
	return ret;
}

/* Its instance let go, its memory freed: the last of its release and its requests. */
static void open_file_destroy(struct open_file *f)
{
	if (f->paused)
		usertp__instance_resume(f->ti->inst);
	release_instance(f->ti);
	usertp__pipe_reader_free(&f->pipe);
	free(f->text);
	free(f);
}

/* The open file @fh names, held for a request; NULL when released meanwhile. */
static struct open_file *file_hold(uint64_t fh)
{
	struct open_file *f;

	pthread_mutex_lock(&fs_lock);
	f = open_file_find(fh);
	if (f)
		f->busy++;
	pthread_mutex_unlock(&fs_lock);
	return f;
}

static void file_let_go(struct open_file *f)
{
	bool last;

	pthread_mutex_lock(&fs_lock);
	last = !--f->busy && f->released;
	pthread_mutex_unlock(&fs_lock);
	if (last)
		open_file_destroy(f);
}

/* Close @f: out of open_files; destroyed now, or by the last request that holds it. */
static void open_file_free(struct open_file *f)
{
	bool now;

	pthread_mutex_lock(&fs_lock);
	*(f->prev ? &f->prev->next : &open_files) = f->next;
	if (f->next)
		f->next->prev = f->prev;
	f->released = true;
	now = !f->busy;
	pthread_mutex_unlock(&fs_lock);
	if (now)
		open_file_destroy(f);
}

static int fs_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	open_file_free((struct open_file *)(uintptr_t)fi->fh);
	return 0;
}

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	clock_gettime(CLOCK_REALTIME, &mounted_at);
	/* Nothing cached by the kernel: every lookup and attribute comes from us, now. */
	cfg->entry_timeout = 0;
	cfg->attr_timeout = 0;
	cfg->negative_timeout = 0;
	cfg->direct_io = 1;
	return NULL;
}

static void fs_destroy(void *data)
{
	(void)data;
	/* Files still open when the file system went (their releases never come after it). */
	while (open_files)
		open_file_free(open_files);
	usertp__instance_free(top_level.inst);
	top_level.inst = NULL;
	for (size_t i = 0; i < nr_instances; i++) {
		usertp__instance_free(instances[i]->inst);
		free(instances[i]->name);
		free(instances[i]);
	}
	free(instances);
	instances = NULL;
	nr_instances = 0;
	pthread_mutex_lock(&fs_lock);
	usertp__catalog_free(&catalog);
	pthread_mutex_unlock(&fs_lock);
}

static const struct fuse_operations fs_ops = {
	.init = fs_init,
	.destroy = fs_destroy,
	.getattr = fs_getattr,
	.readdir = fs_readdir,
	.open = fs_open,
	.read = fs_read,
	.write = fs_write,
	.truncate = fs_truncate,
	.mkdir = fs_mkdir,
	.rmdir = fs_rmdir,
	.poll = fs_poll,
	.release = fs_release,
};

int usertp__mount_run(const char *mountpoint, const char *options,
		      const struct usertp__mount_owner *owner, bool foreground)
{
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fuse_session *se;
	struct fuse *f = NULL;
	char err[512] = "";
	int ret = -1;

	fs_owner = *owner;
	if (fuse_opt_add_arg(&args, "usertp mount") || fuse_opt_add_arg(&args, "-o") ||
	    fuse_opt_add_arg(&args, options))
		goto out;
	f = fuse_new(&args, &fs_ops, sizeof(fs_ops), NULL);
	if (!f || fuse_mount(f, mountpoint))
		goto out;
	se = fuse_get_session(f);
	if (fuse_set_signal_handlers(se) || fuse_daemonize(foreground))
		goto unmount;
	/* The top level's session and its thread: made here, in the process that serves. */
	ret = usertp__instance_new(NULL, notify_poll, event_id, &top_level.inst, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "usertp mount: cannot record the programs: %s\n", err);
		ret = -1;
		goto unmount;
	}
	/*
	 * Requests are served by several threads: a slow one does not hold the others; a read of
	 * a pipe that would wait holds none (fs-loop.c).
	 */
	ret = usertp__fs_loop_run(se, USERTP__MOUNT_MAX_THREADS,
				  &(struct usertp__fs_loop_ops){ .park = park_read });
	fuse_remove_signal_handlers(se);
unmount:
	fuse_unmount(f);
out:
	if (f)
		fuse_destroy(f);
	usertp__fs_loop_end();
	fuse_opt_free_args(&args);
	return ret;
}
