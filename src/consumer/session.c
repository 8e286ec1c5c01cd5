/* SPDX-License-Identifier: MIT */
/*
 * session.c - libusertp-consumer's sessions: their programs, their settings, what the
 * programs tell them, and the reading of the programs' buffers (session.h has the model,
 * docs/consumer-design.md the design, src/common/ctl-proto.h the protocol).
 *
 * How programs come:
 *   attach_pid	we connect to the program's endpoint and start a session there;
 *   run		the command runs with USERTP_SESSION naming our socket: libusertp joins us
 *		from its constructor, before main(), as do the programs it execs;
 *   attach_all	every program of this user: those running now, and those that start later,
 *		which join through the runtime directory's all.* links;
 *   fork()	children of traced programs announce themselves on our socket ("fork"), with
 *		buffers of their own.
 * As libraries with events load (linked or dlopen()ed), a program tells each session their
 * names and the formats of those it records, before they can fire.
 *
 * Settings go to every program as a "set" request on its session connection, answered once
 * the program applied it; a program that joins or forks later is given them when it comes.
 * A program that does not answer in time, or answers nonsense, is left out of the change and
 * named in the log; one whose connection closes has ended: what it committed is still in our
 * mapping and is read to the end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/un.h>
#include <unistd.h>

#include "proc.h"
#include "client.h"
#include "ctl-proto.h"
#include "number.h"
#include "session.h"
#include "filter.h"
#include "format-field.h"
#include "spec.h"

/* --- errors and the log ------------------------------------------------------------------ */

int usertp__session_fail(struct usertp_session *s, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->error, sizeof(s->error), fmt, ap);
	va_end(ap);
	return err;
}

void usertp__session_log(struct usertp_session *s, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (!s->log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	s->log(line, s->log_arg);
}

const char *usertp_session_error(const struct usertp_session *s)
{
	return s ? s->error : "";
}

void usertp_session_set_log(struct usertp_session *s, void (*fn)(const char *line, void *arg),
			    void *arg)
{
	s->log = fn;
	s->log_arg = arg;
}

/* --- event specs -------------------------------------------------------------------------- */

bool usertp__session_selects(const struct usertp_session *s, const char *system, const char *name)
{
	bool on = false;

	for (unsigned int i = 0; i < s->nr_specs; i++) {
		bool negate = s->specs[i][0] == '!';

		if (usertp__spec_match(s->specs[i] + negate, system, name))
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

/* Keep "sys:event" (@len bytes) among the names the programs told of. */
static void names_add(struct usertp_session *s, const char *line, size_t len)
{
	for (const char *p = s->names.text; p && p < s->names.text + s->names.len;
	     p += strcspn(p, "\n") + 1)
		if (strcspn(p, "\n") == len && !memcmp(p, line, len))
			return;
	if (s->names.len + len + 2 > s->names.cap) {
		size_t cap = s->names.cap ? 2 * s->names.cap : 4096;
		char *p;

		while (cap < s->names.len + len + 2)
			cap *= 2;
		p = realloc(s->names.text, cap);
		if (!p)
			return;
		s->names.text = p;
		s->names.cap = cap;
	}
	memcpy(s->names.text + s->names.len, line, len);
	s->names.len += len;
	s->names.text[s->names.len++] = '\n';
	s->names.text[s->names.len] = 0;
}

int usertp_session_spec_seen(const struct usertp_session *s, const char *spec, char *close,
			     size_t size)
{
	const char *names = s->names.text ? s->names.text : "";

	if (close && size)
		close[0] = 0;
	if (usertp__spec_check(spec, USERTP__SPEC_GLOB))
		return -EINVAL;
	if (usertp__spec_matches_any(spec, names))
		return 1;
	if (close && size)
		usertp__spec_close_matches(spec, names, close, size);
	return 0;
}

/* The specs as one events= value ("a,!b,c"), allocated. */
static char *specs_text(const struct usertp_session *s)
{
	size_t len = 1;
	char *text;

	for (unsigned int i = 0; i < s->nr_specs; i++)
		len += strlen(s->specs[i]) + 1;
	text = malloc(len);
	if (!text)
		return NULL;
	text[0] = 0;
	for (unsigned int i = 0; i < s->nr_specs; i++) {
		if (i)
			strcat(text, ",");
		strcat(text, s->specs[i]);
	}
	return text;
}

/* --- sources ------------------------------------------------------------------------------ */

/* The names of the threads of @src ("tid comm" lines): the latest. */
static void source_keep_comms(struct usertp_session *s, struct usertp__source *src,
			      const char *comms)
{
	if (src->comms && !strcmp(src->comms, comms))
		return;
	free(src->comms);
	src->comms = strdup(comms);
	if (s->dat)
		usertp__writer_comms(s, src);
	if (s->reader)
		usertp__reader_comms(s, comms);
}

/* Map the region @fd of @size bytes and make @src its source.  Return: 0 or a negative errno. */
static int source_map(struct usertp_session *s, struct usertp__source *src, int fd, size_t size)
{
	int ret;

	struct stat st;
	int seals;

	if (!size || size > USERTP__MAX_REGION)
		return -EINVAL;
	/*
	 * Memory another process controls may shrink under a mapping (a read then dies of
	 * SIGBUS): only a region sealed against shrinking, and as large as said, is mapped.
	 */
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK) || fstat(fd, &st) || (uint64_t)st.st_size < size)
		return -EPERM;
	src->map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (src->map == MAP_FAILED) {
		src->map = NULL;
		return -errno;
	}
	src->size = size;
	src->view = malloc(sizeof(*src->view));
	if (!src->view)
		return -ENOMEM;
	ret = usertp__rb_view_init(src->view, src->map, size);
	if (ret)
		return ret;
	if (src->view->nr_cpus > USERTP_MERGE_MAX_CPUS)
		return -EINVAL;
	src->stats = calloc(src->view->nr_cpus, sizeof(*src->stats));
	if (!src->stats)
		return -ENOMEM;
	if (src->view->nr_cpus > s->nr_cpus)
		s->nr_cpus = src->view->nr_cpus;
	return s->dat ? usertp__writer_source(s, src) : usertp__reader_source(s, src);
}

/* Is @pid another user's process, and we root (who records it)? */
static bool another_users_as_root(pid_t pid)
{
	uid_t uid;

	return geteuid() == 0 && !usertp__proc_owner(pid, &uid) && uid != 0;
}

static struct usertp__source *source_new(struct usertp_session *s, pid_t pid, const char *comm)
{
	struct usertp__source *src = calloc(1, sizeof(*src)), **list;

	if (!src)
		return NULL;
	list = realloc(s->sources, (s->nr_sources + 1) * sizeof(*list));
	if (!list) {
		free(src);
		return NULL;
	}
	s->sources = list;
	src->index = s->nr_sources;
	src->pid = pid;
	src->session = src->query = -1;
	src->foreign = another_users_as_root(pid);
	snprintf(src->comm, sizeof(src->comm), "%s", comm ? comm : "");
	snprintf(src->name, sizeof(src->name), "%s[%d]", src->comm[0] ? src->comm : "?", (int)pid);
	s->sources[s->nr_sources++] = src;
	return src;
}

static struct usertp__source *source_of_pid(const struct usertp_session *s, pid_t pid)
{
	for (unsigned int i = 0; i < s->nr_sources; i++)
		if (s->sources[i]->pid == pid && !s->sources[i]->ended)
			return s->sources[i];
	return NULL;
}

static bool source_has_event(const struct usertp__source *src, unsigned int id)
{
	for (unsigned int i = 0; i < src->nr_events; i++)
		if (src->events[i].id == id)
			return true;
	return false;
}

/* Keep @format as the format of event @id (of @system) of @src. */
static void source_keep_format(struct usertp_session *s, struct usertp__source *src,
			       unsigned int id, const char *system, const char *format)
{
	struct usertp__merge_event *ev;
	char why[160];

	/* Another user's program is not trusted: a format is checked before it goes anywhere. */
	if (!usertp__format_check(format, strlen(format), why, sizeof(why))) {
		usertp__session_log(s, "%s: the format of event %u is refused (%s); its records "
				       "come without one", src->name, id, why);
		return;
	}
	ev = realloc(src->events, (src->nr_events + 1) * sizeof(*ev));
	if (!ev)
		return;
	src->events = ev;
	ev[src->nr_events++] = (struct usertp__merge_event){ id, strdup(system), strdup(format) };
	if (s->dat)
		usertp__writer_event(s, src, id, system, format);
	if (s->reader)
		usertp__reader_event(s, src, id, system, format);
}

/* Connect to the source's endpoint if we are not yet; false if it cannot be reached. */
static bool source_query(struct usertp__source *src)
{
	struct usertp__program prog;

	if (src->query >= 0)
		return true;
	if (usertp__client_find_now(src->pid, &prog))
		return false;
	src->query = usertp__client_connect(&prog);
	return src->query >= 0;
}

void usertp__source_inherit(struct usertp_session *s, struct usertp__source *src)
{
	const struct usertp__source *parent = src->forked_from;

	for (unsigned int i = 0; parent && i < parent->nr_events; i++)
		if (!source_has_event(src, parent->events[i].id))
			source_keep_format(s, src, parent->events[i].id, parent->events[i].system,
					   parent->events[i].format);
}

/* Take the format of "sys:event" (id @id) through @sock, if the session records it. */
static void source_add_format(struct usertp_session *s, struct usertp__source *src, int sock,
			      unsigned int id, const char *line)
{
	char system[256], *reply = NULL;
	const char *name;

	names_add(s, line, strlen(line));
	if (source_has_event(src, id) || !split_event(line, system, sizeof(system), &name) ||
	    !usertp__session_selects(s, system, name))
		return;
	/*
	 * Asked on the query connection where there is one: news may come on the session's
	 * between a request and its reply (a program that joins has no endpoint yet, and sends
	 * no news until it runs).
	 */
	if (sock == src->session && source_query(src))
		sock = src->query;
	if (!usertp__client_call(sock, USERTP_CTL_MSG_FORMAT, line, &reply, NULL,
				 USERTP__CALL_TIMEOUT_MS))
		source_keep_format(s, src, id, system, usertp__client_body(reply));
	free(reply);
}

/* Learn the formats of the events @listing ("id sys:event" lines) names, through @sock. */
static void source_add_formats(struct usertp_session *s, struct usertp__source *src, int sock,
			       const char *listing)
{
	for (const char *p = listing; *p; p += strcspn(p, "\n"), p += *p == '\n') {
		char line[512];
		unsigned int id;
		int used = 0;

		if (sscanf(p, "%u %n", &id, &used) != 1 || !used)
			continue;
		snprintf(line, sizeof(line), "%.*s", (int)strcspn(p + used, "\n"), p + used);
		source_add_format(s, src, sock, id, line);
	}
}

/*
 * Ask through @sock for the events (their ids), the formats of new ones the session records,
 * and the names of the threads.
 */
static void source_learn(struct usertp_session *s, struct usertp__source *src, int sock,
			 int timeout_ms)
{
	char *reply = NULL;

	if (!usertp__client_call(sock, USERTP_CTL_MSG_IDS, NULL, &reply, NULL, timeout_ms))
		source_add_formats(s, src, sock, usertp__client_body(reply));
	free(reply);
	reply = NULL;
	if (!usertp__client_call(sock, USERTP_CTL_MSG_COMMS, NULL, &reply, NULL, timeout_ms) &&
	    *usertp__client_body(reply))
		source_keep_comms(s, src, usertp__client_body(reply));
	free(reply);
}

/* Everything it can tell still, at the end (while it runs, events come unasked). */
static void source_refresh(struct usertp_session *s, struct usertp__source *src)
{
	if (src->comms_asked) {
		/* A reply of the loop's on the way: not to be taken for ours. */
		close(src->query);
		src->query = -1;
		src->comms_asked = false;
	}
	if (src->ended || !source_query(src))
		return;
	source_learn(s, src, src->query, USERTP__CALL_TIMEOUT_MS);
}

/*
 * The names of its threads, while it runs (a program killed cannot say them at its exit):
 * asked without waiting, the reply read by usertp_session_process(), so that a program slow
 * to answer never holds up the reading of the buffers.
 */
static void source_ask_comms(struct usertp__source *src)
{
	if (src->ended || src->comms_asked || !source_query(src))
		return;
	src->comms_asked = !usertp__ctl_send_msg(
		src->query, &(struct usertp__ctl_msg){ .type = USERTP_CTL_MSG_COMMS }, -1);
	if (!src->comms_asked) {
		close(src->query);
		src->query = -1;
	}
}

/*
 * The session's buffer for one message of a program (USERTP_CTL_MAX_MSG), made when first
 * needed: in the heap, not in each thread's static TLS, where it would cost every thread of
 * the process (each of the mount's FUSE workers) a megabyte it touches.  NULL: no memory.
 */
static char *message_buffer(struct usertp_session *s)
{
	if (!s->message)
		s->message = malloc(USERTP_CTL_MAX_MSG + 1);
	return s->message;
}

static void source_comms_reply(struct usertp_session *s, struct usertp__source *src)
{
	char *reply = message_buffer(s);
	long n = reply ? usertp__ctl_recv(src->query, reply, USERTP_CTL_MAX_MSG + 1, NULL,
					  USERTP__CALL_TIMEOUT_MS)
		       : -ENOMEM;

	src->comms_asked = false;
	if (n <= 0) {
		close(src->query);
		src->query = -1;
		return;
	}
	/* Kept for the next time, but not watched until then (it would wake us at its end). */
	epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, src->query, NULL);
	if (!strncmp(reply, "ok\n", 3) && reply[3])
		source_keep_comms(s, src, reply + 3);
}

