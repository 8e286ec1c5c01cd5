/* SPDX-License-Identifier: MIT */
/*
 * record.c - usertp record: record events of running programs into a trace.dat file.
 *
 *	usertp record -e SPEC... [-o FILE] [-b KIB] [--overwrite] [-C CLOCK] [-q]
 *		      (-P PID... | -a | -- CMD ARGS...)
 *
 * Each traced process (a source) records into ring buffers of its own, in shared memory that
 * this command maps (src/lib/session.c): the pages are read where they are written.  While
 * recording, every complete page is copied to a spool file per source and CPU, and its slot
 * given back to the writer (producer/consumer mode: nothing is overwritten, what does not fit
 * is dropped and counted).  With --overwrite nothing is read until the end (a flight
 * recorder: the latest data).  At the end the spools are merged into one trace.dat
 * (dat-merge.c): all sources, per CPU in timestamp order.
 *
 * How sources come:
 *   -P PID	this command connects to the program's endpoint and starts a session;
 *   -- CMD	CMD runs with USERTP_SESSION naming our socket: libusertp joins us from its
 *		constructor, before main(); as libraries with events load (linked or dlopen()ed),
 *		the program tells us their names and the formats of those we record, before
 *		they can fire.  A spec that matched no event of any program is warned of at the
 *		end, with the close matches (it may name events of a library loaded later, so
 *		it cannot be refused at the start, as it is under -P);
 *   -a		every program of this user: those running now, and those that start later,
 *		which join through the runtime directory's record-all.sock;
 *   fork()	children of traced programs announce themselves on our socket ("fork"), with
 *		buffers of their own; exec'd programs under -- CMD join again (USERTP_SESSION).
 *
 * A session ends when its program exits or dies (its connection closes): what it committed is
 * still in the shared memory we map, and is read to the end.  Recording stops on Ctrl-C,
 * SIGTERM, the end of CMD, or (with -P) when every program has gone.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctl-proto.h"
#include "spec.h"
#include "number.h"
#include "ring-buffer.h"
#include "trace-dat.h"
#include "client.h"
#include "dat-merge.h"
#include "spool.h"
#include "tool.h"

#define CALL_TIMEOUT_MS 5000
#define RECORDER_NICE (-10)
#define MAX_REGION (1ull << 44) /* a program's buffers: 4096 CPUs x 4 GiB */
#define MAX_SPECS 256

static const char usage_text[] =
	"usage: usertp record -e SPEC [-e SPEC]... [options] (-P PID... | -a | -- CMD [ARGS...])\n"
	"  -e SPEC        events: sys:event, sys:*, *:event, event or sys, globs (sys:io_*),\n"
	"                 all; !SPEC leaves out\n"
	"  -o FILE        output (default trace.dat)\n"
	"  -b KIB         buffer size per CPU and program, in KiB (default 1408)\n"
	"  -P PID         record a running program (repeatable)\n"
	"  -a             record every program of this user, also those that start later\n"
	"  --overwrite    flight recorder: keep only the latest data, written at the end\n"
	"  -C CLOCK       mono (default) or x86-tsc\n"
	"  -s USECS       how often buffers are read (default 10000)\n"
	"  -q             quiet: no status line, no summary (errors and warnings stay)\n"
	"  --recover DIR  write the spool DIR of a recorder that was killed into a trace.dat\n"
	"  -- CMD ARGS    run CMD and record it (and its children)\n";

/* One spool file: the pages of one source on one CPU. */
struct spool {
	unsigned int cpu;
	int fd;
	struct usertp__dat_out *out;
	uint64_t pages;
};

/* One traced process. */
struct source {
	pid_t pid;
	char comm[17];
	char name[48];
	int session;	     /* its session connection: closed by it when it ends */
	int query;	     /* a connection to its endpoint, for ids, formats, thread names */
	bool comms_asked;    /* a "comms" request is out on query: the reply is read by the loop */
	bool ended;	     /* drained to the end */
	unsigned int index;  /* in rec.sources, and in the spool's names */
	void *map;
	size_t size;
	struct usertp_rb_view *view;
	struct spool *spools; /* per CPU of view (or of the recording, when recovering) */
	unsigned int nr_spools;
	struct usertp_merge_event *events;
	unsigned int nr_events;
	char *comms;	     /* "tid comm" lines */
	struct source *forked_from; /* the parent whose image it runs (until it execs) */
	uint64_t events_read;
};

static struct {
	/* options */
	const char *specs[MAX_SPECS];
	unsigned int nr_specs;
	const char *output;
	unsigned long kb;
	bool overwrite, all, quiet, tsc;
	unsigned int interval_us;
	pid_t *pids;
	unsigned int nr_pids;
	char **cmd;

	/* state */
	char spool_dir[PATH_MAX];
	char sock_path[108], all_path[108];
	int listen_fd, sig_fd;
	pid_t child;
	int child_status;
	bool child_done, stop;
	struct source **sources;
	unsigned int nr_sources;
	unsigned int nr_cpus;
	struct timespec start;
	uint64_t spool_bytes;
	uint64_t events; /* read so far */
	int spool_error; /* the first failed spool write */
	unsigned int untraced; /* programs that joined and could not be recorded */
	int meta_fd;	       /* the spool's meta file (spool.h) */
	int wake_fd;	       /* an eventfd the programs write when their buffers fill */
	int nice;	       /* ours before raise_priority() */
	const char *recover;   /* --recover DIR */
	bool output_given;
	int reserve_fd;	 /* disk space kept for the output's header, should the disk fill */
	/* Per CPU, by the buffers' counters: events read, dropped, overwritten (--overwrite). */
	uint64_t read[USERTP_MERGE_MAX_CPUS], dropped[USERTP_MERGE_MAX_CPUS],
		overrun[USERTP_MERGE_MAX_CPUS];
} rec = { .output = "trace.dat", .kb = USERTP_RB_DEFAULT_KB, .interval_us = 10000, .listen_fd = -1,
	  .sig_fd = -1, .reserve_fd = -1, .meta_fd = -1,
	  .wake_fd = -1 };

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "usertp record: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* --- event specs -------------------------------------------------------------------------- */

static bool spec_selects(const char *system, const char *name)
{
	bool on = false;

	for (unsigned int i = 0; i < rec.nr_specs; i++) {
		bool negate = rec.specs[i][0] == '!';

		if (usertp__spec_match(rec.specs[i] + negate, system, name))
			on = !negate;
	}
	return on;
}

/* "sys:event" into its parts; false if it is not that. */
static bool split_event(const char *line, char *system, size_t size, const char **name)
{
	const char *colon = strchr(line, ':');

	if (!colon || (size_t)(colon - line) >= size)
		return false;
	memcpy(system, line, (size_t)(colon - line));
	system[colon - line] = 0;
	*name = colon + 1;
	return **name != 0;
}

/* Every event name the programs told us of ("sys:event" lines), for the checks of -e. */
static struct {
	char *text;
	size_t len, cap;
} names;

