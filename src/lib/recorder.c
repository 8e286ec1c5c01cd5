/* SPDX-License-Identifier: MIT */
/*
 * recorder.c - the embedded recorder: a program traces itself when USERTP_EVENTS is set.
 *
 *	USERTP_EVENTS	event specs, as for set_event ("jobs:*,sched:job_done,!jobs:noisy"),
 *			each group of them with a filter in the kernel's grammar after "if",
 *			groups apart with ";": "jobs:*; jobs:job_done if id > 5 && worker ~ \"w*\""
 *	USERTP_OUTPUT	where to write at exit: "*.txt" the kernel's trace text (default trace.txt),
 *			"*.dat" a trace.dat file for trace-cmd and KernelShark
 *	USERTP_BUFFER_KB per-CPU buffer in KiB (default 1408, the kernel's; rounded up to pages)
 *	USERTP_OVERWRITE 1: the oldest events go when full (default, as the kernel); 0: the newest
 *	USERTP_CLOCK	"mono" (CLOCK_MONOTONIC ns), "x86-tsc" (raw TSC ticks) or "tsc2nsec"
 *			(the default where the TSC is invariant: ticks, written as mono ns)
 *
 * Recording starts in libusertp's constructor, before main(), and covers events of libraries
 * loaded later.  The output is written once: at exit() from any thread or a return from main
 * (an atexit handler, which runs after the program's own), or on a fatal signal whose handler
 * was the default (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTERM, SIGINT, SIGHUP, SIGQUIT):
 * the output is written with no malloc, then the signal's default action proceeds.  On
 * SIGKILL everything recorded is lost: the buffers die with the process.
 *
 * While recording, objects with events are kept loaded (dlclose() does not unmap them, as with
 * RTLD_NODELETE): their records are printed at exit with their compiled TP_printk.
 *
 * A child forked without exec gets fresh buffers and writes its own output, named with its
 * pid ("trace.4243.txt").  A bad setting is reported in one line on stderr and the program
 * runs untraced.  Without USERTP_EVENTS nothing here runs: no memory, no thread, no file.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/uio.h>
#include <unistd.h>

#include "internal.h"
#include "rb-sink.h"
#include "listener.h"
#include "number.h"
#include "ring-buffer.h"
#include "trace-dat.h"
#include "trace-text.h"
#include "tsc2nsec.h"

#define DEFAULT_OUTPUT "trace.txt"

static struct {
	struct usertp__rb_sink sink;
	struct usertp_listener *listener; /* its events, recording into sink */
	char *events; /* USERTP_EVENTS as it was (the program may change its environment) */
	pid_t pid;    /* of the process that started recording (not a forked child) */
	int written; /* the output is written once */
	bool dat; /* trace.dat rather than text */
	unsigned long buffer_kb; /* per CPU, as USERTP_BUFFER_KB said */
	bool tsc2nsec; /* USERTP_CLOCK=tsc2nsec: ticks, written as nanoseconds (tsc2nsec.h) */
	struct usertp__tsc_sample tsc_start;
	struct usertp__tsc2nsec conv; /* fitted when the output is written */
	char output[PATH_MAX];
	char base_output[PATH_MAX]; /* as configured, before a fork renames it */
} rec;

static const int fatal_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT,
				     SIGTERM, SIGINT, SIGHUP, SIGQUIT };

struct lookup {
	unsigned int id;
	const struct usertp_event *ev;
};

static void lookup_file(const struct usertp_event_file *file, void *arg)
{
	struct lookup *l = arg;

	if ((unsigned int)file->id == l->id)
		l->ev = __atomic_load_n(&file->event, __ATOMIC_ACQUIRE);
}

static const struct usertp_event *lookup_event(unsigned int id, void *arg)
{
	struct lookup l = { id, NULL };

	(void)arg;
	usertp__listener_files(rec.listener, lookup_file, &l);
	return l.ev;
}

struct dat_events {
	struct usertp__dat_event *events;
	unsigned int nr, max, missing; /* missing: events without a format text */
};

static void collect_event(const struct usertp_event_file *file, void *arg)
{
	struct dat_events *d = arg;
	const struct usertp__event_node *node = file->node;

	if (d->nr < d->max && node->format)
		d->events[d->nr++] = (struct usertp__dat_event){
			node->instances[0]->event_class->system, node->format };
	else
		d->missing++;
}

