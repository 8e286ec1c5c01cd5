/* SPDX-License-Identifier: MIT */
/*
 * kernel-rec.c - the kernel's events of a recording, in a tracefs instance of its own
 * (private/usertp-consumer-private.h says how).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <tracefs.h>

#include "format-field.h"
#include "kernel-rec.h"
#include "ring-buffer.h"
#include "trace-dat.h"
#include "spec.h"
#include "spool.h"

struct usertp__kernel_rec {
	struct tracefs_instance *inst;
	char name[64];
	unsigned int nr_cpus;
	int *raw;		   /* per CPU: its trace_pipe_raw, or -1 */
	int (*pipes)[2];	   /* per CPU: what splice moves through to the spool */
	int *spool;		   /* per CPU: a file of whole pages (unlinked) */
	struct usertp__merge_event *events;
	unsigned int nr_events;
	char *cmdlines, *kallsyms, *printk_formats; /* (usertp__kernel_texts()) */
	size_t kallsyms_len, printk_formats_len;
};

/* The system of @spec (up to its ':', or all of it), into @buf. */
static void spec_system(const char *spec, char *buf, size_t size)
{
	size_t len = strcspn(spec, ":");

	snprintf(buf, size, "%.*s", (int)(len < size ? len : size - 1), spec);
}

/*
 * Where tracefs cannot be read (not root, not mounted), the kernel's systems that every
 * kernel of this decade has, so that `-e sched:sched_switch` still says what is missing
 * rather than looking for the event in the programs.
 */
static const char *const common_systems[] = {
	"block",     "cgroup",	 "compaction", "exceptions", "ext4",	"filemap",   "irq",
	"irq_vectors", "kmem",	 "module",     "napi",	     "net",	"oom",	     "power",
	"printk",    "random",	 "raw_syscalls", "rcu",	     "sched",	"signal",    "skb",
	"sock",	     "syscalls", "task",       "tcp",	     "timer",	"udp",	     "vmscan",
	"workqueue", "writeback", "xdp",
};

/*
 * tracefs's directory, or NULL where it is not mounted.  (Not tracing_dir(): where the
 * directory cannot be entered, not root, it finds it anew at each call and leaks the last.)
 */
static const char *tracing_dir(void)
{
	static const char *const places[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	struct statfs fs;

	for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++)
		if (!statfs(places[i], &fs) && fs.f_type == TRACEFS_MAGIC)
			return places[i];
	return NULL;
}

/*
 * All of the file @path (to free()), NUL-terminated, its length in *@len; NULL with errno set
 * if it cannot be read.  (tracefs's files say no size: read to the end.)
 */