/*
 * The session's pid filter into @m (a "pids" request, or a "start"): pids= and notrace_pids=
 * when not empty (@pids gets their texts, to free()), event_fork=.  Return: 0 or -ENOMEM.
 */
static int pid_filter_msg(const struct usertp_session *s, struct usertp__ctl_msg *m, char *pids[2])
{
	pids[0] = pids[1] = NULL;
	if (s->trace_pids.nr && !(pids[0] = usertp__pid_list_text(&s->trace_pids, ',')))
		return -ENOMEM;
	if (s->notrace_pids.nr && !(pids[1] = usertp__pid_list_text(&s->notrace_pids, ',')))
		return -ENOMEM;
	if (pids[0])
		usertp__ctl_set_text(m, USERTP_CTL_KEY_PIDS, pids[0]);
	if (pids[1])
		usertp__ctl_set_text(m, USERTP_CTL_KEY_NOTRACE_PIDS, pids[1]);
	usertp__ctl_set_num(m, USERTP_CTL_KEY_EVENT_FORK, s->event_fork);
	return 0;
}

/*
 * A "start" (@type) or "set" request with the settings of this moment, into @m; *events (to
 * free()) holds the specs it points to, @pids (to free()) the start's pid lists.
 * Return: 0 or -ENOMEM.
 */
static int settings_msg(const struct usertp_session *s, enum usertp__ctl_type type,
			struct usertp__ctl_msg *m, char **events, char *pids[2])
{
	*m = (struct usertp__ctl_msg){ .type = type };
	*events = specs_text(s);
	if (!*events)
		return -ENOMEM;
	if (type == USERTP_CTL_MSG_START) {
		/* "SPEC FILTER" lines after the specs' NUL (a filter on one line: its breaks are
		 * white space to the grammar). */
		size_t len = strlen(*events) + 1, size = len + 1;
		char *more;

		for (unsigned int i = 0; i < s->nr_filters; i++)
			size += strlen(s->filters[i].events) + strlen(s->filters[i].text) + 2;
		more = realloc(*events, size);
		if (!more)
			return -ENOMEM;
		*events = more;
		more[len] = 0;
		for (unsigned int i = 0; i < s->nr_filters; i++) {
			char *at = more + strlen(more + len) + len;

			sprintf(at, "%s %s\n", s->filters[i].events, s->filters[i].text);
			for (char *c = at; *c && c[1]; c++)
				if (*c == '\n')
					*c = ' ';
		}
	}
	usertp__ctl_set_num(m, USERTP_CTL_KEY_TRACING, s->tracing);
	usertp__ctl_set_text(m, USERTP_CTL_KEY_EVENTS, *events);
	if (type == USERTP_CTL_MSG_START && pid_filter_msg(s, m, pids) < 0)
		return -ENOMEM;
	if (type == USERTP_CTL_MSG_START) {
		m->body = *events + strlen(*events) + 1; /* the filters, after the specs */
		usertp__ctl_set_num(m, USERTP_CTL_KEY_KB, s->kb);
		usertp__ctl_set_num(m, USERTP_CTL_KEY_OVERWRITE, s->overwrite);
		usertp__ctl_set_text(m, USERTP_CTL_KEY_CLOCK,
				    usertp__rb_clock_name(s->tsc ? USERTP_RB_CLOCK_TSC : USERTP_RB_CLOCK_MONO));
		usertp__ctl_set_text(m, USERTP_CTL_KEY_RECORDER, s->sock_path);
	}
	return 0;
}