static void count_file(const struct usertp_event_file *file, void *arg)
{
	(void)file;
	(*(unsigned int *)arg)++;
}

static int write_dat(int fd, const struct usertp__rb_snapshot *snap,
		     const struct usertp__tsc2nsec *conv)
{
	const size_t cmdlines_size = 1 << 20;
	struct usertp__dat_source src = { .raw_clock = usertp__rb_clock_id == USERTP_RB_CLOCK_TSC,
					  .tsc2nsec = conv };
	struct dat_events d = { NULL, 0, 0, 0 };
	/* usertp_printk()'s formats and call sites (the table only grows: measured, then taken) */
	unsigned int nr_printk = usertp__printk_count();
	size_t formats_size = usertp__printk_lines(0, nr_printk, false, NULL, 0) + 1;
	size_t sites_size = usertp__printk_lines(0, nr_printk, true, NULL, 0) + 1;
	char *cmdlines, *formats, *sites;
	int ret = -ENOMEM;

	usertp__listener_files(rec.listener, count_file, &d.max);
	d.events = usertp__rb_alloc((d.max + 1) * sizeof(*d.events));
	cmdlines = usertp__rb_alloc(cmdlines_size);
	formats = usertp__rb_alloc(formats_size);
	sites = usertp__rb_alloc(sites_size);
	if (d.events && cmdlines && formats && sites) {
		src.printk_formats = formats;
		src.printk_formats_len = usertp__printk_lines(0, nr_printk, false, formats, formats_size);
		src.kallsyms = sites;
		src.kallsyms_len = usertp__printk_lines(0, nr_printk, true, sites, sites_size);
		usertp__listener_files(rec.listener, collect_event, &d);
		src.events = d.events;
		src.nr_events = d.nr;
		src.cmdlines = cmdlines;
		src.cmdlines_len = usertp__comm_lines(cmdlines, cmdlines_size, 0, NULL);
		ret = usertp__trace_dat_write(fd, snap, &src);
		if (d.missing) {
			/* Never silently: their records print as [UNKNOWN EVENT]. */
			static const char say[] = "usertp: some events have no format text (out of "
						  "memory) in ";
			static const char end[] = ": their records cannot be printed\n";
			struct iovec iov[3] = { { (void *)say, sizeof(say) - 1 },
						{ rec.output, strlen(rec.output) },
						{ (void *)end, sizeof(end) - 1 } };

			(void)!writev(STDERR_FILENO, iov, 3);
		}
	}
	usertp__rb_free(d.events);
	usertp__rb_free(cmdlines);
	usertp__rb_free(formats);
	usertp__rb_free(sites);
	return ret;
}

/*
 * The output, never through a final symbolic link (a program run by one user may write as
 * another): an existing regular file is truncated, a new one made with O_EXCL, so that a link
 * put there meanwhile fails.  Async-signal-safe.  Return: the fd, or -1 with errno (ELOOP: a
 * link, EINVAL: not a regular file).
 */
static int open_output(const char *path)
{
	int fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;

	if (fd < 0 && errno == ENOENT)
		return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || ftruncate(fd, 0)) {
		int err = errno;

		close(fd);
		errno = S_ISREG(st.st_mode) ? err : EINVAL;
		return -1;
	}
	return fd;
}

/* "usertp: cannot write OUTPUT: REASON" on stderr, async-signal-safe. */
static void say_write_error(int err)
{
	static const struct { int err; const char *text; } reasons[] = {
		{ ENOSPC, "No space left on device" }, { EDQUOT, "Disk quota exceeded" },
		{ EACCES, "Permission denied" }, { ENOENT, "No such file or directory" },
		{ EROFS, "Read-only file system" }, { EIO, "Input/output error" },
		{ EISDIR, "Is a directory" }, { ENOMEM, "Cannot allocate memory" },
		{ ELOOP, "a symbolic link (not followed)" }, { EINVAL, "not a regular file" },
	};
	const char *why = "error";
	struct iovec iov[5];

	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		if (reasons[i].err == err)
			why = reasons[i].text;
	iov[0] = (struct iovec){ (void *)"usertp: cannot write ", 21 };
	iov[1] = (struct iovec){ rec.output, strlen(rec.output) };
	iov[2] = (struct iovec){ (void *)": ", 2 };
	iov[3] = (struct iovec){ (void *)why, strlen(why) };
	iov[4] = (struct iovec){ (void *)"; the trace is lost\n", 20 };
	(void)!writev(STDERR_FILENO, iov, 5);
}