static void names_add(const char *line, size_t len)
{
	for (const char *p = names.text; p && p < names.text + names.len; p += strcspn(p, "\n") + 1)
		if (strcspn(p, "\n") == len && !memcmp(p, line, len))
			return;
	if (names.len + len + 2 > names.cap) {
		size_t cap = names.cap ? 2 * names.cap : 4096;
		char *p;

		while (cap < names.len + len + 2)
			cap *= 2;
		p = realloc(names.text, cap);
		if (!p)
			return;
		names.text = p;
		names.cap = cap;
	}
	memcpy(names.text + names.len, line, len);
	names.len += len;
	names.text[names.len++] = '\n';
	names.text[names.len] = 0;
}

/*
 * Check every spec that selects something against @events ("sys:event" lines).  Each that
 * matches none is named, with what is close, after @prefix.  Return: true when all match.
 */
static bool specs_check(const char *events, const char *prefix, const char *who)
{
	bool ok = true;

	for (unsigned int i = 0; i < rec.nr_specs; i++) {
		const char *spec = rec.specs[i];
		char close[512];

		if (spec[0] == '!' || usertp__spec_matches_any(spec, events ? events : ""))
			continue;
		ok = false;
		fprintf(stderr, "usertp record: %sno event %s in %s", prefix, spec, who);
		if (usertp__spec_close_matches(spec, events ? events : "", close, sizeof(close)))
			fprintf(stderr, "; close matches: %s", close);
		fputc('\n', stderr);
	}
	return ok;
}

/* The number "key=" of a message from a program, from 1 to @max; 0 when it is not that. */
static uint64_t msg_number(const char *msg, const char *key, uint64_t max)
{
	char text[32];
	uint64_t v;

	if (!usertp_ctl_arg(msg, key, text, sizeof(text)) || usertp__parse_u64(text, 1, max, &v))
		return 0;
	return v;
}

/* --- sources ------------------------------------------------------------------------------ */

/* What the spool's meta file could not take is said once: a recovery would miss it. */
static void meta_check(int ret)
{
	static bool said;

	if (ret && !said && rec.meta_fd >= 0)
		fail("writing %s/%s: %s (a recovery of this spool would miss what follows)",
		     rec.spool_dir, USERTP_SPOOL_META, strerror(-ret));
	said |= ret != 0;
}

/* The names of the threads of @s ("tid comm" lines): the latest. */
static void source_keep_comms(struct source *s, const char *comms)
{
	if (s->comms && !strcmp(s->comms, comms))
		return;
	free(s->comms);
	s->comms = strdup(comms);
	meta_check(usertp_spool_meta_comms(rec.meta_fd, s->index, comms));
}

static int spools_open(struct source *s)
{
	s->spools = calloc(s->view->nr_cpus, sizeof(*s->spools));
	if (!s->spools)
		return -ENOMEM;
	s->nr_spools = s->view->nr_cpus;
	for (unsigned int cpu = 0; cpu < s->nr_spools; cpu++)
		s->spools[cpu].fd = -1;
	/* Whoever recovers the spool learns of the source first. */
	meta_check(usertp_spool_meta_source(rec.meta_fd, s->index, s->pid, s->comm,
					    s->forked_from ? (int)s->forked_from->index : -1));
	for (unsigned int cpu = 0; cpu < s->view->nr_cpus; cpu++) {
		char path[PATH_MAX + 64];
		struct spool *sp = &s->spools[cpu];

		sp->cpu = cpu;
		usertp_spool_path(path, sizeof(path), rec.spool_dir, s->pid, s->index, cpu);
		sp->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		sp->out = malloc(sizeof(*sp->out));
		if (sp->fd < 0 || !sp->out)
			return sp->fd < 0 ? -errno : -ENOMEM;
		usertp__dat_out_init(sp->out, sp->fd);
	}
	return 0;
}

/* Map the region @fd of @size bytes and make @s its source.  Return: 0 or a negative errno. */
static int source_map(struct source *s, int fd, size_t size)
{
	int ret;

	if (!size || size > MAX_REGION)
		return -EINVAL;
	s->map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (s->map == MAP_FAILED) {
		s->map = NULL;
		return -errno;
	}
	s->size = size;
	s->view = malloc(sizeof(*s->view));
	if (!s->view)
		return -ENOMEM;
	ret = usertp_rb_view_init(s->view, s->map, size);
	if (ret)
		return ret;
	if (s->view->nr_cpus > rec.nr_cpus)
		rec.nr_cpus = s->view->nr_cpus;
	return spools_open(s);
}

static struct source *source_new(pid_t pid, const char *comm)
{
	struct source *s = calloc(1, sizeof(*s)), **list;

	if (!s)
		return NULL;
	list = realloc(rec.sources, (rec.nr_sources + 1) * sizeof(*list));
	if (!list) {
		free(s);
		return NULL;
	}
	rec.sources = list;
	s->index = rec.nr_sources;
	s->pid = pid;
	s->session = s->query = -1;
	snprintf(s->comm, sizeof(s->comm), "%s", comm ? comm : "");
	snprintf(s->name, sizeof(s->name), "%s[%d]", s->comm[0] ? s->comm : "?", (int)pid);
	rec.sources[rec.nr_sources++] = s;
	return s;
}

static struct source *source_of_pid(pid_t pid)
{
	for (unsigned int i = 0; i < rec.nr_sources; i++)
		if (rec.sources[i]->pid == pid && !rec.sources[i]->ended)
			return rec.sources[i];
	return NULL;
}

static bool source_has_event(const struct source *s, unsigned int id)
{
	for (unsigned int i = 0; i < s->nr_events; i++)
		if (s->events[i].id == id)
			return true;
	return false;
}

/* Keep @format as the format of event @id (of @system) of @s. */
static void source_keep_format(struct source *s, unsigned int id, const char *system,
			       const char *format)
{
	struct usertp_merge_event *ev = realloc(s->events, (s->nr_events + 1) * sizeof(*ev));

	if (!ev)
		return;
	meta_check(usertp_spool_meta_event(rec.meta_fd, s->index, id, system, format));
	s->events = ev;
	ev[s->nr_events++] = (struct usertp_merge_event){ id, strdup(system), strdup(format) };
}

/* Take the format of "sys:event" (id @id) through @sock, if we record it. */
static void source_add_format(struct source *s, int sock, unsigned int id, const char *line)
{
	char req[600], system[256], *reply = NULL;
	const char *name;

	names_add(line, strlen(line));
	if (source_has_event(s, id) || !split_event(line, system, sizeof(system), &name) ||
	    !spec_selects(system, name))
		return;
	snprintf(req, sizeof(req), "format %s", line);
	if (!usertp_client_call(sock, req, &reply, NULL, CALL_TIMEOUT_MS))
		source_keep_format(s, id, system, usertp_client_body(reply));
	free(reply);
}