/* Start a session of @src on @sock; the region comes back.  Return: 0 or a negative errno. */
static int source_start(struct usertp_session *s, struct usertp__source *src, int sock,
			int timeout_ms)
{
	struct usertp__ctl_msg req, ok;
	char *events = NULL, *reply = NULL, err[256], *pids[2] = { NULL, NULL };
	int fd = -1, ret;

	/* With our eventfd: the program wakes us when its buffers fill (ring-buffer.h). */
	ret = settings_msg(s, USERTP_CTL_MSG_START, &req, &events, pids);
	if (s->run_pid && src->pid == s->run_pid && !src->forked_from)
		usertp__ctl_set_num(&req, USERTP_CTL_KEY_AT_START, 1); /* command_stop() */
	if (!ret)
		ret = usertp__client_call_msg(sock, &req, s->overwrite ? -1 : s->wake_fd, &reply, &ok,
					     &fd, timeout_ms);
	if (ret == -EREMOTEIO) {
		s->remote_err = !strncmp(reply, "error ", 6)
					? usertp__ctl_errno_of(reply + 6, strcspn(reply + 6, " \n"))
					: 0;
		usertp__session_fail(s, ret, "%s: %s%s", src->name,
				     usertp__client_error_text(reply, err, sizeof(err)),
				     strchr(reply, '\n') && strchr(reply, '\n')[1] ? strchr(reply, '\n') : "");
	}
	if (!ret && (fd < 0 || !usertp__ctl_has(&ok, USERTP_CTL_KEY_SIZE)))
		ret = -EPROTO;
	if (!ret)
		ret = source_map(s, src, fd, ok.num[USERTP_CTL_KEY_SIZE]);
	if (!ret) {
		/* A program that does not read what we send is dropped, never waited for. */
		int send_ms = src->foreign ? USERTP__FOREIGN_ANSWER_MS : USERTP__CALL_TIMEOUT_MS;
		struct timeval tv = { send_ms / 1000, send_ms % 1000 * 1000 };

		setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		src->session = sock;
		source_add_formats(s, src, sock, ok.body);
	} else if (ret != -EREMOTEIO) {
		usertp__session_fail(s, ret, "%s: cannot start recording it: %s", src->name,
				     strerror(-ret));
	}
	if (fd >= 0)
		close(fd);
	free(reply);
	free(events);
	free(pids[0]);
	free(pids[1]);
	src->session = ret ? -1 : sock;
	return ret;
}

/* Is @pid another user's process, and we not root? */
static bool another_users(pid_t pid)
{
	uid_t uid;

	return geteuid() != 0 && !usertp__proc_owner(pid, &uid) && uid != geteuid();
}

static int attach_found(struct usertp_session *s, const struct usertp__program *prog,
			int timeout_ms);

static int attach(struct usertp_session *s, pid_t pid, bool quiet_if_gone)
{
	struct usertp__program prog;
	int ret;

	ret = usertp__client_find(pid, &prog);
	if (ret == -ENOENT && another_users(pid))
		return quiet_if_gone ? -EACCES
				     : usertp__session_fail(s, -EACCES, "process %d: %s of ours: it is "
							    "another user's process (only root may "
							    "record it)", (int)pid,
							    usertp__client_find_error(ret));
	if (ret)
		return quiet_if_gone ? ret
				     : usertp__session_fail(s, ret, "process %d: %s", (int)pid,
							    usertp__client_find_error(ret));
	return attach_found(s, &prog, USERTP__CALL_TIMEOUT_MS);
}

/* Attach @prog, found and answering, waiting @timeout_ms at most for each of its answers. */
static int attach_found(struct usertp_session *s, const struct usertp__program *prog,
			int timeout_ms)
{
	pid_t pid = prog->pid;
	struct usertp__source *src;
	char *reply = NULL;
	int sock, ret;

	sock = usertp__client_connect(prog);
	if (sock < 0)
		return usertp__session_fail(s, sock, "process %d: %s", (int)pid, strerror(-sock));
	/* Another user's program refuses us on its first answer. */
	ret = usertp__client_call(sock, USERTP_CTL_MSG_HELLO, NULL, &reply, NULL, timeout_ms);
	if (ret) {
		char err[256];

		if (ret == -EREMOTEIO)
			ret = strstr(reply, "EACCES") || strstr(reply, "EPERM") ? -EACCES : -EPROTO;
		usertp__session_fail(s, ret, "process %d: %s", (int)pid,
				     reply && !strncmp(reply, "error ", 6)
					     ? usertp__client_error_text(reply, err, sizeof(err))
					     : strerror(-ret));
		free(reply);
		close(sock);
		return ret;
	}
	free(reply);
	src = source_new(s, pid, prog->comm);
	if (!src) {
		close(sock);
		return -ENOMEM;
	}
	ret = source_start(s, src, sock, timeout_ms);
	if (ret) {
		close(sock);
		src->ended = true;
		return ret;
	}
	/* The names of all its events (for the checks of specs). */
	if (source_query(src))
		source_learn(s, src, src->query, timeout_ms);
	return 0;
}

int usertp_session_attach_pid(struct usertp_session *s, pid_t pid)
{
	if (pid <= 0)
		return usertp__session_fail(s, -ESRCH, "process %d: no such process", (int)pid);
	if (source_of_pid(s, pid))
		return usertp__session_fail(s, -EALREADY, "process %d: in the session already",
					    (int)pid);
	return attach(s, pid, false);
}

static void source_finish(struct usertp_session *s, struct usertp__source *src);
static int source_call(struct usertp_session *s, struct usertp__source *src,
		       const struct usertp__ctl_msg *req);

int usertp_session_detach_pid(struct usertp_session *s, pid_t pid)
{
	struct usertp__source *src = source_of_pid(s, pid);

	if (!src)
		return usertp__session_fail(s, -ESRCH, "process %d: not a program of the session",
					    (int)pid);
	if (src->session >= 0) {
		/* Its session ends there: once it answers, nothing more is written. */
		source_call(s, src, &(struct usertp__ctl_msg){ .type = USERTP_CTL_MSG_STOP });
		close(src->session);
		src->session = -1;
	}
	source_finish(s, src);
	return 0;
}

/* --- our socket: joins, forked children --------------------------------------------------- */

/* A socket listening at @path, which only its owner may use (or, with @everyone, anyone). */
static int listen_at(const char *path, bool everyone)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, ret;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	unlink(sa.sun_path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    chmod(sa.sun_path, everyone ? 0666 : 0600) || listen(fd, 64)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

static int listen_open(struct usertp_session *s)
{
	char dir[PATH_MAX];
	static unsigned int sessions; /* (threads of usertp mount make them at once) */
	unsigned int serial = __atomic_fetch_add(&sessions, 1, __ATOMIC_RELAXED);
	int ret = usertp__client_dir(dir, sizeof(dir), true);

	if (ret)
		return ret;
	usertp__client_remove_stale();
	/* One per session: record-PID.sock for the first of a process (the name recorders had). */
	if ((size_t)snprintf(s->sock_path, sizeof(s->sock_path),
			     serial ? "%s/record-%d.%u.sock" : "%s/record-%d.sock", dir, (int)getpid(),
			     serial) >= sizeof(s->sock_path))
		return -ENAMETOOLONG;
	s->listen_fd = listen_at(s->sock_path, false);
	if (s->listen_fd < 0) {
		s->sock_path[0] = 0;
		return s->listen_fd;
	}
	return 0;
}

/*
 * Root's session of all: every user's programs that start join it through a socket in the
 * system directory (ctl-proto.h), "all." and our socket's name.
 */
static int listen_every_user(struct usertp_session *s)
{
	struct epoll_event ev = { .events = EPOLLIN };
	char dir[PATH_MAX];
	int ret = usertp__ctl_system_dir(dir, sizeof(dir), true);

	if (ret)
		return usertp__session_fail(s, ret, "%s: %s", dir,
					    ret == -EPERM ? "not root's alone (another user may "
							    "write in it)" : strerror(-ret));
	if ((size_t)snprintf(s->every_path, sizeof(s->every_path), "%s/%s%s", dir,
			     USERTP_CTL_ALL_PREFIX, strrchr(s->sock_path, '/') + 1) >=
	    sizeof(s->every_path)) {
		s->every_path[0] = 0;
		return usertp__session_fail(s, -ENAMETOOLONG, "%s: %s", dir, strerror(ENAMETOOLONG));
	}
	usertp__client_remove_stale_in(dir);
	s->every_fd = listen_at(s->every_path, true);
	if (s->every_fd < 0) {
		ret = s->every_fd;
		usertp__session_fail(s, ret, "%s: %s", s->every_path, strerror(-ret));
		s->every_path[0] = 0;
		return ret;
	}
	ev.data.fd = s->every_fd;
	epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, s->every_fd, &ev);
	return 0;
}

/* Is @uid kept out for now (a peer of it that stalled or lied lately)? */
static bool foreign_banned(struct usertp_session *s, uid_t uid, long long now)
{
	for (unsigned int i = 0; i < USERTP__FOREIGN_BANS; i++)
		if (s->bans[i].until_ms > now && s->bans[i].uid == uid)
			return true;
	return false;
}

static void foreign_ban(struct usertp_session *s, uid_t uid, long long now)
{
	unsigned int oldest = 0;

	for (unsigned int i = 1; i < USERTP__FOREIGN_BANS; i++)
		if (s->bans[i].until_ms < s->bans[oldest].until_ms)
			oldest = i;
	s->bans[oldest].uid = uid;
	s->bans[oldest].until_ms = now + USERTP__FOREIGN_BAN_MS;
}