/* @n in decimal at the end of @buf (24 bytes); return where it starts.  Async-signal-safe. */
static char *decimal(uint64_t n, char *buf)
{
	char *p = buf + 23;

	*p = 0;
	do
		*--p = (char)('0' + n % 10);
	while ((n /= 10));
	return p;
}

/*
 * When the file lacks events the program recorded (overwritten in a full buffer, or dropped),
 * one line says how many, of how many, and what to change (issue 21: the defaults kept 26,522
 * of 400,000 events and nothing said so).  Async-signal-safe.
 */
static void say_losses(const struct usertp__rb_snapshot *snap)
{
	uint64_t kept = 0, overwritten = 0, dropped = 0;
	char b_kept[24], b_all[24], b_lost[24], b_kb[24];
	struct iovec iov[12];
	unsigned int n = 0;

	for (unsigned int cpu = 0; cpu < snap->nr_cpus; cpu++) {
		kept += snap->cpus[cpu].entries;
		overwritten += snap->cpus[cpu].overrun;
		dropped += snap->cpus[cpu].dropped;
	}
	if (!overwritten && !dropped)
		return;
#define SAY(text) (iov[n++] = (struct iovec){ (void *)(text), strlen(text) })
	SAY("usertp: ");
	SAY(rec.output);
	SAY(" holds ");
	SAY(decimal(kept, b_kept));
	SAY(" of ");
	SAY(decimal(kept + overwritten + dropped, b_all));
	SAY(" events recorded: ");
	SAY(decimal(overwritten + dropped, b_lost));
	SAY(overwritten ? " overwritten" : " dropped");
	SAY(" in full buffers of ");
	SAY(decimal(rec.buffer_kb, b_kb));
	SAY(" KiB per CPU (raise USERTP_BUFFER_KB, or record with `usertp record`, which keeps "
	    "every page)\n");
#undef SAY
	(void)!writev(STDERR_FILENO, iov, n);
}

/* The names of every event the program has, "sys:event" lines (malloc'd). */
static int name_line(const struct usertp_event *ev, void *arg)
{
	fprintf(arg, "%s:%s\n", usertp_event_system(ev), usertp_event_name(ev));
	return 0;
}

/*
 * At exit: each spec of USERTP_EVENTS that selected no event of the program is named, with
 * the close matches (a typo records nothing, silently, otherwise).
 */
static void check_specs(void)
{
	char *names = NULL, *specs, *save = NULL;
	size_t len = 0;
	FILE *f;

	if (!rec.events || getpid() != rec.pid || !(f = open_memstream(&names, &len)))
		return;
	usertp_event_foreach(name_line, f);
	if (fclose(f) || !(specs = strdup(rec.events))) {
		free(names);
		return;
	}
	for (char *spec = strtok_r(specs, ", \t", &save); spec; spec = strtok_r(NULL, ", \t", &save)) {
		char close_ones[512];

		if (spec[0] == '!' || usertp__spec_matches_any(spec, names))
			continue;
		fprintf(stderr, "usertp: USERTP_EVENTS: no event %s in this program", spec);
		if (usertp__spec_close_matches(spec, names, close_ones, sizeof(close_ones)))
			fprintf(stderr, "; close matches: %s", close_ones);
		fputc('\n', stderr);
	}
	free(specs);
	free(names);
}

/* Write what the buffers hold; async-signal-safe (no malloc, no stdio). */
static void write_output(void)
{
	struct usertp__text_source src = { lookup_event, NULL, 0,
					   usertp__rb_clock_id == USERTP_RB_CLOCK_TSC, NULL };
	struct usertp__tsc_sample end;
	struct usertp__rb_snapshot snap;
	int fd, ret;

	if (__atomic_exchange_n(&rec.written, 1, __ATOMIC_ACQ_REL))
		return;
	/* Ticks to nanoseconds, fitted from the start to now (tsc2nsec.h). */
	if (rec.tsc2nsec) {
		usertp__tsc_sample(&end);
		if (usertp__tsc2nsec_fit(&rec.tsc_start, &end, &rec.conv))
			src.tsc2nsec = &rec.conv;
	}
	__atomic_store_n(&rec.sink.active, false, __ATOMIC_RELAXED);
	src.nr_online = (int)sysconf(_SC_NPROCESSORS_ONLN);
	/* A thread preempted in the middle of an event hides what follows it on its page. */
	usertp__rb_quiesce(&rec.sink.rb, 20);
	ret = usertp__rb_snapshot(rec.sink.rb.region, rec.sink.rb.size, &snap);
	if (ret)
		return;
	fd = open_output(rec.output);
	if (fd >= 0) {
		ret = rec.dat ? write_dat(fd, &snap, src.tsc2nsec)
			      : usertp__trace_text_write(fd, &snap, &src);
		if (close(fd) && !ret)
			ret = -errno;
	} else {
		ret = -errno;
	}
	if (ret)
		say_write_error(-ret);
	else
		say_losses(&snap);
	usertp__rb_snapshot_free(&snap);
}