/* Learn the formats of the events @listing ("id sys:event" lines) names, through @sock. */
static void source_add_formats(struct source *s, int sock, const char *listing)
{
	const char *p;

	for (p = listing; *p; p += strcspn(p, "\n"), p += *p == '\n') {
		char line[512];
		unsigned int id;
		int used = 0;

		if (sscanf(p, "%u %n", &id, &used) != 1 || !used)
			continue;
		snprintf(line, sizeof(line), "%.*s", (int)strcspn(p + used, "\n"), p + used);
		source_add_format(s, sock, id, line);
	}
}

/* Connect to the source's endpoint if we are not yet; false if it cannot be reached. */
static bool source_query(struct source *s)
{
	struct usertp_program prog;

	if (s->query >= 0)
		return true;
	if (usertp_client_find(s->pid, &prog))
		return false;
	s->query = usertp_client_connect(&prog);
	return s->query >= 0;
}

/*
 * Ask through @sock for the events (@listing: "ids" for all of them, "enabled" for those of the
 * session), the formats of new ones we record, and the names of the threads.
 */
static void source_learn(struct source *s, int sock, const char *listing)
{
	char *reply = NULL;

	if (!usertp_client_call(sock, listing, &reply, NULL, CALL_TIMEOUT_MS))
		source_add_formats(s, sock, usertp_client_body(reply));
	free(reply);
	reply = NULL;
	if (!usertp_client_call(sock, "comms", &reply, NULL, CALL_TIMEOUT_MS) &&
	    *usertp_client_body(reply))
		source_keep_comms(s, usertp_client_body(reply));
	free(reply);
}

/* Everything it can tell still, at the end (while it runs, events come unasked). */
static void source_refresh(struct source *s)
{
	if (s->comms_asked) {
		/* A reply of the loop's on the way: not to be taken for ours. */
		close(s->query);
		s->query = -1;
		s->comms_asked = false;
	}
	if (s->ended || !source_query(s))
		return;
	source_learn(s, s->query, "ids");
}

/*
 * The names of its threads, while it runs (a program killed cannot say them at its exit):
 * asked without waiting, the reply read by the loop (source_comms_reply()), so that a
 * program slow to answer never holds up the reading of the buffers.
 */
static void source_ask_comms(struct source *s)
{
	if (s->ended || s->comms_asked || !source_query(s))
		return;
	s->comms_asked = !usertp_ctl_send(s->query, "comms", 5, -1);
	if (!s->comms_asked) {
		close(s->query);
		s->query = -1;
	}
}

static void source_comms_reply(struct source *s)
{
	static char reply[USERTP_CTL_MAX_MSG + 1];
	long n = usertp_ctl_recv(s->query, reply, sizeof(reply), NULL, CALL_TIMEOUT_MS);

	s->comms_asked = false;
	if (n <= 0) {
		close(s->query);
		s->query = -1;
		return;
	}
	if (!strncmp(reply, "ok\n", 3) && reply[3])
		source_keep_comms(s, reply + 3);
}

/* The start request for a session of ours. */
static void start_request(char *buf, size_t size)
{
	size_t len = (size_t)snprintf(buf, size, "start kb=%lu overwrite=%d clock=%s recorder=%s events=",
				      rec.kb, rec.overwrite, rec.tsc ? "x86-tsc" : "mono",
				      rec.sock_path);

	for (unsigned int i = 0; i < rec.nr_specs && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? "," : "", rec.specs[i]);
}

/* Start a session on @sock; the region comes back.  Return: 0 or a negative errno. */
static int session_start(struct source *s, int sock)
{
	char req[8192], *reply = NULL, err[256];
	uint64_t size = 0;
	int fd = -1, ret;

	start_request(req, sizeof(req));
	/* With our eventfd: the program wakes us when its buffers fill (ring-buffer.h). */
	ret = usertp_client_call_fd(sock, req, rec.overwrite ? -1 : rec.wake_fd, &reply, &fd,
				    CALL_TIMEOUT_MS);
	if (ret == -EREMOTEIO)
		fail("%s: %s", s->name, usertp_client_error_text(reply, err, sizeof(err)));
	if (!ret && (fd < 0 || !(size = msg_number(reply, "size", MAX_REGION))))
		ret = -EPROTO;
	if (!ret)
		ret = source_map(s, fd, size);
	if (!ret)
		source_add_formats(s, sock, usertp_client_body(reply));
	else if (ret != -EREMOTEIO)
		fail("%s: cannot start recording it: %s", s->name, strerror(-ret));
	if (fd >= 0)
		close(fd);
	free(reply);
	s->session = ret ? -1 : sock;
	return ret;
}

/* -P PID, and each running program under -a. */
static int attach(pid_t pid, bool quiet_if_gone)
{
	struct usertp_program prog;
	struct source *s;
	char *reply = NULL;
	int sock, ret;

	ret = usertp_client_find(pid, &prog);
	if (ret) {
		if (!quiet_if_gone)
			fail("process %d: %s", (int)pid, usertp_client_find_error(ret));
		return ret;
	}
	sock = usertp_client_connect(&prog);
	if (sock < 0)
		return sock;
	/* Another user's program refuses us on its first answer. */
	ret = usertp_client_call(sock, "hello", &reply, NULL, CALL_TIMEOUT_MS);
	if (ret) {
		char err[256];

		if (!quiet_if_gone)
			fail("process %d: %s", (int)pid,
			     ret == -EREMOTEIO ? usertp_client_error_text(reply, err, sizeof(err))
					       : strerror(-ret));
		free(reply);
		close(sock);
		return ret;
	}
	free(reply);
	s = source_new(pid, prog.comm);
	if (!s) {
		close(sock);
		return -ENOMEM;
	}
	ret = session_start(s, sock);
	if (ret) {
		close(sock);
		s->ended = true;
		return ret;
	}
	return 0;
}

/* Under -P: every spec must match an event of one of the programs. */
static bool check_running(const pid_t *pids, unsigned int n)
{
	size_t len = 0;
	char *all = NULL, who[64];
	bool ok;

	for (unsigned int i = 0; i < n; i++) {
		struct usertp_program prog;
		char *reply = NULL;
		int sock;

		if (usertp_client_find(pids[i], &prog) || (sock = usertp_client_connect(&prog)) < 0)
			continue;
		if (!usertp_client_call(sock, "events", &reply, NULL, CALL_TIMEOUT_MS)) {
			const char *body = usertp_client_body(reply);
			char *p = realloc(all, len + strlen(body) + 1);

			if (p) {
				all = p;
				strcpy(all + len, body);
				len += strlen(body);
			}
		}
		free(reply);
		close(sock);
	}
	if (!all)
		return true; /* nobody answered: the attach says why */
	snprintf(who, sizeof(who), n == 1 ? "process %d" : "the programs given", (int)pids[0]);
	ok = specs_check(all, "", who);
	free(all);
	return ok;
}

static void source_finish(struct source *s);