int usertp_session_attach_all(struct usertp_session *s)
{
	struct usertp__program *progs;
	char dir[PATH_MAX];
	int n, ret;

	if (s->all)
		return 0;
	ret = usertp__client_dir(dir, sizeof(dir), true);
	if (ret)
		return usertp__session_fail(s, ret, "the runtime directory: %s", strerror(-ret));
	/* Programs that start look there: "all/" and our socket's name (ctl-proto.h). */
	if ((size_t)snprintf(s->all_path, sizeof(s->all_path), "%.*s/%s/%s", (int)sizeof(s->all_path),
			     dir, USERTP_CTL_ALL_DIR, strrchr(s->sock_path, '/') + 1) >=
	    sizeof(s->all_path)) {
		s->all_path[0] = 0;
		return usertp__session_fail(s, -ENAMETOOLONG, "the runtime directory: %s",
					    strerror(ENAMETOOLONG));
	}
	*strrchr(s->all_path, '/') = 0;
	ret = mkdir(s->all_path, 0700) && errno != EEXIST ? -errno : 0;
	s->all_path[strlen(s->all_path)] = '/';
	if (!ret) {
		unlink(s->all_path); /* (left by a session of a process of this pid that died) */
		ret = symlink(s->sock_path, s->all_path) ? -errno : 0;
	}
	if (ret) {
		usertp__session_fail(s, ret, "%s: %s", s->all_path, strerror(-ret));
		s->all_path[0] = 0;
		return ret;
	}
	if (geteuid() == 0 && (ret = listen_every_user(s))) {
		unlink(s->all_path);
		s->all_path[0] = 0;
		return ret;
	}
	s->all = true;
	/*
	 * Those running, found answering (all asked at once): ours attached as usual; another
	 * user's each answer waited for USERTP__FOREIGN_ANSWER_MS, and a user one of whose
	 * programs does not answer so is kept out (its other programs too), as when they join.
	 */
	n = usertp__client_programs(&progs, geteuid() == 0);
	for (int i = 0; i < n; i++) {
		long long start = usertp__mono_ms();
		uid_t uid;

		if (progs[i].pid == getpid() || source_of_pid(s, progs[i].pid))
			continue;
		if (!progs[i].foreign) {
			attach_found(s, &progs[i], USERTP__CALL_TIMEOUT_MS);
			continue;
		}
		if (usertp__proc_owner(progs[i].pid, &uid) || foreign_banned(s, uid, start))
			continue;
		if (attach_found(s, &progs[i], USERTP__FOREIGN_ANSWER_MS) == -ETIMEDOUT ||
		    usertp__mono_ms() - start >= 3 * USERTP__FOREIGN_ANSWER_MS)
			foreign_ban(s, uid, usertp__mono_ms());
	}
	if (n > 0)
		free(progs);
	return 0;
}

pid_t usertp_session_run(struct usertp_session *s, char *const argv[])
{
	sigset_t empty;
	pid_t pid;

	if (!argv || !argv[0])
		return usertp__session_fail(s, -EINVAL, "no command");
	s->ran = true;
	pid = fork();
	if (pid < 0)
		return usertp__session_fail(s, -errno, "cannot start %s: %s", argv[0], strerror(errno));
	if (pid == 0) {
		sigemptyset(&empty);
		sigprocmask(SIG_SETMASK, &empty, NULL);
		setenv("USERTP_SESSION", s->sock_path, 1);
		execvp(argv[0], argv);
		fprintf(stderr, "usertp: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	s->run_pid = pid;
	return pid;
}


/* Send the session's settings to a program that came after they were given. */
static void source_send_settings(struct usertp_session *s, struct usertp__source *src)
{
	struct usertp__ctl_msg m;
	char *events;

	/* Not waited for: the reply comes among its messages (session_message()). */
	if (!settings_msg(s, USERTP_CTL_MSG_SET, &m, &events, NULL))
		usertp__ctl_send_msg(src->session, &m, -1);
	free(events);
}

/*
 * The command usertp_session_run() started refused a filter at its start (an event its
 * executable or a library it links defines does not take it): like trace-cmd, which refuses
 * such a filter before anything runs, it is stopped before its main() (its parent reaps it).
 * Return: whether @src is that command.
 */
static bool command_stop(struct usertp_session *s, const struct usertp__source *src)
{
	if (!s->run_pid || src->pid != s->run_pid || src->forked_from)
		return false;
	kill(src->pid, SIGKILL);
	s->run_stopped = true;
	return true;
}

/*
 * A program joined (USERTP_SESSION or all): start its session, let it run.  Its answers are
 * waited for @timeout_ms each.  Return: whether it runs recorded.
 */
static bool on_join(struct usertp_session *s, int sock, const struct usertp__ctl_msg *msg,
		    int timeout_ms)
{
	const char *comm = msg->text[USERTP_CTL_KEY_COMM];
	struct usertp__source *src;
	pid_t pid = (pid_t)msg->num[USERTP_CTL_KEY_PID];

	/*
	 * A process we record already joins again when it has exec'd a program (its old image
	 * and session are gone, whether or not we have seen that session's end yet).
	 */
	src = pid > 0 ? source_of_pid(s, pid) : NULL;
	if (src) {
		if (src->session >= 0)
			close(src->session);
		src->session = -1;
		source_finish(s, src);
	}
	if (pid <= 0 || !(src = source_new(s, pid, comm))) {
		close(sock); /* nonsense: it runs untraced */
		return false;
	}
	if (source_start(s, src, sock, timeout_ms)) {
		usertp__session_log(s, "%s", s->error);
		/* (A static program registers its events before it joins: refused at the start.) */
		if (s->remote_err == -EINVAL && s->nr_filters)
			command_stop(s, src);
		close(sock);
		src->ended = true;
		s->untraced++;
		return false;
	}
	/* The names of all its events so far (for the checks of specs), then it may go on. */
	source_learn(s, src, sock, timeout_ms);
	if (usertp__ctl_send_msg(sock, &(struct usertp__ctl_msg){ .type = USERTP_CTL_MSG_RUN }, -1)) {
		close(sock);
		src->session = -1;
		source_finish(s, src);
		return false;
	}
	return true;
}

/* A traced program forked: the child's new region.  Return: whether it is recorded. */
static bool on_fork(struct usertp_session *s, int sock, const struct usertp__ctl_msg *msg, int fd)
{
	struct usertp__source *src, *parent;
	pid_t pid = (pid_t)msg->num[USERTP_CTL_KEY_PID];

	parent = source_of_pid(s, (pid_t)msg->num[USERTP_CTL_KEY_PPID]);
	src = pid > 0 && fd >= 0 ? source_new(s, pid, parent ? parent->comm : NULL) : NULL;
	if (src)
		src->forked_from = parent;
	if (!src || source_map(s, src, fd, msg->num[USERTP_CTL_KEY_SIZE])) {
		if (src)
			src->ended = true;
		close(sock);
		return false;
	}
	/*
	 * Same program image: the parent's events, with the same ids (those we hear of from the
	 * parent later too are taken at the end).
	 */
	usertp__source_inherit(s, src);
	src->session = sock;
	/* It forked with the parent's settings: a change on the way may have missed it. */
	source_send_settings(s, src);
	return true;
}


/*
 * A program joins (or a traced program's child says it was born).  Another user's (only
 * root's session of every user hears them) is taken at its word only about itself (the pid
 * it gives must be its own, its parent its real one) and is given USERTP__FOREIGN_ANSWER_MS for each
 * answer, as long as such a program waits for us anyway; a user whose peer failed so is kept
 * out for USERTP__FOREIGN_BAN_MS, so that a hostile user holds the session up for 2.5 % at worst.
 */
static void accept_one(struct usertp_session *s, int listen_fd)
{
	enum { MSG_MAX = 65536 }; /* a join or a fork is small */
	char *msg;
	int sock = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC), fd = -1;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct usertp__ctl_msg m;
	const char *why = "";
	long long start = usertp__mono_ms();
	bool ours, taken = false;
	int timeout_ms;
	uid_t uid;
	long n;

	if (sock < 0)
		return;
	ours = usertp__ctl_peer_allowed(sock, &uid);
	if ((!ours && (geteuid() != 0 || foreign_banned(s, uid, start))) ||
	    getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		close(sock);
		return;
	}
	timeout_ms = ours ? USERTP__CALL_TIMEOUT_MS : USERTP__FOREIGN_ANSWER_MS;
	msg = malloc(MSG_MAX);
	n = msg ? usertp__ctl_recv(sock, msg, MSG_MAX, &fd, timeout_ms) : -ENOMEM;
	if (n > 0 && !usertp__ctl_decode(msg, &m, &why) && !ours &&
	    (m.num[USERTP_CTL_KEY_PID] != (uint64_t)cred.pid ||
	     (m.type == USERTP_CTL_MSG_FORK &&
	      m.num[USERTP_CTL_KEY_PPID] != (uint64_t)usertp__proc_parent(cred.pid))))
		close(sock); /* another's word about a process not its own */
	else if (n > 0 && !why && m.type == USERTP_CTL_MSG_JOIN)
		taken = on_join(s, sock, &m, timeout_ms);
	else if (n > 0 && !why && m.type == USERTP_CTL_MSG_FORK)
		taken = on_fork(s, sock, &m, fd);
	else
		close(sock); /* nonsense: it runs untraced */
	free(msg);
	if (fd >= 0)
		close(fd);
	if (!ours && (!taken || usertp__mono_ms() - start >= USERTP__FOREIGN_ANSWER_MS))
		foreign_ban(s, uid, usertp__mono_ms());
}

/*
 * Take one message a program sent on its session connection unasked: "events" (new events:
 * their names), "format" (the format of a new event the session records; before any of it
 * can fire) or "exit" (the names of its threads).  Replies ("ok", "error") are the caller's.
 */
static void session_news(struct usertp_session *s, struct usertp__source *src,
			 const struct usertp__ctl_msg *msg)
{
	char system[256];
	const char *name, *line;
	unsigned int id;

	switch (msg->type) {
	case USERTP_CTL_MSG_EXIT:
		source_keep_comms(s, src, msg->body);
		break;
	case USERTP_CTL_MSG_REFUSED: {
		/* Said once, whole (without the filter file's last empty line). */
		size_t len = strlen(msg->body);

		while (len && msg->body[len - 1] == '\n')
			len--;
		usertp__session_log(s, "%s: %.*s", src->name, (int)len, msg->body);
		s->refused++;
		/* Before main(): our command stops there; another program waits for a word. */
		if (msg->num[USERTP_CTL_KEY_AT_START] && !command_stop(s, src))
			usertp__ctl_send_msg(src->session,
					     &(struct usertp__ctl_msg){ .type = USERTP_CTL_MSG_RUN }, -1);
		break;
	}
	case USERTP_CTL_MSG_EVENTS:
		for (const char *p = msg->body; *p; p += strcspn(p, "\n"), p += *p == '\n') {
			const char *sp = memchr(p, ' ', strcspn(p, "\n"));

			if (sp)
				names_add(s, sp + 1, strcspn(sp + 1, "\n"));
		}
		break;
	case USERTP_CTL_MSG_FORMAT:
		line = msg->text[USERTP_CTL_KEY_NAME];
		id = (unsigned int)msg->num[USERTP_CTL_KEY_ID];
		if (!usertp__ctl_has(msg, USERTP_CTL_KEY_NAME) || !usertp__ctl_has(msg, USERTP_CTL_KEY_ID) ||
		    !split_event(line, system, sizeof(system), &name))
			break;
		names_add(s, line, strlen(line));
		if (!source_has_event(src, id) && usertp__session_selects(s, system, name))
			source_keep_format(s, src, id, system, msg->body);
		break;
	default:
		break;
	}
}

/* Read one message of @src's session connection.  False: the session is over. */
static bool session_message(struct usertp_session *s, struct usertp__source *src)
{
	char *message = message_buffer(s);
	long n = message ? usertp__ctl_recv(src->session, message, USERTP_CTL_MAX_MSG + 1, NULL,
					    USERTP__CALL_TIMEOUT_MS)
			 : -ENOMEM;
	struct usertp__ctl_msg m;
	const char *why;

	if (n <= 0)
		return false;
	/* (A message that does not decode is a program's bug or malice: left out.) */
	if (usertp__ctl_decode(message, &m, &why))
		return true;
	if ((m.type == USERTP_CTL_MSG_OK || m.type == USERTP_CTL_MSG_ERROR) && src->unanswered)
		src->unanswered--; /* a reply that came late */
	else
		session_news(s, src, &m);
	return true;
}

bool usertp__session_await_format(struct usertp_session *s, struct usertp__source *src,
				  unsigned int id, int wait_ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!source_has_event(src, id) && src->session >= 0 && !src->ended) {
		struct pollfd p = { src->session, POLLIN, 0 };
		long spent;

		clock_gettime(CLOCK_MONOTONIC, &t);
		spent = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (spent >= wait_ms || poll(&p, 1, (int)(wait_ms - spent)) != 1)
			break;
		/* (The end of the connection is left to usertp_session_process().) */
		if (!(p.revents & POLLIN) || !session_message(s, src))
			break;
	}
	return source_has_event(src, id);
}