static void at_exit(void)
{
	write_output();
	check_specs();
}

static void on_fatal_signal(int sig)
{
	int saved = errno;

	write_output();
	errno = saved;
	/* SA_RESETHAND put the default action back: let it happen. */
	raise(sig);
}

static void install_signal_handlers(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++) {
		struct sigaction old, sa;

		if (sigaction(fatal_signals[i], NULL, &old) || old.sa_handler != SIG_DFL ||
		    (old.sa_flags & SA_SIGINFO))
			continue; /* the program handles it: leave it alone */
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_fatal_signal;
		sa.sa_flags = SA_RESETHAND | SA_NODEFER;
		sigemptyset(&sa.sa_mask);
		sigaction(fatal_signals[i], &sa, NULL);
	}
}

/* "trace.txt" for the process that started recording; "trace.<pid>.txt" for forked children. */
static void name_output(pid_t child)
{
	const char *dot = strrchr(rec.base_output, '.');
	size_t stem = (size_t)(dot - rec.base_output);

	if (!child) {
		snprintf(rec.output, sizeof(rec.output), "%s", rec.base_output);
		return;
	}
	snprintf(rec.output, sizeof(rec.output), "%.*s.%d%s", (int)stem, rec.base_output,
		 (int)child, dot);
}

/* In a child forked without exec: its own buffers, its own output. */
static void after_fork_child(void)
{
	struct usertp__rb old = rec.sink.rb;

	__atomic_store_n(&rec.sink.active, false, __ATOMIC_RELAXED);
	if (usertp__rb_create(&rec.sink.rb, old.nr_cpus, (unsigned long)old.nr_pages * USERTP__KPAGE_DATA / 1024,
			     old.overwrite)) {
		rec.sink.rb = old; /* keep the parent's mapping out of reach: stay off */
		return;
	}
	usertp__rb_destroy(&old);
	name_output(getpid());
	rec.written = 0;
	__atomic_store_n(&rec.sink.active, true, __ATOMIC_RELAXED);
}

static bool bad(const char *var, const char *value, const char *why)
{
	fprintf(stderr, "usertp: %s=%s: %s; running untraced\n", var, value, why);
	return false;
}

/* Can @path be written at exit (it, or a new file in its directory)?  Else why not. */
static bool output_writable(const char *path, char *why, size_t size)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');

	struct stat st;

	if (!lstat(path, &st) && !S_ISREG(st.st_mode)) {
		snprintf(why, size, "%s", S_ISLNK(st.st_mode) ? "a symbolic link: not followed"
							     : "not a regular file");
		return false;
	}
	if (!access(path, F_OK)) {
		if (!access(path, W_OK))
			return true;
	} else {
		snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) + 1 : 1,
			 slash ? path : ".");
		if (!access(dir, W_OK | X_OK))
			return true;
	}
	snprintf(why, size, "cannot be written: %s", strerror(errno));
	return false;
}