/* --- our socket: joins, forked children ------------------------------------------- */

static int listen_open(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[PATH_MAX];
	int ret = usertp_client_dir(dir, sizeof(dir), true);

	if (ret)
		return ret;
	usertp_client_remove_stale();
	if ((size_t)snprintf(rec.sock_path, sizeof(rec.sock_path), "%s/record-%d.sock", dir,
			     (int)getpid()) >= sizeof(rec.sock_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, rec.sock_path);
	rec.listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (rec.listen_fd < 0)
		return -errno;
	unlink(sa.sun_path);
	if (bind(rec.listen_fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(sa.sun_path, 0600) ||
	    listen(rec.listen_fd, 64))
		return -errno;
	if (!rec.all)
		return 0;
	/* Programs that start look for this name. */
	if ((size_t)snprintf(rec.all_path, sizeof(rec.all_path), "%.*s/%s", (int)sizeof(rec.all_path), dir,
			     USERTP_CTL_RECORD_ALL) >= sizeof(rec.all_path))
		return -ENAMETOOLONG;
	if (!access(rec.all_path, F_OK)) {
		int other = usertp_ctl_connect(rec.all_path);

		if (other >= 0) {
			close(other);
			rec.all_path[0] = 0;
			fail("another 'usertp record -a' is running");
			return -EBUSY;
		}
		unlink(rec.all_path); /* left by one that died */
	}
	if (symlink(rec.sock_path, rec.all_path)) {
		rec.all_path[0] = 0;
		return -errno;
	}
	return 0;
}

/* A program joined (USERTP_SESSION or -a): start its session, let it run. */
static void on_join(int sock, const char *msg)
{
	char comm[17] = "";
	struct source *s;
	pid_t pid = (pid_t)msg_number(msg, "pid", INT32_MAX);

	usertp_ctl_arg(msg, "comm", comm, sizeof(comm));
	/*
	 * A process we record already joins again when it has exec'd a program (its old image
	 * and session are gone, whether or not we have seen that session's end yet).
	 */
	s = pid > 0 ? source_of_pid(pid) : NULL;
	if (s) {
		if (s->session >= 0)
			close(s->session);
		s->session = -1;
		source_finish(s);
	}
	if (pid <= 0 || !(s = source_new(pid, comm))) {
		close(sock); /* nonsense: it runs untraced */
		return;
	}
	if (session_start(s, sock)) {
		close(sock);
		s->ended = true;
		rec.untraced++;
		return;
	}
	/* The names of all its events so far (for the checks of -e), then it may go on. */
	source_learn(s, sock, "ids");
	if (usertp_ctl_sendf(sock, -1, "run")) {
		close(sock);
		s->session = -1;
		source_finish(s);
	}
}

/* A traced program forked: the child's new region. */
static void on_fork(int sock, const char *msg, int fd)
{
	struct source *s, *parent;
	pid_t pid = (pid_t)msg_number(msg, "pid", INT32_MAX);

	parent = source_of_pid((pid_t)msg_number(msg, "ppid", INT32_MAX));
	s = pid > 0 && fd >= 0 ? source_new(pid, parent ? parent->comm : NULL) : NULL;
	if (s)
		s->forked_from = parent;
	if (!s || source_map(s, fd, msg_number(msg, "size", MAX_REGION))) {
		if (s)
			s->ended = true;
		close(sock);
		return;
	}
	/*
	 * Same program image: the parent's events, with the same ids (those we hear of from the
	 * parent later too: they are taken at the end, source_inherit_events()).
	 */
	s->session = sock;
}

static void accept_one(void)
{
	static char msg[65536];
	int sock = accept4(rec.listen_fd, NULL, NULL, SOCK_CLOEXEC), fd = -1;
	uid_t uid;
	long n;

	if (sock < 0)
		return;
	if (!usertp_ctl_peer_allowed(sock, &uid)) {
		close(sock);
		return;
	}
	n = usertp_ctl_recv(sock, msg, sizeof(msg), &fd, CALL_TIMEOUT_MS);
	if (n > 0 && !strncmp(msg, "join ", 5))
		on_join(sock, msg);
	else if (n > 0 && !strncmp(msg, "fork ", 5))
		on_fork(sock, msg, fd);
	else
		close(sock);
	if (fd >= 0)
		close(fd);
}

/*
 * What a program told us on its session connection unasked: "events" (new events: their
 * names), "format" (the format of a new event we record; before any of it can fire) or
 * "exit" (the names of its threads).  False: the session is over.
 */
static bool session_message(struct source *s)
{
	static char msg[USERTP_CTL_MAX_MSG + 1];
	long n = usertp_ctl_recv(s->session, msg, sizeof(msg), NULL, CALL_TIMEOUT_MS);
	const char *body = usertp_client_body(msg);

	if (n <= 0)
		return false;
	if (!strncmp(msg, "exit\n", 5)) {
		source_keep_comms(s, body);
	} else if (!strncmp(msg, "events\n", 7)) {
		for (const char *p = body; *p; p += strcspn(p, "\n"), p += *p == '\n') {
			const char *sp = memchr(p, ' ', strcspn(p, "\n"));

			if (sp)
				names_add(sp + 1, strcspn(sp + 1, "\n"));
		}
	} else if (!strncmp(msg, "format ", 7)) {
		char line[512], system[256];
		const char *name;
		uint64_t id = msg_number(msg, "id", 65535);

		if (!usertp_ctl_arg(msg, "name", line, sizeof(line)) ||
		    !split_event(line, system, sizeof(system), &name))
			return true;
		names_add(line, strlen(line));
		if (id && !source_has_event(s, (unsigned int)id) && spec_selects(system, name))
			source_keep_format(s, (unsigned int)id, system, body);
	}
	return true;
}

/* --- reading the buffers ------------------------------------------------------------------ */

static int spool_page(const struct usertp_rb_page_copy *page, uint64_t events, void *arg)
{
	struct spool *sp = arg;
	uint64_t before = sp->out->pos;

	/*
	 * A full page has no room after its entries for the count of the events lost before it:
	 * the count then goes on an empty page of its own just before it, which the merge marks
	 * before the next event, so that the file says how many were lost there.
	 */
	if (page->lost_before && page->used + 8 > USERTP_RB_PAGE_DATA) {
		usertp__dat_put_page(sp->out, page->data, 0, page->lost_before);
		usertp__dat_put_page(sp->out, page->data, page->used, 0);
	} else {
		usertp__dat_put_page(sp->out, page->data, page->used, page->lost_before);
	}
	if (sp->out->error)
		return -sp->out->error; /* not consumed: the page stays, and is counted there */
	rec.events += events;
	rec.read[sp->cpu] += events;
	sp->pages++;
	rec.spool_bytes += sp->out->pos - before;
	return 0;
}

/*
 * A spool could not be written (a full disk...): reading stops, and what the spools hold is
 * merged into the output, which takes the space the spools give back as they are read.
 * Under -- CMD the command runs on to its end (its status is passed on): what its programs
 * fire meanwhile is dropped by their buffers, and counted.  Otherwise recording stops.
 */
static void spool_failed(int err)
{
	if (rec.spool_error)
		return;
	rec.spool_error = err;
	if (!rec.cmd)
		rec.stop = true;
	fail("writing the spool in %s: %s; %s", rec.spool_dir, strerror(-err),
	     rec.cmd ? "events are no longer read (they are counted lost) until the command ends"
		     : "recording stops");
}

/* Copy the complete pages the source's writers left since last time. */
static void source_consume(struct source *s)
{
	uint64_t n;

	if (!s->view || s->ended || rec.overwrite || rec.spool_error)
		return;
	for (unsigned int cpu = 0; cpu < s->view->nr_cpus; cpu++) {
		int ret = usertp_rb_consume(s->view, cpu, spool_page, &s->spools[cpu], &n);

		if (ret == -EINVAL) {
			fail("%s: its buffer does not hold together; reading it stops", s->name);
			s->ended = true;
			return;
		}
		if (ret)
			spool_failed(ret);
		/* On disk after each round: a recorder killed now leaves them recoverable. */
		if (n) {
			usertp__dat_flush(s->spools[cpu].out);
			if (s->spools[cpu].out->error)
				spool_failed(-s->spools[cpu].out->error);
		}
	}
}

/* The rest: the page being written, or with --overwrite everything still there. */
static void source_finish(struct source *s)
{
	struct usertp_rb_snapshot snap;

	if (!s->view || s->ended)
		return;
	source_consume(s);
	if (usertp_rb_snapshot(s->map, s->size, &snap) == 0) {
		for (unsigned int cpu = 0; cpu < snap.nr_cpus && cpu < s->view->nr_cpus; cpu++) {
			const struct usertp_rb_cpu_snapshot *c = &snap.cpus[cpu];

			for (unsigned int p = 0; p < c->nr_pages; p++) {
				struct usertp_rb_page_copy page = c->pages[p];

				/* Overwritten events were before the oldest page kept. */
				if (p == 0 && rec.overwrite)
					page.lost_before += c->overrun;
				if ((page.used || page.lost_before) &&
				    spool_page(&page, 0, &s->spools[cpu]))
					spool_failed(-s->spools[cpu].out->error);
			}
			rec.events += c->entries;
			rec.read[cpu] += c->entries;
			rec.dropped[cpu] += c->dropped;
			/* (Without --overwrite, "overrun" are the pages we consumed.) */
			rec.overrun[cpu] += rec.overwrite ? c->overrun : 0;
		}
		usertp_rb_snapshot_free(&snap);
	}
	s->ended = true;
}

/* --- status ------------------------------------------------------------------------------- */

static double elapsed(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - rec.start.tv_sec) + (double)(now.tv_nsec - rec.start.tv_nsec) / 1e9;
}

/* Events the programs dropped so far (their buffers were full), by the buffers' counters. */
static uint64_t dropped_so_far(void)
{
	uint64_t lost = 0;

	for (unsigned int i = 0; i < rec.nr_sources; i++) {
		const struct source *s = rec.sources[i];

		for (unsigned int cpu = 0; s->view && cpu < s->view->nr_cpus; cpu++) {
			const struct usertp_rb_cpu *c =
				(const void *)((const char *)s->map + s->view->cpu_offset[cpu]);

			lost += __atomic_load_n(&c->dropped, __ATOMIC_RELAXED);
		}
	}
	return lost;
}

/*
 * The status line lives on the terminal's last row, kept out of the scrolling region, so
 * that what the programs print (on the same terminal) never runs into it: the region is set
 * to the rows above it at the start and given back at the end.  Without the terminal's size,
 * each status is a line of its own.
 */
static void status_line(bool final)
{
	static unsigned short rows;
	unsigned int live = 0;
	char text[256];
	struct winsize ws;

	for (unsigned int i = 0; i < rec.nr_sources; i++)
		live += !rec.sources[i]->ended;
	snprintf(text, sizeof(text), "usertp record: %.0fs  %u program%s  %llu events  %.1f MB  %llu lost",
		 elapsed(), live, live == 1 ? "" : "s", (unsigned long long)rec.events,
		 (double)rec.spool_bytes / 1e6, (unsigned long long)dropped_so_far());
	if (!rows && !ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) && ws.ws_row > 2) {
		rows = ws.ws_row;
		/* Room for it below the cursor, then the scrolling region above it. */
		fprintf(stderr, "\n\0337\033[1;%ur\0338\033[1A", rows - 1u);
	}
	if (!rows) {
		/* A terminal of no known size: whole lines, that nothing can run into. */
		fprintf(stderr, "%s\n", text);
	} else if (!final) {
		fprintf(stderr, "\0337\033[%u;1H\033[K%s\0338", (unsigned int)rows, text);
	} else {
		/* The whole screen scrolls again; the last status stays, on its own line. */
		fprintf(stderr, "\0337\033[r\033[%u;1H\033[K\0338%s\n", (unsigned int)rows, text);
		rows = 0;
	}
	fflush(stderr);
}