/* --- settings ----------------------------------------------------------------------------- */

/*
 * Send @req on the session connections of @srcs (@n of them) at once, and take their messages
 * until each has replied: a program of ours is waited for USERTP__CALL_TIMEOUT_MS from the
 * start, another user's USERTP__FOREIGN_ANSWER_MS, and one whose earlier reply is still out
 * (it did not answer in time) not at all, so that programs that do not answer cost that once
 * per operation, however many, and then nothing until they answer again (their late replies
 * are taken as they come).  results[i]: 0, -EREMOTEIO (an error reply; the first is in
 * s->error), -ETIMEDOUT, or another negative errno (the connection is over: the caller ends
 * it); bodies[i] (@bodies may be NULL): an "ok" reply's body, to free().  Return: 0 or -ENOMEM.
 */
static int sources_call(struct usertp_session *s, struct usertp__source **srcs, unsigned int n,
			const struct usertp__ctl_msg *req, int *results, char **bodies)
{
	char *message = message_buffer(s), *text = NULL;
	struct pollfd *pfd = calloc(n ? n : 1, sizeof(*pfd));
	long long start = usertp__mono_ms();
	long len = usertp__ctl_encode(req, &text);
	unsigned int waiting = 0;
	bool refused = false;

	if (!message || !pfd || len < 0) {
		free(pfd);
		free(text);
		return len < 0 ? (int)len : -ENOMEM;
	}
	for (unsigned int i = 0; i < n; i++) {
		struct usertp__source *src = srcs[i];

		pfd[i] = (struct pollfd){ .fd = -1, .events = POLLIN };
		if (bodies)
			bodies[i] = NULL;
		results[i] = usertp__ctl_send(src->session, text, (size_t)len, -1);
		if (results[i])
			continue;
		if (src->unanswered) {
			src->unanswered++;
			results[i] = -ETIMEDOUT;
			continue;
		}
		results[i] = -ETIMEDOUT;
		pfd[i].fd = src->session;
		waiting++;
	}
	free(text);
	while (waiting) {
		long long now = usertp__mono_ms(), next = -1;

		for (unsigned int i = 0; i < n; i++) {
			long long deadline = start + (srcs[i]->foreign ? USERTP__FOREIGN_ANSWER_MS
								       : USERTP__CALL_TIMEOUT_MS);

			if (pfd[i].fd < 0)
				continue;
			if (deadline <= now) {
				srcs[i]->unanswered++; /* its reply, when it comes, is left out */
				pfd[i].fd = -1;
				waiting--;
			} else if (next < 0 || deadline < next) {
				next = deadline;
			}
		}
		if (!waiting || poll(pfd, n, (int)(next - now)) <= 0)
			continue;
		for (unsigned int i = 0; i < n; i++) {
			struct usertp__source *src = srcs[i];
			struct usertp__ctl_msg m;
			const char *why;
			long got;

			if (pfd[i].fd < 0 || !pfd[i].revents)
				continue;
			/* (One that sends part of a message holds us until the deadline, no longer.) */
			got = usertp__ctl_recv(src->session, message, USERTP_CTL_MAX_MSG + 1, NULL,
					       (int)(next - usertp__mono_ms() > 0 ? next - usertp__mono_ms()
										: 0));
			if (got <= 0) {
				results[i] = got ? (int)got : -ECONNRESET;
				pfd[i].fd = -1;
				waiting--;
				continue;
			}
			if (usertp__ctl_decode(message, &m, &why))
				continue; /* nonsense: left out */
			if (m.type != USERTP_CTL_MSG_OK && m.type != USERTP_CTL_MSG_ERROR) {
				session_news(s, src, &m);
				continue;
			}
			if (src->unanswered) {
				src->unanswered--; /* the reply to an earlier request */
				continue;
			}
			pfd[i].fd = -1;
			waiting--;
			if (m.type == USERTP_CTL_MSG_OK) {
				results[i] = bodies && !(bodies[i] = strdup(m.body)) ? -ENOMEM : 0;
				continue;
			}
			results[i] = -EREMOTEIO;
			if (!refused) {
				size_t word = strcspn(m.arg, " ");

				refused = true;
				s->remote_err = usertp__ctl_errno_of(m.arg, word);
				usertp__session_fail(s, -EREMOTEIO, "%s: %s%s%s", src->name,
						     m.arg[word] ? m.arg + word + 1 : m.arg,
						     *m.body ? "\n" : "", m.body);
			}
		}
	}
	free(pfd);
	return 0;
}

/* sources_call() of one.  Return: its result. */
static int source_call_reply(struct usertp_session *s, struct usertp__source *src,
			     const struct usertp__ctl_msg *req, char **body)
{
	int result, ret = sources_call(s, &src, 1, req, &result, body);

	return ret ? ret : result;
}