static bool read_settings(const char *events, unsigned long *kb, bool *overwrite)
{
	const char *output = secure_getenv("USERTP_OUTPUT"), *v;
	struct usertp__clock_choice clock;
	char why[160];
	const char *problem;
	size_t len;

	if (!*events)
		return bad("USERTP_EVENTS", events, "no event given");
	if (!output)
		output = DEFAULT_OUTPUT;
	len = strlen(output);
	if (len < 5 || (strcmp(output + len - 4, ".txt") && strcmp(output + len - 4, ".dat")))
		return bad("USERTP_OUTPUT", output, "not a file name ending in .txt (trace text) or "
						    ".dat (trace.dat)");
	rec.dat = !strcmp(output + len - 4, ".dat");
	if (output[0] != '/') {
		char cwd[PATH_MAX];

		/* Absolute now, so that a chdir() of the program does not move the output. */
		if (!getcwd(cwd, sizeof(cwd)) ||
		    snprintf(rec.base_output, sizeof(rec.base_output), "%s/%s", cwd, output) >=
			    (int)sizeof(rec.base_output))
			return bad("USERTP_OUTPUT", output, "path too long");
	} else if (snprintf(rec.base_output, sizeof(rec.base_output), "%s", output) >=
		   (int)sizeof(rec.base_output)) {
		return bad("USERTP_OUTPUT", output, "path too long");
	}
	if (!output_writable(rec.base_output, why, sizeof(why)))
		return bad("USERTP_OUTPUT", output, why);
	*kb = USERTP_RB_DEFAULT_KB;
	v = secure_getenv("USERTP_BUFFER_KB");
	if (v && usertp__rb_parse_kb(v, kb, &problem))
		return bad("USERTP_BUFFER_KB", v, problem);
	if (usertp__rb_size_check((unsigned int)get_nprocs_conf(), *kb, why, sizeof(why)))
		return bad("USERTP_BUFFER_KB", v ? v : "1408 (the default)", why);
	*overwrite = true;
	v = secure_getenv("USERTP_OVERWRITE");
	if (v && strcmp(v, "0") && strcmp(v, "1"))
		return bad("USERTP_OVERWRITE", v, "not 0 or 1");
	if (v)
		*overwrite = !strcmp(v, "1");
	v = secure_getenv("USERTP_CLOCK");
	if (v && (!*v || usertp__clock_parse(v, &clock, &problem)))
		return bad("USERTP_CLOCK", v, *v ? problem : "not mono, x86-tsc or tsc2nsec");
	if (!v)
		usertp__clock_parse(NULL, &clock, &problem); /* mono: the TSC where invariant */
	usertp__rb_clock_id = clock.buffers;
	rec.tsc2nsec = clock.tsc2nsec;
	if (rec.tsc2nsec)
		usertp__tsc_sample(&rec.tsc_start);
	return true;
}

/*
 * USERTP_EVENTS split: the specs of every group (comma-joined, for the listener), and each
 * group's "SPECS if FILTER" in @groups (NUL-separated pairs: specs, then filter; to free()).
 * ";" inside quotes belongs to the filter.  Return: the specs (to free()) or NULL.
 */
static char *events_split(const char *value, char **groups, size_t *groups_len)
{
	char *specs = calloc(1, strlen(value) + 1), *pairs = calloc(1, 2 * strlen(value) + 4);
	size_t n = 0, g = 0;
	const char *p = value;

	if (!specs || !pairs) {
		free(specs);
		free(pairs);
		return NULL;
	}
	while (*p) {
		const char *end = p, *cond;
		char quote = 0;
		size_t len;

		for (; *end && (quote || *end != ';'); end++)
			if (*end == '"' || *end == '\'') /* (quotes are the filter's) */
				quote = quote == *end ? 0 : quote ? quote : *end;
		len = (size_t)(end - p);
		cond = NULL;
		for (const char *c = p; c + 4 <= end; c++)
			if (isspace((unsigned char)c[0]) && c[1] == 'i' && c[2] == 'f' &&
			    (c + 3 == end || isspace((unsigned char)c[3]))) {
				cond = c;
				break;
			}
		if (cond) {
			size_t slen = (size_t)(cond - p);

			memcpy(specs + n, p, slen);
			n += slen;
			memcpy(pairs + g, p, slen);
			g += slen + 1; /* (NUL) */
			const char *ftext = cond + 3, *fend = end;

			/* The filter without the white space around it. */
			while (ftext < fend && isspace((unsigned char)*ftext))
				ftext++;
			while (fend > ftext && isspace((unsigned char)fend[-1]))
				fend--;
			memcpy(pairs + g, ftext, (size_t)(fend - ftext));
			g += (size_t)(fend - ftext) + 1;
		} else {
			memcpy(specs + n, p, len);
			n += len;
		}
		specs[n++] = ',';
		p = *end ? end + 1 : end;
	}
	specs[n ? n - 1 : 0] = 0;
	*groups = pairs;
	*groups_len = g;
	return specs;
}