/* --- the run ------------------------------------------------------------------------------ */

static int signals_open(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	rec.sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return rec.sig_fd < 0 ? -errno : 0;
}

static void on_signals(void)
{
	struct signalfd_siginfo si;

	while (read(rec.sig_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo != SIGCHLD) {
			rec.stop = true;
			continue;
		}
		if (rec.child > 0 && !rec.child_done) {
			int status;

			if (waitpid(rec.child, &status, WNOHANG) == rec.child) {
				rec.child_done = true;
				rec.child_status = status;
			}
		}
	}
}

/*
 * Reading must keep up with bursts on a busy machine: the recorder takes a higher priority
 * (nice -10) where it may (root, or RLIMIT_NICE); the command it starts keeps its own.
 */
static void raise_priority(void)
{
	errno = 0;
	rec.nice = getpriority(PRIO_PROCESS, 0);
	if (errno || rec.nice <= RECORDER_NICE)
		return;
	if (setpriority(PRIO_PROCESS, 0, RECORDER_NICE))
		return; /* not allowed: as it was */
}

static int run_command(void)
{
	sigset_t empty;

	rec.child = fork();
	if (rec.child < 0)
		return -errno;
	if (rec.child == 0) {
		sigemptyset(&empty);
		sigprocmask(SIG_SETMASK, &empty, NULL);
		setpriority(PRIO_PROCESS, 0, rec.nice); /* the command's own */
		setenv("USERTP_SESSION", rec.sock_path, 1);
		execvp(rec.cmd[0], rec.cmd);
		fprintf(stderr, "usertp record: cannot run %s: %s\n", rec.cmd[0], strerror(errno));
		_exit(127);
	}
	return 0;
}