/* The sources of @s still in touch, into *@out (to free()).  Return: how many, or -ENOMEM. */
static int live_sources(const struct usertp_session *s, struct usertp__source ***out)
{
	unsigned int n = 0;

	*out = calloc(s->nr_sources + 1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (unsigned int i = 0; i < s->nr_sources; i++)
		if (!s->sources[i]->ended && s->sources[i]->session >= 0)
			(*out)[n++] = s->sources[i];
	return (int)n;
}

static int source_call(struct usertp_session *s, struct usertp__source *src,
		       const struct usertp__ctl_msg *req)
{
	return source_call_reply(s, src, req, NULL);
}

/* Add the pids of the line "@key P,P.." of @text (a "listed" reply) to @list. */
static int listed_add(struct usertp__pid_list *list, const char *text, const char *key)
{
	size_t klen = strlen(key);

	for (const char *p = text; *p; p += strcspn(p, "\n"), p += *p == '\n') {
		char *line;
		int ret;

		if (strncmp(p, key, klen) || p[klen] != ' ')
			continue;
		line = strndup(p + klen + 1, strcspn(p + klen + 1, "\n"));
		ret = line ? usertp__pid_list_parse(list, line, ",") : -ENOMEM;
		free(line);
		return ret == -ENOMEM ? ret : 0; /* (a program's nonsense: nothing of it) */
	}
	return 0;
}

/*
 * Call every source still in touch with @req at once (sources_call()): the live ones into
 * *@srcs (to free(), as *@results and *@bodies, which may be NULL).  One that is gone is
 * ended here.  Return: how many, or -ENOMEM.
 */
static int call_live(struct usertp_session *s, const struct usertp__ctl_msg *req,
		     struct usertp__source ***srcs, int **results, char ***bodies)
{
	int n = live_sources(s, srcs);

	*results = n >= 0 ? calloc((size_t)n + 1, sizeof(**results)) : NULL;
	if (bodies)
		*bodies = n >= 0 ? calloc((size_t)n + 1, sizeof(**bodies)) : NULL;
	if (n < 0 || !*results || (bodies && !*bodies) ||
	    sources_call(s, *srcs, (unsigned int)n, req, *results, bodies ? *bodies : NULL)) {
		free(*srcs);
		free(*results);
		if (bodies)
			free(*bodies);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		int r = (*results)[i];

		if (r && r != -EREMOTEIO && r != -ETIMEDOUT && r != -ENOMEM) {
			/* Gone: what it committed is still in our mapping. */
			close((*srcs)[i]->session);
			(*srcs)[i]->session = -1;
			source_finish(s, (*srcs)[i]);
		}
	}
	return n;
}

int usertp__session_listed(struct usertp_session *s, struct usertp__pid_list *trace,
			   struct usertp__pid_list *notrace)
{
	struct usertp__source **srcs;
	int *results, ret = 0, n;
	char **bodies;

	n = call_live(s, &(struct usertp__ctl_msg){ .type = USERTP_CTL_MSG_LISTED }, &srcs,
		      &results, &bodies);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		/* (One that does not say: as if it had added none.) */
		if (!ret && !results[i])
			ret = listed_add(trace, bodies[i], "pids");
		if (!ret && !results[i])
			ret = listed_add(notrace, bodies[i], "notrace_pids");
		free(bodies[i]);
	}
	free(srcs);
	free(results);
	free(bodies);
	return ret;
}

/* Give every running program the settings; false if one refused them (s->error says). */
static int settings_apply(struct usertp_session *s)
{
	struct usertp__source **srcs;
	struct usertp__ctl_msg req;
	int refused = 0, *results, n;
	char *events;

	if (settings_msg(s, USERTP_CTL_MSG_SET, &req, &events, NULL))
		return -ENOMEM;
	n = call_live(s, &req, &srcs, &results, NULL);
	free(events);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		if (results[i] == -EREMOTEIO)
			refused = -EREMOTEIO;
		else if (results[i] == -ETIMEDOUT)
			/* It records on as before (its reply, if it comes, is left out). */
			usertp__session_log(s, "%s: did not take the new settings in time",
					    srcs[i]->name);
	}
	free(srcs);
	free(results);
	return refused;
}

/* Does one of the running programs have an event @spec selects?  True too when none runs. */
static bool spec_possible(const struct usertp_session *s, const char *spec)
{
	unsigned int running = 0;

	for (unsigned int i = 0; i < s->nr_sources; i++)
		running += !s->sources[i]->ended;
	return !running || usertp__spec_matches_any(spec, s->names.text ? s->names.text : "");
}

/*
 * Add the specs of @list (comma-separated), each negated when @negate, to the session's list
 * (not applied).  Return: 0, or a negative errno with the list as it was.
 */
static int specs_add(struct usertp_session *s, const char *list, bool negate)
{
	unsigned int old = s->nr_specs, added = 0;
	char *copy, *tok, *save = NULL;
	int ret = 0;

	if (!list)
		return usertp__session_fail(s, -EINVAL, "no event spec");
	copy = strdup(list);
	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ", \t\n", &save); tok && !ret; tok = strtok_r(NULL, ", \t\n", &save)) {
		bool off = negate != (tok[0] == '!');
		const char *spec = tok + (tok[0] == '!');
		char **more;

		if (!strcmp(spec, "all"))
			spec = "*:*";
		if (usertp__spec_check(spec, USERTP__SPEC_GLOB)) {
			ret = usertp__session_fail(s, -EINVAL,
						   "%s: not an event spec (sys:event, sys:*, *:event, "
						   "event, globs such as sys:io_*, all)", tok);
			break;
		}
		if (!s->specs_unchecked && !spec_possible(s, spec)) {
			ret = usertp__session_fail(s, -ENOENT, "no event %s in the programs of the session",
						   spec);
			break;
		}
		more = realloc(s->specs, (s->nr_specs + 1) * sizeof(*more));
		if (!more) {
			ret = -ENOMEM;
			break;
		}
		s->specs = more;
		if (asprintf(&s->specs[s->nr_specs], "%s%s", off ? "!" : "", spec) < 0) {
			ret = -ENOMEM;
			break;
		}
		s->nr_specs++;
		added++;
	}
	free(copy);
	if (!ret && !added)
		ret = usertp__session_fail(s, -EINVAL, "no event spec");
	if (ret)
		while (s->nr_specs > old)
			free(s->specs[--s->nr_specs]);
	return ret;
}

/* Add the specs of @list, negated when @negate, and apply them. */
static int specs_change(struct usertp_session *s, const char *list, bool negate)
{
	unsigned int old = s->nr_specs;
	int ret = specs_add(s, list, negate);

	if (ret)
		return ret;
	ret = settings_apply(s);
	if (ret) {
		/* A program refused them: back to what they were, everywhere. */
		while (s->nr_specs > old)
			free(s->specs[--s->nr_specs]);
		settings_apply(s);
	}
	return ret;
}

void usertp__session_mount_mode(struct usertp_session *s,
				void (*on_comm)(pid_t tid, const char *comm, void *arg), void *arg)
{
	s->specs_unchecked = true;
	s->on_comm = on_comm;
	s->on_comm_arg = arg;
}

int usertp_session_set_specs(struct usertp_session *s, const char *specs)
{
	char **old = s->specs;
	unsigned int nr_old = s->nr_specs;
	int ret = 0;

	s->specs = NULL;
	s->nr_specs = 0;
	if (specs && specs[strspn(specs, ", \t\n")])
		ret = specs_add(s, specs, false);
	if (!ret)
		ret = settings_apply(s);
	if (!ret) {
		while (nr_old)
			free(old[--nr_old]);
		free(old);
		return 0;
	}
	/* Refused: the list before, everywhere. */
	while (s->nr_specs)
		free(s->specs[--s->nr_specs]);
	free(s->specs);
	s->specs = old;
	s->nr_specs = nr_old;
	settings_apply(s);
	return ret;
}

int usertp_session_enable(struct usertp_session *s, const char *specs)
{
	return specs_change(s, specs, false);
}

int usertp_session_disable(struct usertp_session *s, const char *specs)
{
	return specs_change(s, specs, true);
}

int usertp_session_set_tracing(struct usertp_session *s, bool on)
{
	bool was = s->tracing;
	int ret;

	s->tracing = on;
	ret = settings_apply(s);
	if (ret) {
		s->tracing = was;
		settings_apply(s);
	}
	return ret;
}

/* The filter the session has for exactly @events, or NULL. */
static struct usertp__session_filter *filter_of(struct usertp_session *s, const char *events)
{
	for (unsigned int i = 0; i < s->nr_filters; i++)
		if (!strcmp(s->filters[i].events, events))
			return &s->filters[i];
	return NULL;
}