static char *read_whole(const char *path, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	ssize_t got;

	if (fd < 0 || !buf)
		err = fd < 0 ? errno : ENOMEM;
	while (!err && (got = read(fd, buf + n, cap - n - 1)) != 0) {
		if (got < 0) {
			err = errno;
			break;
		}
		n += (size_t)got;
		if (n + 1 == cap) {
			char *more = cap < (1u << 30) ? realloc(buf, cap * 2) : NULL;

			if (!more)
				err = ENOMEM;
			else
				buf = more, cap *= 2;
		}
	}
	if (fd >= 0)
		close(fd);
	if (err) {
		free(buf);
		errno = err;
		return NULL;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}

/* The top level's file @name, whole (to free()), or NULL with errno set. */
static char *read_top(const char *name, size_t *len)
{
	const char *top = tracing_dir();
	char path[PATH_MAX];
	size_t ignored;

	if (!top) {
		errno = ENOENT;
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/%s", top, name);
	return read_whole(path, len ? len : &ignored);
}

bool usertp__kernel_spec(const char *spec)
{
	const char *top = tracing_dir();
	char system[256], path[PATH_MAX];
	struct stat st;

	if (spec[0] == '!')
		spec++;
	spec_system(spec, system, sizeof(system));
	/*
	 * (A glob, or nothing: not a kernel system's name.  Nor "ftrace": the kernel's own
	 * events there cannot be enabled; usertp_printk()'s records are programs' ftrace:bprint.)
	 */
	if (!system[0] || strpbrk(system, "*?[/") || !strcmp(system, ".") || !strcmp(system, "ftrace"))
		return false;
	if (top) {
		snprintf(path, sizeof(path), "%s/events", top);
		if (!access(path, R_OK | X_OK)) {
			snprintf(path, sizeof(path), "%s/events/%s", top, system);
			return !stat(path, &st) && S_ISDIR(st.st_mode);
		}
	}
	for (size_t i = 0; i < sizeof(common_systems) / sizeof(common_systems[0]); i++)
		if (!strcmp(system, common_systems[i]))
			return true;
	return false;
}

int usertp__kernel_check(char *why, size_t whylen)
{
	const char *top = tracing_dir();
	char path[PATH_MAX];

	if (!top) {
		snprintf(why, whylen, "kernel events need tracefs, which is not mounted (as root: "
			 "mount -t tracefs nodev /sys/kernel/tracing)");
		return -1;
	}
	snprintf(path, sizeof(path), "%s/instances", top);
	if (access(path, W_OK | X_OK)) {
		snprintf(why, whylen, "kernel events need write access to %s (%s): run as root, or "
			 "be given tracefs's group (mount -o remount,gid=GROUP,mode=0750 %s)",
			 path, strerror(errno), top);
		return -1;
	}
	return 0;
}

void usertp__kernel_remove_leftovers(void (*say)(const char *name))
{
	const char *top = tracing_dir();
	size_t prefix = strlen(USERTP__KERNEL_INSTANCE_PREFIX);
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	if (!top)
		return;
	snprintf(path, sizeof(path), "%s/instances", top);
	d = opendir(path);
	while (d && (de = readdir(d))) {
		struct tracefs_instance *inst;
		char *end;
		long pid;

		if (strncmp(de->d_name, USERTP__KERNEL_INSTANCE_PREFIX, prefix))
			continue;
		pid = strtol(de->d_name + prefix, &end, 10);
		if (*end == '-') /* a session's second instance: "-N" */
			strtoul(end + 1, &end, 10);
		if (*end || pid <= 0 || pid > INT32_MAX || !kill((pid_t)pid, 0) || errno != ESRCH)
			continue;
		if (say)
			say(de->d_name);
		inst = tracefs_instance_alloc(NULL, de->d_name);
		if (inst) {
			tracefs_instance_destroy(inst);
			tracefs_instance_free(inst);
		}
	}
	if (d)
		closedir(d);
}

char *usertp__kernel_events(char *why, size_t whylen)
{
	const char *top = tracing_dir();
	char *text;

	if (!top) {
		snprintf(why, whylen, "tracefs is not mounted (as root: mount -t tracefs nodev "
			 "/sys/kernel/tracing)");
		return NULL;
	}
	text = read_top("available_events", NULL);
	if (!text)
		snprintf(why, whylen, "cannot read %s/available_events (%s): run as root, or be "
			 "given tracefs's group (mount -o remount,gid=GROUP,mode=0750 %s)", top,
			 strerror(errno ? errno : EACCES), top);
	return text;
}

char *usertp__kernel_format(const char *sysname)
{
	char system[256], path[600];
	const char *colon = strchr(sysname, ':');

	if (!colon)
		return NULL;
	spec_system(sysname, system, sizeof(system));
	snprintf(path, sizeof(path), "events/%s/%s/format", system, colon + 1);
	return read_top(path, NULL);
}

/* What the kernel said of @file of the instance, or strerror(errno), into @err. */
static int fail_file(struct usertp__kernel_rec *k, const char *file, const char *value, char *err,
		     size_t errlen)
{
	snprintf(err, errlen, "tracefs instance %s: %s < '%s': %s", k->name, file, value,
		 strerror(errno));
	return -1;
}

/* A write to the instance's @file (whole, or the kernel's errno).  Return: 0 or -1. */
static int write_file(struct usertp__kernel_rec *k, const char *file, const char *value,
		      bool append, char *err, size_t errlen)
{
	int ret;

	errno = 0;
	ret = append ? tracefs_instance_file_append(k->inst, file, value)
		     : tracefs_instance_file_write(k->inst, file, value);
	if (ret < (int)strlen(value)) {
		if (!errno)
			errno = EIO;
		return fail_file(k, file, value, err, errlen);
	}
	return 0;
}

/*
 * The filter of each event of @spec that is enabled now (the instance's set_event lists
 * them): written to its filter file, where the kernel compiles it.  Return: 0 or -1.
 */
static int apply_filter(struct usertp__kernel_rec *k, const char *spec, const char *filter,
			char *err, size_t errlen)
{
	char system[256], *enabled = tracefs_instance_file_read(k->inst, "set_event", NULL);
	const char *event = strchr(spec, ':') ? strchr(spec, ':') + 1 : "*";
	int ret = 0;

	spec_system(spec, system, sizeof(system));
	for (char *save = NULL, *line = strtok_r(enabled, "\n", &save); line && !ret;
	     line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':'), *text;

		if (!colon || (size_t)(colon - line) != strlen(system) ||
		    strncmp(line, system, strlen(system)) ||
		    (strcmp(event, "*") && strcmp(event, colon + 1)))
			continue;
		*colon = 0;
		errno = 0;
		if (tracefs_event_file_write(k->inst, line, colon + 1, "filter", filter) >=
		    (int)strlen(filter))
			continue;
		/* The kernel's message, with its caret, is in the filter file now. */
		text = tracefs_event_file_read(k->inst, line, colon + 1, "filter", NULL);
		snprintf(err, errlen, "-f %s (of %s:%s): %s\n%s", filter, line, colon + 1,
			 strerror(errno ? errno : EINVAL), text ? text : "");
		free(text);
		ret = -1;
	}
	free(enabled);
	return ret;
}

/*
 * Does every spec (but those that leave out: !SPEC) select an event of the kernel?  Those that
 * do not are said with what is close, as for the programs' events.  Return: 0 or -1.
 */
static int known_events(const char *const *specs, unsigned int nr_specs, char *err, size_t errlen)
{
	char *names = read_top("available_events", NULL);
	size_t used = 0;

	if (!names)
		return 0; /* (the kernel's set_event says it then) */
	for (unsigned int i = 0; i < nr_specs && used < errlen; i++) {
		char close[512];

		if (specs[i][0] == '!' || usertp__spec_matches_any(specs[i], names))
			continue;
		used += (size_t)snprintf(err + used, errlen - used, "%sno event %s in the kernel",
					 used ? "\n" : "", specs[i]);
		if (used < errlen && usertp__spec_close_matches(specs[i], names, close, sizeof(close)))
			used += (size_t)snprintf(err + used, errlen - used, "; close matches: %s",
						 close);
	}
	free(names);
	return used ? -1 : 0;
}

static int take_formats(struct usertp__kernel_rec *k, char *err, size_t errlen);

/* The spool file of @cpu in the recording's spool directory @dir (made, never a link). */
static int spool_open(const char *dir, unsigned int cpu)
{
	char path[PATH_MAX];

	if (usertp__spool_kernel_path(path, sizeof(path), dir, cpu)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

/* One write of the pids of @list to @file (with O_TRUNC: the list is theirs alone). */
static int write_pids(struct usertp__kernel_rec *k, const char *file, const int *list, size_t nr,
		      char *err, size_t errlen)
{
	char *text = malloc(nr * 12 + 1), *at = text;
	int ret;

	if (!text) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -1;
	}
	*at = 0;
	for (size_t i = 0; i < nr; i++)
		at += sprintf(at, "%s%d", i ? " " : "", list[i]);
	ret = write_file(k, file, text, false, err, errlen);
	free(text);
	return ret;
}

int usertp__kernel_start(struct usertp__kernel_rec **out, const char *const *specs,
			 const char *const *filters, unsigned int nr_specs, unsigned long kb,
			 const char *clock, const struct usertp__kernel_pids *pids,
			 const char *spool_dir, char *err, size_t errlen)
{
	struct usertp__kernel_rec *k = calloc(1, sizeof(*k));
	char value[64];

	*out = NULL;
	if (!k) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -1;
	}
	static unsigned int made; /* (instances this process made: a session's gets -N) */
	unsigned int nth = __atomic_fetch_add(&made, 1, __ATOMIC_RELAXED);

	if (nth)
		snprintf(k->name, sizeof(k->name), "%s%d-%u", USERTP__KERNEL_INSTANCE_PREFIX,
			 (int)getpid(), nth);
	else
		snprintf(k->name, sizeof(k->name), "%s%d", USERTP__KERNEL_INSTANCE_PREFIX,
			 (int)getpid());
	if (tracefs_instance_exists(k->name)) {
		snprintf(err, errlen, "tracefs instance %s exists already", k->name);
		free(k);
		return -1;
	}
	k->inst = tracefs_instance_create(k->name);
	if (!k->inst) {
		snprintf(err, errlen, "cannot make tracefs instance %s: %s", k->name, strerror(errno));
		free(k);
		return -1;
	}
	k->nr_cpus = (unsigned int)get_nprocs_conf();
	snprintf(value, sizeof(value), "%lu", kb);
	if (write_file(k, "tracing_on", "0", false, err, errlen) ||
	    write_file(k, "trace_clock", clock, false, err, errlen) ||
	    write_file(k, "buffer_size_kb", value, false, err, errlen))
		goto fail;
	if ((pids->nr_pids &&
	     write_pids(k, "set_event_pid", pids->pids, pids->nr_pids, err, errlen)) ||
	    (pids->nr_notrace &&
	     write_pids(k, "set_event_notrace_pid", pids->notrace, pids->nr_notrace, err, errlen)) ||
	    (pids->event_fork && write_file(k, "options/event-fork", "1", false, err, errlen)))
		goto fail;
	if (known_events(specs, nr_specs, err, errlen))
		goto fail;
	for (unsigned int i = 0; i < nr_specs; i++)
		if (write_file(k, "set_event", specs[i], true, err, errlen))
			goto fail;
	for (unsigned int i = 0; i < nr_specs; i++)
		if (filters[i] && specs[i][0] != '!' &&
		    apply_filter(k, specs[i], filters[i], err, errlen))
			goto fail;
	k->pipes = calloc(k->nr_cpus, sizeof(*k->pipes));
	k->raw = calloc(k->nr_cpus, sizeof(*k->raw));
	k->spool = calloc(k->nr_cpus, sizeof(*k->spool));
	if (!k->pipes || !k->raw || !k->spool) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		goto fail;
	}
	for (unsigned int cpu = 0; cpu < k->nr_cpus; cpu++)
		k->spool[cpu] = k->raw[cpu] = k->pipes[cpu][0] = k->pipes[cpu][1] = -1;
	for (unsigned int cpu = 0; cpu < k->nr_cpus; cpu++) {
		k->spool[cpu] = spool_dir ? spool_open(spool_dir, cpu) : -1;
		if (spool_dir && k->spool[cpu] < 0) {
			snprintf(err, errlen, "a spool file in %s: %s", spool_dir, strerror(errno));
			goto fail;
		}
		/*
		 * Opened close-on-exec: a command the recording starts must not hold the instance
		 * (its rmdir is refused while a file of it is open).  A CPU that is not online
		 * has no trace_pipe_raw: no data.
		 */
		snprintf(value, sizeof(value), "per_cpu/cpu%u/trace_pipe_raw", cpu);
		k->raw[cpu] = tracefs_instance_file_open(k->inst, value,
							 O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (spool_dir && k->raw[cpu] >= 0 && pipe2(k->pipes[cpu], O_CLOEXEC)) {
			snprintf(err, errlen, "a pipe: %s", strerror(errno));
			goto fail;
		}
	}
	/* The formats now: the spool has them from the start (usertp__kernel_formats()). */
	if (take_formats(k, err, errlen) || write_file(k, "tracing_on", "1", false, err, errlen))
		goto fail;
	*out = k;
	return 0;
fail:
	usertp__kernel_free(k);
	return -1;
}

/*
 * The full pages of @cpu, spliced from trace_pipe_raw through a pipe (close-on-exec, as the
 * file) to the spool, each batch moved whole before the next is taken.  Return: 0 or -errno.
 */
static int drain_cpu(struct usertp__kernel_rec *k, unsigned int cpu)
{
	for (;;) {
		ssize_t n = splice(k->raw[cpu], NULL, k->pipes[cpu][1], NULL, 16 * 4096,
				   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);

		if (n <= 0)
			return n == 0 || errno == EAGAIN || errno == EINTR ? 0 : -errno;
		while (n > 0) {
			ssize_t m = splice(k->pipes[cpu][0], NULL, k->spool[cpu], NULL, (size_t)n,
					   SPLICE_F_MOVE);

			if (m < 0 && errno == EINTR)
				continue;
			if (m <= 0)
				return m ? -errno : -EIO;
			n -= m;
		}
	}
}

int usertp__kernel_drain(struct usertp__kernel_rec *k)
{
	int ret = 0, err;

	for (unsigned int cpu = 0; cpu < k->nr_cpus; cpu++)
		if (k->raw[cpu] >= 0 && (err = drain_cpu(k, cpu)) && !ret)
			ret = err;
	return ret;
}

/* The pages that are not full, once the kernel writes no more: read() gives each. */
static void flush_cpu(struct usertp__kernel_rec *k, unsigned int cpu)
{
	static char page[USERTP__KPAGE_SIZE];
	ssize_t n;

	while ((n = read(k->raw[cpu], page, sizeof(page))) > 0 || (n < 0 && errno == EINTR))
		if (n > 0 && write(k->spool[cpu], page, (size_t)n) != n)
			return;
}

/* The number of @key in per_cpu/cpuN/stats @text (NULL: not read), or 0. */
static uint64_t stat_value(const char *text, const char *key)
{
	uint64_t n = 0;

	return text && usertp__dat_stat_value(text, strlen(text), key, &n) ? n : 0;
}

/* The formats of the events enabled in the instance, for the merge.  Return: 0 or -1. */
static bool kernel_has_event(const struct usertp__kernel_rec *k, unsigned int id)
{
	for (unsigned int i = 0; i < k->nr_events; i++)
		if (k->events[i].id == id)
			return true;
	return false;
}

static int take_formats(struct usertp__kernel_rec *k, char *err, size_t errlen)
{
	char *enabled = tracefs_instance_file_read(k->inst, "set_event", NULL);
	size_t cap = k->nr_events;

	if (!enabled)
		return 0; /* (none enabled yet: the file is empty) */

	for (char *save = NULL, *line = strtok_r(enabled, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':'), *format;
		const char *head_end, *body;
		struct usertp__merge_event *ev;
		unsigned int id;

		if (!colon)
			continue;
		*colon = 0;
		format = tracefs_event_file_read(k->inst, line, colon + 1, "format", NULL);
		if (!format || !usertp__format_split_id(format, &head_end, &id, &body) ||
		    kernel_has_event(k, id)) {
			free(format);
			continue;
		}
		if (k->nr_events == cap) {
			size_t more = cap ? 2 * cap : 16;
			void *p = realloc(k->events, more * sizeof(*k->events));

			if (!p) {
				free(format);
				free(enabled);
				snprintf(err, errlen, "%s", strerror(ENOMEM));
				return -1;
			}
			k->events = p;
			cap = more;
		}
		ev = &k->events[k->nr_events++];
		ev->id = id;
		ev->system = strdup(line);
		ev->format = format;
	}
	free(enabled);
	return 0;
}

void usertp__kernel_stop(struct usertp__kernel_rec *k, struct usertp__merge_source *src,
			 uint64_t *fired, uint64_t *overrun, unsigned int nr_cpus)
{
	tracefs_instance_file_write(k->inst, "tracing_on", "0");
	for (unsigned int cpu = 0; cpu < k->nr_cpus; cpu++) {
		char file[64], *stats;

		if (k->raw[cpu] < 0)
			continue;
		drain_cpu(k, cpu);
		flush_cpu(k, cpu);
		/* Every event of the CPU: read (in the spool), left, overwritten or dropped. */
		snprintf(file, sizeof(file), "per_cpu/cpu%u/stats", cpu);
		stats = tracefs_instance_file_read(k->inst, file, NULL);
		if (cpu < nr_cpus) {
			uint64_t lost = stat_value(stats, "overrun") +
					stat_value(stats, "dropped events");

			fired[cpu] += stat_value(stats, "read events") + stat_value(stats, "entries") +
				      lost;
			overrun[cpu] += stat_value(stats, "overrun");
		}
		free(stats);
	}
	*src = (struct usertp__merge_source){ .name = "the kernel", .events = k->events,
					      .nr_events = k->nr_events, .nr_cpus = k->nr_cpus,
					      .cpu_fd = k->spool };
}

void usertp__kernel_formats(const struct usertp__kernel_rec *k,
			    const struct usertp__merge_event **events, unsigned int *nr_events,
			    unsigned int *nr_cpus)
{
	*events = k->events;
	*nr_events = k->nr_events;
	*nr_cpus = k->nr_cpus;
}

void usertp__kernel_texts(struct usertp__kernel_rec *k, struct usertp__kernel_texts *t)
{
	free(k->cmdlines);
	free(k->kallsyms);
	free(k->printk_formats);
	/* (saved_cmdlines and printk_formats are the kernel's, not an instance's.) */
	k->cmdlines = read_top("saved_cmdlines", NULL);
	k->printk_formats = read_top("printk_formats", &k->printk_formats_len);
	k->kallsyms = read_whole("/proc/kallsyms", &k->kallsyms_len);
	*t = (struct usertp__kernel_texts){ k->cmdlines, k->kallsyms, k->printk_formats,
					    k->kallsyms ? k->kallsyms_len : 0,
					    k->printk_formats_len };
}

/* --- a reading session's kernel events ---------------------------------------------------- */

int usertp__kernel_set_events(struct usertp__kernel_rec *k, const char *const *specs,
			      unsigned int nr_specs, bool replace, char *err, size_t errlen)
{
	if (known_events(specs, nr_specs, err, errlen))
		return -ENOENT;
	/* (A list replaced whole: emptied first, as `echo > set_event` does.) */
	if (replace && write_file(k, "set_event", " ", false, err, errlen))
		return -errno;
	for (unsigned int i = 0; i < nr_specs; i++)
		if (write_file(k, "set_event", specs[i], true, err, errlen))
			return -errno;
	return take_formats(k, err, errlen) ? -ENOMEM : 0;
}

int usertp__kernel_set_filter(struct usertp__kernel_rec *k, const char *spec, const char *filter,
			      char *err, size_t errlen)
{
	return apply_filter(k, spec, filter ? filter : "0", err, errlen) ? -EINVAL : 0;
}

int usertp__kernel_set_pids(struct usertp__kernel_rec *k, const struct usertp__kernel_pids *pids,
			    char *err, size_t errlen)
{
	/* (An empty list is written as one space: the kernel empties the file.) */
	if ((pids->nr_pids ? write_pids(k, "set_event_pid", pids->pids, pids->nr_pids, err, errlen)
			   : write_file(k, "set_event_pid", " ", false, err, errlen)) ||
	    (pids->nr_notrace ? write_pids(k, "set_event_notrace_pid", pids->notrace,
					   pids->nr_notrace, err, errlen)
			      : write_file(k, "set_event_notrace_pid", " ", false, err, errlen)) ||
	    write_file(k, "options/event-fork", pids->event_fork ? "1" : "0", false, err, errlen))
		return -errno;
	return 0;
}

int usertp__kernel_set_tracing(struct usertp__kernel_rec *k, bool on)
{
	return tracefs_instance_file_write(k->inst, "tracing_on", on ? "1" : "0") < 0 ? -errno : 0;
}

int usertp__kernel_read_page(struct usertp__kernel_rec *k, unsigned int cpu,
			     unsigned char page[USERTP__KPAGE_SIZE])
{
	ssize_t n;

	if (cpu >= k->nr_cpus || k->raw[cpu] < 0)
		return 0;
	do
		n = read(k->raw[cpu], page, USERTP__KPAGE_SIZE);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN ? 0 : -errno;
	if (n > 0 && n < (ssize_t)USERTP__KPAGE_SIZE)
		memset(page + n, 0, USERTP__KPAGE_SIZE - (size_t)n);
	return n > 0 ? 1 : 0;
}

void usertp__kernel_lost(struct usertp__kernel_rec *k, unsigned int cpu, uint64_t *dropped,
			 uint64_t *overrun)
{
	char file[64], *stats;

	snprintf(file, sizeof(file), "per_cpu/cpu%u/stats", cpu);
	stats = tracefs_instance_file_read(k->inst, file, NULL);
	*dropped = stat_value(stats, "dropped events");
	*overrun = stat_value(stats, "overrun");
	free(stats);
}

const char *usertp__kernel_name(const struct usertp__kernel_rec *k)
{
	return k->name;
}

void usertp__kernel_free(struct usertp__kernel_rec *k)
{
	if (!k)
		return;
	for (unsigned int cpu = 0; k->raw && cpu < k->nr_cpus; cpu++)
		if (k->raw[cpu] >= 0)
			close(k->raw[cpu]);
	for (unsigned int cpu = 0; k->pipes && cpu < k->nr_cpus; cpu++)
		for (int end = 0; end < 2; end++)
			if (k->pipes[cpu][end] >= 0)
				close(k->pipes[cpu][end]);
	for (unsigned int cpu = 0; k->spool && cpu < k->nr_cpus; cpu++)
		if (k->spool[cpu] >= 0)
			close(k->spool[cpu]);
	if (k->inst) {
		tracefs_instance_destroy(k->inst);
		tracefs_instance_free(k->inst);
	}
	for (unsigned int i = 0; i < k->nr_events; i++) {
		free((char *)k->events[i].system);
		free((char *)k->events[i].format);
	}
	free(k->events);
	free(k->cmdlines);
	free(k->kallsyms);
	free(k->printk_formats);
	free(k->pipes);
	free(k->raw);
	free(k->spool);
	free(k);
}