static void loop(void)
{
	double last_status = 0, last_refresh = 0;
	bool tty = isatty(STDERR_FILENO) && !rec.quiet;

	while (!rec.stop) {
		struct pollfd pfd[3 + 2048];
		struct source *polled[2048];
		unsigned int n = 3, live = 0;

		pfd[0] = (struct pollfd){ rec.listen_fd, POLLIN, 0 };
		pfd[1] = (struct pollfd){ rec.sig_fd, POLLIN, 0 };
		pfd[2] = (struct pollfd){ rec.wake_fd, POLLIN, 0 };
		for (unsigned int i = 0; i < rec.nr_sources && n < 3 + 2048 - 1; i++) {
			struct source *s = rec.sources[i];

			if (s->comms_asked) {
				polled[n - 3] = s;
				pfd[n++] = (struct pollfd){ s->query, POLLIN, 0 };
			}
			if (s->ended || s->session < 0)
				continue;
			live++;
			polled[n - 3] = s;
			pfd[n++] = (struct pollfd){ s->session, POLLIN, 0 };
			/* Past the watermark, the writers wake us rather than wait for the poll. */
			if (s->view && !rec.overwrite && !rec.spool_error)
				usertp_rb_wait_request(s->view);
		}
		poll(pfd, n, (int)(rec.interval_us / 1000) ? (int)(rec.interval_us / 1000) : 1);
		if (pfd[1].revents)
			on_signals();
		if (pfd[2].revents) {
			uint64_t count;

			(void)!read(rec.wake_fd, &count, sizeof(count));
		}
		if (pfd[0].revents)
			accept_one();
		for (unsigned int i = 3; i < n; i++) {
			struct source *s = polled[i - 3];

			if (pfd[i].fd == s->query) {
				if (pfd[i].revents && s->comms_asked)
					source_comms_reply(s);
				continue;
			}
			/* (A join may have ended it meanwhile: a program that exec'd.) */
			if (s->ended || s->session < 0 || pfd[i].fd != s->session)
				continue;
			if (pfd[i].revents && !session_message(s)) {
				/* Gone: what it committed is still in our mapping. */
				close(s->session);
				s->session = -1;
				source_finish(s);
			}
		}
		for (unsigned int i = 0; i < rec.nr_sources; i++)
			source_consume(rec.sources[i]);
		if (elapsed() - last_refresh >= 1.0) {
			last_refresh = elapsed();
			for (unsigned int i = 0; i < rec.nr_sources; i++)
				source_ask_comms(rec.sources[i]);
		}
		if (tty && elapsed() - last_status >= 1.0) {
			last_status = elapsed();
			status_line(false);
		}
		/* The end of CMD ends the recording; with -P, the end of every program. */
		if (rec.child > 0 && rec.child_done)
			rec.stop = true;
		if (rec.nr_pids && !rec.child && !rec.all && !live && rec.nr_sources)
			rec.stop = true;
	}
	if (tty)
		status_line(true);
}

/* --- the end: one trace.dat --------------------------------------------------------------- */

/* Has @comms ("tid comm" lines) a line for @tid? */
static bool names_tid(const char *comms, pid_t tid)
{
	for (const char *p = comms; p && *p; p += strcspn(p, "\n"), p += *p == '\n')
		if (atoi(p) == tid)
			return true;
	return false;
}

static char *all_cmdlines(size_t *len)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	if (!f)
		return NULL;
	for (unsigned int i = 0; i < rec.nr_sources; i++) {
		const struct source *s = rec.sources[i];

		/* The process itself, unless its main thread is among those that recorded. */
		if (!names_tid(s->comms, s->pid))
			fprintf(f, "%d %s\n", (int)s->pid, s->comm[0] ? s->comm : "<...>");
		if (s->comms)
			fputs(s->comms, f);
	}
	fclose(f);
	*len = size;
	return text;
}

/*
 * Keep some disk space for the end: if the spools fill the disk, the output's header and first
 * pages go there, and the rest into the space the spools give back as the merge reads them.
 */
#define RESERVE_BYTES (512u * 1024)

static void reserve_space(void)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/reserve", rec.spool_dir);
	rec.reserve_fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (rec.reserve_fd >= 0 && fallocate(rec.reserve_fd, 0, 0, RESERVE_BYTES)) {
		close(rec.reserve_fd); /* a file system too small, or without fallocate: no reserve */
		rec.reserve_fd = -1;
	}
}

static void release_reserve(void)
{
	if (rec.reserve_fd < 0)
		return;
	if (ftruncate(rec.reserve_fd, 0)) {
		/* nothing to do: the space comes back when the spool directory goes */
	}
	close(rec.reserve_fd);
	rec.reserve_fd = -1;
}

/* A forked child runs its parent's image: it has the events the parent told us of. */
static void source_inherit_events(struct source *s)
{
	const struct source *parent = s->forked_from;

	for (unsigned int i = 0; parent && i < parent->nr_events; i++)
		if (!source_has_event(s, parent->events[i].id))
			source_keep_format(s, parent->events[i].id, parent->events[i].system,
					   parent->events[i].format);
}