int usertp_session_set_filter(struct usertp_session *s, const char *events, const char *filter,
			      char *err, size_t errlen)
{
	struct usertp__session_filter *old;
	const char *text = filter ? filter : "0";
	struct usertp__ctl_msg m = { .type = USERTP_CTL_MSG_FILTER, .body = text };
	struct usertp__source **srcs;
	unsigned int took = 0;
	int ret = 0, *results, n;

	if (err && errlen)
		err[0] = 0;
	if (!events || usertp__spec_check(events, USERTP__SPEC_GLOB))
		return usertp__session_fail(s, -EINVAL, "%s: not an event spec", events ? events : "");
	if (strlen(text) > USERTP__FILTER_MAX)
		return usertp__session_fail(s, -EINVAL, "the filter is longer than %u bytes",
					    USERTP__FILTER_MAX);
	/* As usertp_session_enable(): a spec that selects no event of the programs is refused. */
	if (strcmp(text, "0") && !s->specs_unchecked && !spec_possible(s, events))
		return usertp__session_fail(s, -ENOENT,
					    "no event %s in the programs of the session", events);
	old = filter_of(s, events);
	usertp__ctl_set_text(&m, USERTP_CTL_KEY_EVENTS, events);
	n = call_live(s, &m, &srcs, &results, NULL);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		if (results[i] == -EREMOTEIO && !ret)
			ret = s->remote_err ? s->remote_err : -EINVAL;
		else if (results[i] == -ETIMEDOUT)
			usertp__session_log(s, "%s: did not take the filter in time", srcs[i]->name);
		else if (!results[i])
			srcs[took++] = srcs[i];
	}
	if (ret) {
		/* Refused: the programs that took it get the one before back. */
		if (err && errlen) {
			const char *nl = strchr(s->error, '\n');

			snprintf(err, errlen, "%s", nl ? nl + 1 : s->error);
		}
		m.body = old ? old->text : "0";
		if (took)
			sources_call(s, srcs, took, &m, results, NULL);
	}
	free(srcs);
	free(results);
	if (ret)
		return ret;
	/* Kept for the programs that come later (their start carries it). */
	if (!old) {
		struct usertp__session_filter *more =
			realloc(s->filters, (s->nr_filters + 1) * sizeof(*more));

		if (!more)
			return -ENOMEM;
		s->filters = more;
		old = &s->filters[s->nr_filters++];
		*old = (struct usertp__session_filter){ strdup(events), NULL };
	}
	free(old->text);
	old->text = strdup(text);
	return old->events && old->text ? 0 : -ENOMEM;
}

int usertp_session_set_pid_filter(struct usertp_session *s, const pid_t *pids, size_t nr_pids,
				  const pid_t *notrace, size_t nr_notrace, bool event_fork)
{
	struct usertp__pid_list trace = { NULL, 0 }, no = { NULL, 0 };
	struct usertp__ctl_msg m = { .type = USERTP_CTL_MSG_PIDS };
	char *texts[2] = { NULL, NULL };
	int ret = 0;

	ret = usertp__pid_list_from(&trace, pids, nr_pids);
	if (!ret)
		ret = usertp__pid_list_from(&no, notrace, nr_notrace);
	if (ret) {
		usertp__pid_list_free(&trace);
		usertp__pid_list_free(&no);
		return ret == -EINVAL ? usertp__session_fail(s, ret, "a pid list with a pid below 0 or "
							       "above %d", USERTP__PID_LIST_MAX_PID)
				      : ret;
	}
	usertp__pid_list_free(&s->trace_pids);
	usertp__pid_list_free(&s->notrace_pids);
	s->trace_pids = trace;
	s->notrace_pids = no;
	s->event_fork = event_fork;
	/* Live: to every program now (the programs that come later have it in their start). */
	if (pid_filter_msg(s, &m, texts))
		ret = -ENOMEM;
	if (!ret) {
		struct usertp__source **srcs;
		int *results, n = call_live(s, &m, &srcs, &results, NULL);

		for (int i = 0; i < n; i++) {
			if (results[i] == -ETIMEDOUT)
				usertp__session_log(s, "%s: did not take the pid filter in time",
						    srcs[i]->name);
			else if (results[i] == -EREMOTEIO)
				usertp__session_log(s, "%s: did not take the pid filter: %s",
						    srcs[i]->name, s->error);
		}
		ret = n < 0 ? n : 0;
		if (n >= 0) {
			free(srcs);
			free(results);
		}
	}
	free(texts[0]);
	free(texts[1]);
	return ret;
}

unsigned int usertp_session_specs(const struct usertp_session *s, const char *const **specs)
{
	*specs = (const char *const *)s->specs;
	return s->nr_specs;
}

/* --- reading the buffers ------------------------------------------------------------------ */

struct page_arg {
	struct usertp_session *s;
	struct usertp__source *src;
	unsigned int cpu;
};

/* A page of the snapshot at the end (or a copy): to the file, or to the reader's queue. */
static int take_page(const struct usertp__rb_page_copy *page, uint64_t events, void *arg)
{
	struct page_arg *a = arg;

	if (a->s->dat)
		return usertp__writer_page(a->s, a->src, a->cpu, page->data, page->used,
					   page->lost_before, events);
	return usertp__reader_page(a->s, a->src, a->cpu, page);
}

/* File mode: a complete page goes to the spool from where it is, copied once. */
static int spool_page(const struct usertp__rb_page_ref *page, void *arg)
{
	struct page_arg *a = arg;

	return usertp__writer_page(a->s, a->src, a->cpu, page->page, page->used,
				   page->lost_before, page->events);
}

/* Take the complete pages the source's writers left since last time. */
static void source_consume(struct usertp_session *s, struct usertp__source *src)
{
	uint64_t n;

	if (!src->view || src->ended || s->overwrite || usertp__writer_error(s))
		return;
	for (unsigned int cpu = 0; cpu < src->view->nr_cpus; cpu++) {
		struct page_arg arg = { s, src, cpu };
		int ret;

		if (s->reader && !usertp__reader_room(src, cpu))
			continue; /* read later: the program's buffer holds them meanwhile */
		ret = s->dat ? usertp__rb_consume_pages(src->view, cpu, spool_page, &arg, &n)
			     : usertp__rb_consume(src->view, cpu, take_page, &arg, &n);
		if (ret == -EINVAL) {
			usertp__session_log(s, "%s: its buffer does not hold together; reading it stops",
					    src->name);
			src->ended = true;
			return;
		}
		/* On disk after each round: a process killed now leaves them recoverable. */
		if (n && s->dat)
			usertp__writer_flush(s, src, cpu);
	}
}

/* The rest: the page being written, or in overwrite mode everything still there. */
static void source_finish(struct usertp_session *s, struct usertp__source *src)
{
	struct usertp__rb_snapshot snap;

	if (!src->view || src->ended)
		return;
	source_consume(s, src);
	if (usertp__rb_snapshot(src->map, src->size, &snap) == 0) {
		for (unsigned int cpu = 0; cpu < snap.nr_cpus && cpu < src->view->nr_cpus; cpu++) {
			const struct usertp__rb_cpu_snapshot *c = &snap.cpus[cpu];

			for (unsigned int p = 0; p < c->nr_pages; p++) {
				struct usertp__rb_page_copy page = c->pages[p];
				struct page_arg arg = { s, src, cpu };

				/* Overwritten events were before the oldest page kept. */
				if (p == 0 && s->overwrite)
					page.lost_before += c->overrun;
				if ((page.used || page.lost_before) && !usertp__writer_error(s))
					take_page(&page, 0, &arg);
			}
			if (s->dat) {
				usertp__writer_flush(s, src, cpu);
				s->events += c->entries;
				s->read[cpu] += c->entries;
				src->stats[cpu].read += c->entries;
			}
			s->dropped[cpu] += c->dropped;
			src->stats[cpu].dropped = c->dropped;
			/* (Without overwrite, "overrun" are the pages we consumed.) */
			s->overrun[cpu] += s->overwrite ? c->overrun : 0;
			src->stats[cpu].overrun = s->overwrite ? c->overrun : 0;
		}
		usertp__rb_snapshot_free(&snap);
	}
	src->ended = true;
	/* Nothing more is asked of it: a connection left open would wake the loop for nothing. */
	if (src->query >= 0 && !src->comms_asked) {
		close(src->query);
		src->query = -1;
	}
}

void usertp__session_drain(struct usertp_session *s)
{
	for (unsigned int i = 0; i < s->nr_sources; i++) {
		struct usertp__source *src = s->sources[i];
		struct pollfd p = { src->session, POLLIN, 0 };

		/* What a program that has ended said last ("exit": its threads' names). */
		while (src->session >= 0 && poll(&p, 1, 0) == 1 && session_message(s, src))
			;
		source_refresh(s, src);
		if (src->session >= 0) {
			close(src->session);
			src->session = -1;
		}
		if (!src->ended)
			source_finish(s, src);
	}
}

/* --- running ------------------------------------------------------------------------------ */

int usertp_session_fd(const struct usertp_session *s)
{
	return s->epoll_fd;
}

/* Every descriptor there is to watch, in the epoll set (closed ones leave it by themselves). */
static void watch_all(struct usertp_session *s)
{
	struct epoll_event ev = { .events = EPOLLIN };

	for (unsigned int i = 0; i < s->nr_sources; i++) {
		struct usertp__source *src = s->sources[i];

		if (src->session >= 0 && !src->ended) {
			ev.data.fd = src->session;
			epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, src->session, &ev);
		}
		if (src->comms_asked) {
			ev.data.fd = src->query;
			epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, src->query, &ev);
		}
		/* Past the watermark, the writers wake us rather than wait for a timeout. */
		if (src->view && !src->ended && !s->overwrite && !usertp__writer_error(s))
			usertp__rb_wait_request(src->view);
	}
}