/* An event that came after the filter was set, and does not take it: not recorded. */
static void filter_refused(void *arg, const char *events, const struct usertp_event *ev,
			   const char *text, const struct usertp__filter_error *e)
{
	char err[8192];

	(void)arg;
	usertp__filter_error_file(text, e, err, sizeof(err));
	fprintf(stderr, "usertp: USERTP_EVENTS: the filter of %s does not fit %s:%s, which is not "
			"recorded: %s\n%s",
		events, ev->event_class->system, ev->name, strerror(-e->err), err);
}

/*
 * Each group's filter on its events.  Return: false (said on stderr: the text, a caret, the
 * kernel's message) when one cannot be taken.
 */
static bool filters_set(const char *groups, size_t len)
{
	for (const char *p = groups; p < groups + len;) {
		const char *specs = p, *filter = p + strlen(p) + 1;
		char *copy = strdup(specs), *save = NULL, err[8192];

		p = filter + strlen(filter) + 1;
		for (char *spec = copy ? strtok_r(copy, ", \t", &save) : NULL; spec;
		     spec = strtok_r(NULL, ", \t", &save)) {
			int ret;

			if (spec[0] == '!')
				continue;
			ret = usertp_listener_set_filter(rec.listener, spec, filter, err, sizeof(err));
			if (ret) {
				fprintf(stderr, "usertp: USERTP_EVENTS: the filter of %s: %s\n%s", spec,
					strerror(-ret), err);
				fprintf(stderr, "usertp: running untraced\n");
				free(copy);
				return false;
			}
		}
		free(copy);
	}
	return true;
}

void __attribute__((constructor)) usertp__recorder_init(void)
{
	const char *value = secure_getenv("USERTP_EVENTS");
	char *events, *groups = NULL;
	size_t groups_len = 0;
	unsigned long kb;
	bool overwrite;
	int ret;

	if (!value || usertp__runtime_later())
		return;
	events = events_split(value, &groups, &groups_len);
	if (!events || !read_settings(events, &kb, &overwrite)) {
		free(events);
		free(groups);
		return;
	}
	usertp__init();
	ret = usertp__rb_create(&rec.sink.rb, (unsigned int)get_nprocs_conf(), kb, overwrite);
	if (ret) {
		fprintf(stderr, "usertp: cannot allocate trace buffers: %s; running untraced\n",
			strerror(-ret));
		return;
	}
	name_output(0);
	rec.buffer_kb = kb;
	rec.events = events; /* (the specs, without the filters) */
	rec.pid = getpid();
	/* Objects registered from now on stay loaded: their records are printed at exit. */
	__atomic_store_n(&usertp__keep_objects, true, __ATOMIC_RELAXED);
	usertp__keep_formats();
	__atomic_store_n(&rec.sink.active, true, __ATOMIC_RELAXED);
	__atomic_fetch_add(&usertp__rb_sinks, 1, __ATOMIC_RELAXED);
	ret = usertp__listener_create_ops(events, 0, usertp__rb_sink_ops(&rec.sink.rb), NULL,
					  &rec.sink,
					  &rec.listener);
	if (ret) {
		__atomic_store_n(&rec.sink.active, false, __ATOMIC_RELAXED);
		__atomic_fetch_sub(&usertp__rb_sinks, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&usertp__keep_objects, false, __ATOMIC_RELAXED);
		usertp__rb_destroy(&rec.sink.rb);
		bad("USERTP_EVENTS", value,
		    ret == -EINVAL ? "not a list of sys:event, sys:*, *:event or event specs"
				   : "out of memory");
		free(groups);
		return;
	}
	usertp__listener_on_filter_refused(rec.listener, filter_refused);
	if (!filters_set(groups, groups_len)) {
		/* Nothing starts: the buffers, the listener and the specs go. */
		__atomic_store_n(&rec.sink.active, false, __ATOMIC_RELAXED);
		usertp_listener_destroy(rec.listener);
		rec.listener = NULL;
		__atomic_fetch_sub(&usertp__rb_sinks, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&usertp__keep_objects, false, __ATOMIC_RELAXED);
		usertp__rb_destroy(&rec.sink.rb);
		free(rec.events);
		rec.events = NULL;
		free(groups);
		return;
	}
	free(groups);
	atexit(at_exit);
	install_signal_handlers();
	pthread_atfork(NULL, NULL, after_fork_child);
}