static int write_output(void)
{
	struct usertp_merge_source *ms = calloc(rec.nr_sources + 1, sizeof(*ms));
	struct usertp_merge_stats *stats = calloc(1, sizeof(*stats));
	struct usertp_merge_input in = { 0 };
	int **fds = calloc(rec.nr_sources + 1, sizeof(*fds));
	char err[512] = "", *cmdlines;
	uint64_t total = 0, lost = 0, *fired = calloc(USERTP_MERGE_MAX_CPUS, sizeof(*fired));
	int fd, ret;

	if (!ms || !stats || !fds || !fired)
		return -ENOMEM;
	for (unsigned int i = 0; i < rec.nr_sources; i++) {
		struct source *s = rec.sources[i];

		/* (Sources come in order: a parent has inherited its own before.) */
		source_inherit_events(s);
		ms[i].name = s->name;
		ms[i].events = s->events;
		ms[i].nr_events = s->nr_events;
		if (!s->nr_spools)
			continue;
		fds[i] = calloc(s->nr_spools, sizeof(int));
		if (!fds[i])
			return -ENOMEM;
		for (unsigned int cpu = 0; cpu < s->nr_spools; cpu++) {
			if (s->spools[cpu].out)
				usertp__dat_flush(s->spools[cpu].out);
			fds[i][cpu] = s->spools[cpu].fd;
		}
		ms[i].nr_cpus = s->nr_spools;
		ms[i].cpu_fd = fds[i];
	}
	in.sources = ms;
	in.nr_sources = rec.nr_sources;
	in.nr_cpus = rec.nr_cpus ? rec.nr_cpus : (unsigned int)get_nprocs_conf();
	in.raw_clock = rec.tsc;
	in.release_spools = true; /* they are deleted afterwards anyway */
	for (unsigned int cpu = 0; cpu < in.nr_cpus; cpu++)
		fired[cpu] = rec.read[cpu] + rec.dropped[cpu] + rec.overrun[cpu];
	/* (A recovered spool has no counts: what its recorder read last died with it.) */
	in.fired = rec.recover ? NULL : fired;
	in.overrun = rec.overrun;
	release_reserve();
	cmdlines = all_cmdlines(&in.cmdlines_len);
	in.cmdlines = cmdlines ? cmdlines : "";
	if (!cmdlines)
		in.cmdlines_len = 0;
	fd = open(rec.output, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
		fail("cannot write %s: %s", rec.output, strerror(errno));
	} else {
		ret = usertp_merge_write(fd, &in, stats, err, sizeof(err));
		if (close(fd) && !ret) {
			ret = -errno;
			snprintf(err, sizeof(err), "close: %s", strerror(errno));
		}
		if (ret)
			fail("%s: %s", rec.output, err);
	}
	/*
	 * Lost: everything fired that is not in the file, as its CPUSTAT options say (the file
	 * marks only losses that have an event after them).
	 */
	for (unsigned int cpu = 0; cpu < in.nr_cpus; cpu++) {
		uint64_t cpu_lost = rec.recover ? stats->lost[cpu]
				    : fired[cpu] > stats->events[cpu] ? fired[cpu] - stats->events[cpu] : 0;

		if (!rec.quiet)
			fprintf(stderr, "  CPU %u: %llu events, %llu lost\n", cpu,
				(unsigned long long)stats->events[cpu], (unsigned long long)cpu_lost);
		total += stats->events[cpu];
		lost += cpu_lost;
	}
	/* -q: no status line, no summary (as trace-cmd record -q); errors and warnings stay. */
	if (!rec.quiet)
		fprintf(stderr, "usertp record: %u program%s, %llu events, %llu lost%s, %s: %.1f MB\n",
			rec.nr_sources, rec.nr_sources == 1 ? "" : "s", (unsigned long long)total,
			(unsigned long long)lost, rec.recover ? " at least (as marked in the pages)" : "",
			rec.output, (double)stats->size / 1e6);
	for (unsigned int i = 0; i < rec.nr_sources; i++)
		free(fds[i]);
	free(fds);
	free(fired);
	free(cmdlines);
	free(stats);
	free(ms);
	return ret;
}

static void cleanup(void)
{
	for (unsigned int i = 0; i < rec.nr_sources; i++) {
		struct source *s = rec.sources[i];

		if (s->session >= 0)
			close(s->session);
		if (s->query >= 0)
			close(s->query);
		for (unsigned int cpu = 0; s->spools && cpu < s->nr_spools; cpu++) {
			if (s->spools[cpu].fd >= 0)
				close(s->spools[cpu].fd);
			free(s->spools[cpu].out);
		}
		if (s->map)
			munmap(s->map, s->size);
		for (unsigned int e = 0; e < s->nr_events; e++) {
			free((char *)s->events[e].system);
			free((char *)s->events[e].format);
		}
		free(s->events);
		free(s->spools);
		free(s->view);
		free(s->comms);
		free(s);
	}
	free(rec.sources);
	free(names.text);
	if (rec.wake_fd >= 0)
		close(rec.wake_fd);
	if (rec.meta_fd >= 0)
		close(rec.meta_fd);
	if (rec.all_path[0])
		unlink(rec.all_path);
	if (rec.sock_path[0])
		unlink(rec.sock_path);
	if (rec.spool_dir[0]) {
		DIR *d = opendir(rec.spool_dir);
		struct dirent *de;

		while (d && (de = readdir(d)))
			if (de->d_name[0] != '.')
				unlinkat(dirfd(d), de->d_name, 0);
		if (d)
			closedir(d);
		rmdir(rec.spool_dir);
	}
}

/* --- options ------------------------------------------------------------------------------ */