int usertp_session_process(struct usertp_session *s, int timeout_ms)
{
	struct epoll_event events[16];
	static __thread long long last_comms;
	long long now;
	unsigned int i, n = 0;
	struct pollfd *pfd;

	watch_all(s);
	if (timeout_ms)
		epoll_wait(s->epoll_fd, events, 16, timeout_ms);
	pfd = calloc(s->nr_sources * 2 + 3, sizeof(*pfd));
	if (!pfd)
		return -ENOMEM;
	pfd[n++] = (struct pollfd){ s->listen_fd, POLLIN, 0 };
	pfd[n++] = (struct pollfd){ s->wake_fd, POLLIN, 0 };
	pfd[n++] = (struct pollfd){ s->every_fd, POLLIN, 0 };
	for (i = 0; i < s->nr_sources; i++) {
		struct usertp__source *src = s->sources[i];

		pfd[n++] = (struct pollfd){ src->comms_asked ? src->query : -1, POLLIN, 0 };
		pfd[n++] = (struct pollfd){ src->ended ? -1 : src->session, POLLIN, 0 };
	}
	poll(pfd, n, 0);
	if (pfd[1].revents) {
		uint64_t count;

		(void)!read(s->wake_fd, &count, sizeof(count));
	}
	/* (Sources that join now come after those polled.) */
	for (i = 0; i < (n - 3) / 2; i++) {
		struct usertp__source *src = s->sources[i];

		if (pfd[3 + 2 * i].revents && src->comms_asked && pfd[3 + 2 * i].fd == src->query)
			source_comms_reply(s, src);
		/* (A join may have ended it meanwhile: a program that exec'd.) */
		if (src->ended || src->session < 0 || pfd[4 + 2 * i].fd != src->session)
			continue;
		if (pfd[4 + 2 * i].revents && !session_message(s, src)) {
			/* Gone: what it committed is still in our mapping. */
			close(src->session);
			src->session = -1;
			source_finish(s, src);
		}
	}
	if (pfd[0].revents)
		accept_one(s, s->listen_fd);
	if (pfd[2].revents)
		accept_one(s, s->every_fd);
	free(pfd);
	for (i = 0; i < s->nr_sources; i++)
		source_consume(s, s->sources[i]);
	/* The names of the threads, once a second. */
	now = usertp__mono_ms();
	if (now - last_comms >= 1000) {
		last_comms = now;
		for (i = 0; i < s->nr_sources; i++)
			source_ask_comms(s->sources[i]);
	}
	watch_all(s);
	if (s->run_stopped) {
		s->run_stopped = false; /* (said once) */
		return usertp__session_fail(s, -ECANCELED, "the command was stopped before its main(): "
					    "an event it defines does not take its filter");
	}
	return 0;
}

/* --- the session -------------------------------------------------------------------------- */

int usertp_session_new(struct usertp_session **out, const struct usertp_session_options *opts)
{
	struct usertp_session_options none = { 0 };
	struct usertp_session *s;
	struct epoll_event ev = { .events = EPOLLIN };
	enum usertp__rb_clock clock = USERTP_RB_CLOCK_MONO;
	const char *why_not;
	char why[160];
	int ret;

	*out = NULL;
	if (!opts)
		opts = &none;
	if (opts->buffer_kb > USERTP_RB_MAX_KB)
		return -ERANGE;
	if (opts->clock && usertp__rb_parse_clock(opts->clock, &clock, &why_not))
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->listen_fd = s->every_fd = s->wake_fd = s->epoll_fd = -1;
	s->kb = opts->buffer_kb ? opts->buffer_kb : USERTP_RB_DEFAULT_KB;
	s->overwrite = opts->overwrite;
	s->tsc = clock == USERTP_RB_CLOCK_TSC;
	s->tracing = !opts->tracing_off;
	s->nr_cpus = (unsigned int)get_nprocs_conf();
	if (usertp__rb_size_check(s->nr_cpus, s->kb, why, sizeof(why))) {
		usertp_session_free(s);
		return -ENOMEM;
	}
	s->read = calloc(USERTP_MERGE_MAX_CPUS, sizeof(*s->read));
	s->dropped = calloc(USERTP_MERGE_MAX_CPUS, sizeof(*s->dropped));
	s->overrun = calloc(USERTP_MERGE_MAX_CPUS, sizeof(*s->overrun));
	if (!s->read || !s->dropped || !s->overrun) {
		usertp_session_free(s);
		return -ENOMEM;
	}
	s->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	ret = s->wake_fd < 0 || s->epoll_fd < 0 ? -errno : listen_open(s);
	if (!ret) {
		ev.data.fd = s->listen_fd;
		epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, s->listen_fd, &ev);
		ev.data.fd = s->wake_fd;
		epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, s->wake_fd, &ev);
		ret = usertp__reader_new(s);
	}
	if (ret) {
		usertp_session_free(s);
		return ret;
	}
	*out = s;
	return 0;
}

void usertp_session_free(struct usertp_session *s)
{
	if (!s)
		return;
	for (unsigned int i = 0; i < s->nr_sources; i++) {
		struct usertp__source *src = s->sources[i];

		if (src->session >= 0)
			close(src->session);
		if (src->query >= 0)
			close(src->query);
		usertp__writer_source_free(src);
		usertp__reader_source_free(src);
		if (src->map)
			munmap(src->map, src->size);
		for (unsigned int e = 0; e < src->nr_events; e++) {
			free((char *)src->events[e].system);
			free((char *)src->events[e].format);
		}
		free(src->events);
		free(src->view);
		free(src->stats);
		free(src->comms);
		free(src);
	}
	free(s->sources);
	free(s->message);
	usertp__reader_free(s);
	usertp__writer_free(s);
	for (unsigned int i = 0; i < s->nr_specs; i++)
		free(s->specs[i]);
	free(s->specs);
	for (unsigned int i = 0; i < s->nr_filters; i++) {
		free(s->filters[i].events);
		free(s->filters[i].text);
	}
	free(s->filters);
	usertp__pid_list_free(&s->trace_pids);
	usertp__pid_list_free(&s->notrace_pids);
	free(s->names.text);
	free(s->read);
	free(s->dropped);
	free(s->overrun);
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	if (s->epoll_fd >= 0)
		close(s->epoll_fd);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->every_fd >= 0)
		close(s->every_fd);
	if (s->every_path[0])
		unlink(s->every_path);
	if (s->all_path[0])
		unlink(s->all_path);
	if (s->sock_path[0])
		unlink(s->sock_path);
	free(s);
}

/* --- programs and counts ------------------------------------------------------------------ */

unsigned int usertp_session_nr_programs(const struct usertp_session *s)
{
	return s->nr_sources;
}

int usertp_session_program(const struct usertp_session *s, unsigned int index,
			   struct usertp_program_info *info)
{
	const struct usertp__source *src;

	if (index >= s->nr_sources)
		return -ERANGE;
	src = s->sources[index];
	memset(info, 0, sizeof(*info));
	info->pid = src->pid;
	memcpy(info->comm, src->comm, sizeof(info->comm));
	info->running = !src->ended && src->session >= 0;
	info->forked_from = src->forked_from ? src->forked_from->pid : 0;
	info->nr_cpus = src->view ? src->view->nr_cpus : 0;
	return 0;
}

/* Events dropped by @cpu's buffer of @src so far, by its counter. */
static uint64_t live_dropped(const struct usertp__source *src, unsigned int cpu)
{
	const struct usertp__rb_cpu *c =
		(const void *)((const char *)src->map + src->view->cpu_offset[cpu]);

	return __atomic_load_n(&c->dropped, __ATOMIC_RELAXED);
}

int usertp_session_cpu_stats(const struct usertp_session *s, unsigned int index, unsigned int cpu,
			     struct usertp_cpu_stats *stats)
{
	const struct usertp__source *src;

	if (index >= s->nr_sources)
		return -ERANGE;
	src = s->sources[index];
	if (!src->view || cpu >= src->view->nr_cpus)
		return -ERANGE;
	*stats = src->stats[cpu];
	if (!src->ended)
		stats->dropped = live_dropped(src, cpu);
	return 0;
}

void usertp_session_status(const struct usertp_session *s, struct usertp_session_status *st)
{
	memset(st, 0, sizeof(*st));
	st->programs = s->nr_sources;
	st->untraced = s->untraced;
	st->refused = s->refused;
	st->events = s->events;
	st->bytes = usertp__writer_bytes(s);
	st->write_error = usertp__writer_error(s);
	for (unsigned int i = 0; i < s->nr_sources; i++) {
		const struct usertp__source *src = s->sources[i];

		st->running += !src->ended && src->session >= 0;
		for (unsigned int cpu = 0; src->view && cpu < src->view->nr_cpus; cpu++)
			st->dropped += src->ended ? src->stats[cpu].dropped : live_dropped(src, cpu);
	}
}