static bool parse_options(int argc, char **argv)
{
	enum { OPT_OVERWRITE = 256, OPT_RECOVER };
	static const struct option longopts[] = {
		{ "overwrite", no_argument, NULL, OPT_OVERWRITE },
		{ "recover", required_argument, NULL, OPT_RECOVER },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	uint64_t value;
	int opt;

	while ((opt = getopt_long(argc, argv, "+e:o:b:P:aqC:s:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'e':
			for (char *tok = strtok(optarg, ","); tok; tok = strtok(NULL, ",")) {
				/* trace-cmd's "all": every event. */
				if (!strcmp(tok, "all"))
					tok = (char *)"*:*";
				if (usertp__spec_check(tok + (tok[0] == '!'), USERTP__SPEC_GLOB)) {
					fail("-e %s: not an event spec (sys:event, sys:*, *:event, event, "
					     "globs such as sys:io_*, all)", tok);
					return false;
				}
				if (rec.nr_specs == MAX_SPECS) {
					fail("too many -e");
					return false;
				}
				rec.specs[rec.nr_specs++] = tok;
			}
			break;
		case 'o':
			rec.output = optarg;
			rec.output_given = true;
			break;
		case 'b':
			if (usertp__parse_u64(optarg, 1, USERTP_RB_MAX_KB, &value)) {
				fail("-b %s: not a buffer size in KiB from 1 to %u", optarg,
				     USERTP_RB_MAX_KB);
				return false;
			}
			rec.kb = (unsigned long)value;
			break;
		case 'P': {
			pid_t *p;

			if (usertp__parse_u64(optarg, 1, INT32_MAX, &value)) {
				fail("-P %s: not a process id", optarg);
				return false;
			}
			p = realloc(rec.pids, (rec.nr_pids + 1) * sizeof(*p));
			if (!p)
				return false;
			rec.pids = p;
			rec.pids[rec.nr_pids++] = (pid_t)value;
			break;
		}
		case 'a':
			rec.all = true;
			break;
		case 'q':
			rec.quiet = true;
			break;
		case 'C':
			if (!strcmp(optarg, "x86-tsc")) {
				rec.tsc = true;
			} else if (strcmp(optarg, "mono")) {
				fail("-C %s: the clock is mono or x86-tsc", optarg);
				return false;
			}
			break;
		case 's':
			if (usertp__parse_u64(optarg, 1, 10000000, &value)) {
				fail("-s %s: not a number of microseconds from 1 to 10000000", optarg);
				return false;
			}
			rec.interval_us = (unsigned int)value;
			break;
		case OPT_OVERWRITE:
			rec.overwrite = true;
			break;
		case OPT_RECOVER:
			rec.recover = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		default:
			usertp_tool_bad_option("record", "+e:o:b:P:aqC:s:h", argv);
			return false;
		}
	}
	if (optind < argc)
		rec.cmd = argv + optind;
	if (rec.recover) {
		if (rec.nr_specs || rec.cmd || rec.nr_pids || rec.all) {
			fail("--recover DIR takes only -o FILE");
			return false;
		}
		return true;
	}
	if (!rec.nr_specs) {
		fail("no events: give at least one -e SPEC");
		return false;
	}
	if (!!rec.cmd + !!rec.nr_pids + rec.all != 1) {
		fail("say what to record: -P PID..., -a, or -- CMD (one of them)");
		return false;
	}
	{
		char why[160];

		if (usertp_rb_size_check((unsigned int)get_nprocs_conf(), rec.kb, why, sizeof(why))) {
			fail("-b %lu: %s", rec.kb, why);
			return false;
		}
	}
	return true;
}

/*
 * -o FILE: a trace.dat is written with seeks (its CPU table and counts go in place at the
 * end), next to a spool directory: a regular file, or none yet, in a directory we can write.
 */
static bool output_usable(void)
{
	struct stat st;
	int fd = open(rec.output, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0) {
		fail("cannot write %s: %s", rec.output, strerror(errno));
		return false;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || lseek(fd, 0, SEEK_SET) < 0) {
		close(fd);
		fail("-o %s: not a regular file; a trace.dat is written with seeks (write a file, "
		     "then copy it where it should go)", rec.output);
		return false;
	}
	close(fd);
	return true;
}

/*
 * --recover DIR: the spool of a recorder that was killed, merged into a trace.dat (the output
 * it was recording to, or -o), and removed once that is written.
 */
static int recover_spool(void)
{
	struct usertp_spool_meta meta;
	char err[512];
	bool output_given = rec.output_given;
	int ret;

	ret = usertp_spool_meta_read(rec.recover, &meta, err, sizeof(err));
	if (ret) {
		fail("--recover %s: %s", rec.recover, err);
		return 1;
	}
	static char output[sizeof(meta.output)];

	if (!output_given) {
		memcpy(output, meta.output, sizeof(output));
		rec.output = output;
	}
	rec.tsc = meta.tsc;
	rec.nr_cpus = meta.nr_cpus;
	if (!output_usable()) {
		usertp_spool_meta_free(&meta);
		return 1;
	}
	for (unsigned int i = 0; i < meta.nr_sources && !ret; i++) {
		struct usertp_spool_source *ms = &meta.sources[i];
		struct source *s = source_new(ms->pid, ms->comm);

		if (!s || !(s->spools = calloc(meta.nr_cpus, sizeof(*s->spools)))) {
			ret = -ENOMEM;
			break;
		}
		s->ended = true;
		s->nr_spools = meta.nr_cpus;
		s->forked_from = ms->forked_from >= 0 ? rec.sources[ms->forked_from] : NULL;
		/* The source takes over the texts. */
		s->events = ms->events;
		s->nr_events = ms->nr_events;
		s->comms = ms->comms;
		ms->events = NULL;
		ms->nr_events = 0;
		ms->comms = NULL;
		for (unsigned int cpu = 0; cpu < meta.nr_cpus; cpu++) {
			char path[PATH_MAX + 64];

			usertp_spool_path(path, sizeof(path), rec.recover, ms->pid, i, cpu);
			s->spools[cpu].cpu = cpu;
			s->spools[cpu].fd = open(path, O_RDONLY | O_CLOEXEC); /* -1: none */
		}
	}
	usertp_spool_meta_free(&meta);
	ret = ret ? ret : write_output();
	if (!ret)
		snprintf(rec.spool_dir, sizeof(rec.spool_dir), "%s", rec.recover);
	cleanup(); /* (removes the spool directory once the file is written) */
	return ret ? 1 : 0;
}

int usertp_cmd_record(int argc, char **argv)
{
	int ret = 0;

	if (!parse_options(argc, argv))
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &rec.start);
	rec.nr_cpus = (unsigned int)get_nprocs_conf();
	if (rec.recover)
		return recover_spool();
	/* The output must be writable, as a trace.dat, before anything starts. */
	if (!output_usable())
		return 1;
	if (rec.nr_pids && !check_running(rec.pids, rec.nr_pids))
		return 1;
	snprintf(rec.spool_dir, sizeof(rec.spool_dir), "%s.spool-XXXXXX", rec.output);
	if (!mkdtemp(rec.spool_dir)) {
		fail("cannot make a spool directory next to %s: %s", rec.output, strerror(errno));
		rec.spool_dir[0] = 0;
		return 1;
	}
	rec.meta_fd = usertp_spool_meta_create(rec.spool_dir, rec.nr_cpus, rec.tsc, rec.output);
	if (rec.meta_fd < 0) {
		fail("cannot write in %s: %s", rec.spool_dir, strerror(-rec.meta_fd));
		cleanup();
		return 1;
	}
	reserve_space();
	ret = signals_open();
	if (!ret)
		ret = listen_open();
	rec.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	raise_priority();
	if (ret) {
		if (ret != -EBUSY)
			fail("cannot listen in the runtime directory: %s", strerror(-ret));
		cleanup();
		return 1;
	}
	/* A program asked for that cannot be recorded makes the run fail (it goes on with the rest). */
	for (unsigned int i = 0; i < rec.nr_pids; i++)
		rec.untraced += attach(rec.pids[i], false) != 0;
	if (rec.all) {
		struct usertp_program *progs;
		int n = usertp_client_programs(&progs);

		for (int i = 0; i < n; i++)
			if (!source_of_pid(progs[i].pid))
				attach(progs[i].pid, true);
		if (n > 0)
			free(progs);
	}
	if (rec.nr_pids && rec.untraced == rec.nr_pids) {
		cleanup();
		return 1;
	}
	if (rec.cmd && run_command()) {
		fail("cannot start %s: %s", rec.cmd[0], strerror(errno));
		cleanup();
		return 1;
	}
	loop();
	/* Programs still running stop recording when their session closes; read what is left. */
	for (unsigned int i = 0; i < rec.nr_sources; i++) {
		struct source *s = rec.sources[i];
		struct pollfd p = { s->session, POLLIN, 0 };

		/* What a program that has ended said last ("exit": its threads' names). */
		while (s->session >= 0 && poll(&p, 1, 0) == 1 && session_message(s))
			;
		source_refresh(s);
		if (rec.sources[i]->session >= 0) {
			close(rec.sources[i]->session);
			rec.sources[i]->session = -1;
		}
		if (!rec.sources[i]->ended)
			source_finish(rec.sources[i]);
	}
	if (rec.cmd && !rec.nr_sources)
		fail("no program of %s joined: not linked with libusertp, or started without the "
		     "USERTP_SESSION variable this command sets", rec.cmd[0]);
	else if (rec.cmd || rec.all)
		specs_check(names.text, "warning: ", "the programs recorded");
	ret = write_output();
	cleanup();
	/* Under -- the command's failure comes first; then ours. */
	if (rec.child > 0 && rec.child_done && WIFEXITED(rec.child_status) &&
	    WEXITSTATUS(rec.child_status))
		return WEXITSTATUS(rec.child_status);
	if (rec.child > 0 && rec.child_done && WIFSIGNALED(rec.child_status))
		return 128 + WTERMSIG(rec.child_status);
	return ret || rec.spool_error || rec.untraced ? 1 : 0;
}
