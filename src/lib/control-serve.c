/* SPDX-License-Identifier: MIT */
/*
 * control-serve.c - the control endpoint's requests (control.c says which there are): each
 * served by its handler, its reply made by the protocol's codec.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl-proto.h"
#include "internal.h"
#include "listener.h"
#include "proc.h"
#include "remote-session.h"
#include "control-private.h"

/* --- replies ------------------------------------------------------------------------------ */



void usertp__control_reply_add(struct reply *r, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(r->buf ? r->buf + r->len : NULL, r->buf ? r->cap - r->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if (r->buf && (size_t)n < r->cap - r->len) {
			r->len += (size_t)n;
			return;
		}
		if (r->len + (size_t)n + 1 > USERTP_CTL_MAX_MSG)
			return; /* cut: the reader sees a shorter list */
		{
			size_t cap = r->cap ? r->cap : 4096;
			char *p;

			while (cap < r->len + (size_t)n + 1)
				cap *= 2;
			p = realloc(r->buf, cap);
			if (!p)
				return;
			r->buf = p;
			r->cap = cap;
		}
	}
}

static void event_line(const struct usertp_event *ev, int id, void *arg)
{
	(void)id;
	usertp__control_reply_add(arg, "%s:%s\n", usertp_event_system(ev), usertp_event_name(ev));
}

static void id_line(const struct usertp_event *ev, int id, void *arg)
{
	usertp__control_reply_add(arg, "%d %s:%s\n", id, usertp_event_system(ev),
				  usertp_event_name(ev));
}

static void reply_error(struct reply *r, int err, const char *why);
static void reply_ok(struct reply *r);

static void reply_format(struct reply *r, const char *spec)
{
	char system[256], why[300];
	const char *colon = strchr(spec, ':');
	const struct usertp_event *ev;
	char *text;
	int n;

	if (!colon || (size_t)(colon - spec) >= sizeof(system)) {
		snprintf(why, sizeof(why), "not SYSTEM:EVENT: %.256s", spec);
		reply_error(r, -EINVAL, why);
		return;
	}
	memcpy(system, spec, (size_t)(colon - spec));
	system[colon - spec] = 0;
	ev = usertp_event_find(system, colon + 1);
	n = ev ? usertp_event_format(ev, NULL, 0) : -ENOENT;
	text = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (!text || usertp_event_format(ev, text, (size_t)n + 1) < 0) {
		snprintf(why, sizeof(why), "no event %.256s", spec);
		reply_error(r, -ENOENT, why);
	} else {
		reply_ok(r);
		usertp__control_reply_add(r, "%s", text);
	}
	free(text);
}

/* "tid comm" lines of the threads that recorded, from note @since on; returns the next one. */
uint64_t usertp__control_reply_comms_lines(struct reply *r, uint64_t since)
{
	size_t size = 1 << 18;
	char *text = malloc(size);
	uint64_t next = since;

	if (text) {
		usertp__comm_lines(text, size, since, &next);
		usertp__control_reply_add(r, "%s", text);
	}
	free(text);
	return next;
}

static void reply_msg(struct reply *r, const struct usertp__ctl_msg *m)
{
	char *text = NULL;
	long len = usertp__ctl_encode(m, &text);

	if (len < 0)
		reply_error(r, (int)len, NULL);
	else
		usertp__control_reply_add(r, "%s", text);
	free(text);
}

/* An "error ERRNO text" reply of a negative errno (@why: NULL, strerror()), by the codec. */
static void reply_error(struct reply *r, int err, const char *why)
{
	char *text = NULL;

	if (usertp__ctl_encode_error(err, why, &text) > 0)
		usertp__control_reply_add(r, "%s", text);
	free(text);
}

/* An "ok" reply's line; what follows it (a listing, a format) is its body. */
static void reply_ok(struct reply *r)
{
	reply_msg(r, &(struct usertp__ctl_msg){ .type = USERTP_CTL_MSG_OK });
}

static void reply_enabled(struct reply *r, const struct usertp__session *s)
{
	struct usertp__ctl_msg m;
	size_t size = 1 << 18;
	char *text = malloc(size);

	if (!text) {
		reply_error(r, -ENOMEM, NULL);
		return;
	}
	usertp__session_enabled(s, text, size);
	m = (struct usertp__ctl_msg){ .type = USERTP_CTL_MSG_OK, .body = text };
	usertp__ctl_set_num(&m, USERTP_CTL_KEY_SIZE, s->sink.rb.size);
	reply_msg(r, &m);
	free(text);
}

/* One session in a "sessions" reply: "session N tracing=0|1", its events and filters. */
static void describe_session(FILE *f, unsigned int n, const struct usertp__session *s,
			     bool joining)
{
	fprintf(f, "session %u tracing=%d%s\n", n, s->tracing,
		joining ? " joining-again" : "");
	usertp__listener_describe(s->listener, f);
}

/*
 * Every session's settings as they are now ("sessions"), or only @only's ("listed").  Every
 * session: those on a connection, and those whose connection the program closed (a daemon),
 * recording on while the program joins their recorder again ("joining-again": control.c's
 * rejoin(); before, they were left out, as if nothing recorded the program).
 */
static void reply_sessions(struct reply *r, const struct usertp__session *only)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	unsigned int n = 0;

	if (!f)
		return;
	pthread_mutex_lock(&usertp__ctl.lock);
	for (unsigned int i = 0; i < MAX_CONNS; i++) {
		const struct conn *c = &usertp__ctl.conns[i];

		if (c->fd < 0 || (only && c->session != only))
			continue;
		if (c->session)
			describe_session(f, ++n, c->session, false);
		else if (c->replaces) /* (joined, not yet resumed or started) */
			describe_session(f, ++n, c->replaces, true);
	}
	for (unsigned int i = 0; !only && i < MAX_CONNS; i++)
		if (usertp__ctl.rejoins[i].session)
			describe_session(f, ++n, usertp__ctl.rejoins[i].session, true);
	pthread_mutex_unlock(&usertp__ctl.lock);
	if (!fclose(f))
		usertp__control_reply_add(r, "%s", text);
	free(text);
}

/* The process's name: its main thread's (not the name of the thread asking). */
void usertp__control_process_comm(char *buf, size_t size)
{
	usertp__proc_comm(0, 0, buf, size);
}

/*
 * Whether the descriptor that came with @c's request is a recorder's wake socket, still: a
 * datagram socket of its (a socketpair's end, which no send to can block or raise SIGPIPE).
 * (Only sockets are kept as they come: usertp__control_conn_take_fd().)
 */
static bool is_wake_fd(const struct conn *c)
{
	int type = 0, domain = 0;
	socklen_t len = sizeof(type);

	if (c->in_fd < 0 || !usertp__fd_is(c->in_fd, &c->in_fd_id) ||
	    getsockopt(c->in_fd, SOL_SOCKET, SO_TYPE, &type, &len))
		return false;
	len = sizeof(domain);
	return type == SOCK_DGRAM && !getsockopt(c->in_fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) &&
	       domain == AF_UNIX;
}


/*
 * The requests, one handler each, called with the request decoded (@m, its texts in the
 * request's buffer).  Return: the descriptor to send with the reply, -1 for none, -2 for no
 * reply at all; the reply is in @r.
 */
static int serve_hello(struct conn *c, struct usertp__ctl_msg *m, struct reply *r)
{
	char comm[17];

	(void)c;
	usertp__control_process_comm(comm, sizeof(comm));
	*m = (struct usertp__ctl_msg){ .type = USERTP_CTL_MSG_OK };
	usertp__ctl_set_num(m, USERTP_CTL_KEY_PID, (uint64_t)getpid());
	usertp__ctl_set_num(m, USERTP_CTL_KEY_PPID, (uint64_t)getppid());
	usertp__ctl_set_num(m, USERTP_CTL_KEY_UID, geteuid());
	usertp__ctl_set_num(m, USERTP_CTL_KEY_CPUS, (uint64_t)get_nprocs_conf());
	usertp__ctl_set_num(m, USERTP_CTL_KEY_VERSION, USERTP_CTL_VERSION);
	usertp__ctl_set_text(m, USERTP_CTL_KEY_COMM, comm);
	reply_msg(r, m);
	return -1;
}

static int serve_events(struct conn *c, struct usertp__ctl_msg *m, struct reply *r)
{
	(void)c;
	reply_ok(r);
	usertp__event_foreach_locked(m->type == USERTP_CTL_MSG_IDS ? id_line : event_line, r);
	return -1;
}

static int serve_format(struct conn *c, struct usertp__ctl_msg *m, struct reply *r)
{
	(void)c;
	reply_format(r, m->arg ? m->arg : "");
	return -1;
}

/*
 * "comms [since=N]": "ok since=M" (ask since=M next time), then the lines of the threads
 * noted from N on (all the ring holds without since=).
 */
static int serve_comms(struct conn *c, struct usertp__ctl_msg *m, struct reply *r)
{
	struct reply lines = { 0 };
	uint64_t next;

	(void)c;
	next = usertp__control_reply_comms_lines(
		&lines, m->has & USERTP_CTL_K(SINCE) ? m->num[USERTP_CTL_KEY_SINCE] : 0);
	reply_msg(r, &(struct usertp__ctl_msg){ .type = USERTP_CTL_MSG_OK,
						.has = USERTP_CTL_K(SINCE),
						.num[USERTP_CTL_KEY_SINCE] = next });
	if (lines.buf)
		usertp__control_reply_add(r, "%s", lines.buf);
	free(lines.buf);
	return -1;
}

/* usertp_printk()'s formats and call sites, all of them (printk_formats, then kallsyms lines). */
static int serve_printk(struct conn *c, struct usertp__ctl_msg *m, struct reply *r)
{
	unsigned int n = usertp__printk_count();
	size_t flen = usertp__printk_lines(0, n, false, NULL, 0);
	size_t klen = usertp__printk_lines(0, n, true, NULL, 0);
	char *text = malloc(flen + klen + 1);

	(void)c;
	(void)m;
	if (!text) {
		reply_error(r, -ENOMEM, NULL);
		return -1;
	}
	usertp__printk_lines(0, n, false, text, flen + 1);
	usertp__printk_lines(0, n, true, text + flen, klen + 1);
	reply_ok(r);
	usertp__control_reply_add(r, "%s", text);
	free(text);
	return -1;
}

static int serve_start(struct conn *c, struct usertp__ctl_msg *m, struct reply *r)
{
	struct usertp__session *s;
	const char *why;
	int ret, wake_fd;

	if (c->session) {
		reply_error(r, -EBUSY, "this connection has a session already");
		return -1;
	}
	/* With the recorder's wake socket, to wake it when the buffers fill (ring-buffer.h). */
	wake_fd = is_wake_fd(c) ? c->in_fd : -1;
	ret = usertp__session_start(m, wake_fd, &c->in_fd_id, &s, &why);
	if (!ret && wake_fd >= 0)
		c->in_fd = -1; /* the session's now */
	if (ret) {
		reply_error(r, ret, why);
		return -1;
	}
	/* Told first, listed after: an event that comes in between is told twice, not never. */
	usertp__session_news_skip(s);
	reply_enabled(r, s);
	pthread_mutex_lock(&usertp__ctl.lock);
	c->session = s;
	pthread_mutex_unlock(&usertp__ctl.lock);
	r->fd_id = s->sink.rb.fd_id;
	return s->sink.rb.fd;
}

static int serve_set(struct conn *c, struct usertp__ctl_msg *m, struct reply *r)
{
	const char *why;
	int ret = usertp__session_set(c->session, m, &why);

	if (ret) {
		reply_error(r, ret, why);
		return -1;
	}
	/* The formats of the events it records now go first (queued before the reply). */
	pthread_mutex_lock(&usertp__ctl.lock);
	usertp__session_news(c->session, usertp__control_news_send, c);
	pthread_mutex_unlock(&usertp__ctl.lock);
	reply_enabled(r, c->session);
	return -1;
}

/* "ok", or the error @ret (a negative errno) with @why.  Return: -1 (no descriptor). */
static int reply_result(struct reply *r, int ret, const char *why)
{
	if (ret)
		reply_error(r, ret, why);
	else
		reply_ok(r);
	return -1;
}

static int serve_filter(struct conn *c, struct usertp__ctl_msg *m, struct reply *r)
{
	const char *why;
	int ret = usertp__session_filter(c->session, m->text[USERTP_CTL_KEY_EVENTS], m->body, &why);

	return reply_result(r, ret, why);
}

static int serve_pids(struct conn *c, struct usertp__ctl_msg *m, struct reply *r)
{
	return reply_result(r, usertp__session_pids(c->session, m, false), NULL);
}

/* "sessions": every session of the program; "listed": this connection's. */
static int serve_sessions(struct conn *c, struct usertp__ctl_msg *m, struct reply *r)
{
	reply_ok(r);
	reply_sessions(r, m->type == USERTP_CTL_MSG_LISTED ? c->session : NULL);
	return -1;
}

static int serve_enabled(struct conn *c, struct usertp__ctl_msg *m, struct reply *r)
{
	(void)m;
	reply_enabled(r, c->session);
	return -1;
}

static int serve_stop(struct conn *c, struct usertp__ctl_msg *m, struct reply *r)
{
	struct usertp__session *s;

	(void)m;
	pthread_mutex_lock(&usertp__ctl.lock);
	s = c->session;
	c->session = NULL;
	pthread_mutex_unlock(&usertp__ctl.lock);
	usertp__session_end(s);
	reply_ok(r);
	return -1;
}

/*
 * On a connection made to join a recorder again (control.c's conn_lost()): the session whose
 * connection the program closed goes on on this one, recording all along; the recorder then
 * hears every event's name and format again (usertp__session_news(), once the reply is sent:
 * conn_request()), since what was queued on the closed one never went; and is woken with the
 * wake socket that came with the request, the one the session had having gone with the rest.
 */
static int serve_resume(struct conn *c, struct usertp__ctl_msg *m, struct reply *r)
{
	(void)m;
	if (c->session || !c->replaces) {
		reply_error(r, -ENOENT, "no session to resume on this connection");
		return -1;
	}
	if (is_wake_fd(c)) {
		usertp__rb_set_wake_fd(&c->replaces->sink.rb, c->in_fd, &c->in_fd_id);
		c->in_fd = -1; /* the session's now */
	}
	pthread_mutex_lock(&usertp__ctl.lock);
	c->session = c->replaces;
	c->replaces = NULL;
	/* (What was queued on the connection the program closed never went: all again.) */
	usertp__session_news_forget(c->session);
	c->news_due = true;
	pthread_mutex_unlock(&usertp__ctl.lock);
	reply_ok(r);
	return -1;
}

/* The end of a join (join_recorder()), or go on after a refusal: no reply. */
static int serve_run(struct conn *c, struct usertp__ctl_msg *m, struct reply *r)
{
	(void)m;
	(void)r;
	if (c->session) {
		pthread_mutex_lock(&usertp__lock);
		usertp__session_verdict_locked(c->session, true);
		pthread_mutex_unlock(&usertp__lock);
	}
	return -2;
}

static const struct {
	int (*serve)(struct conn *c, struct usertp__ctl_msg *m, struct reply *r);
	bool on_session; /* asks about this connection's session: there must be one */
} requests[USERTP_CTL_NR_TYPES] = {
	[USERTP_CTL_MSG_HELLO] = { serve_hello, false },
	[USERTP_CTL_MSG_EVENTS] = { serve_events, false },
	[USERTP_CTL_MSG_IDS] = { serve_events, false },
	[USERTP_CTL_MSG_FORMAT] = { serve_format, false },
	[USERTP_CTL_MSG_COMMS] = { serve_comms, false },
	[USERTP_CTL_MSG_PRINTK] = { serve_printk, false },
	[USERTP_CTL_MSG_START] = { serve_start, false },
	[USERTP_CTL_MSG_SET] = { serve_set, true },
	[USERTP_CTL_MSG_FILTER] = { serve_filter, true },
	[USERTP_CTL_MSG_PIDS] = { serve_pids, true },
	[USERTP_CTL_MSG_SESSIONS] = { serve_sessions, false },
	[USERTP_CTL_MSG_LISTED] = { serve_sessions, true },
	[USERTP_CTL_MSG_ENABLED] = { serve_enabled, true },
	[USERTP_CTL_MSG_STOP] = { serve_stop, false },
	[USERTP_CTL_MSG_RUN] = { serve_run, false },
	[USERTP_CTL_MSG_RESUME] = { serve_resume, false },
};

/*
 * Serve one request of connection @c (@req, changed in place).  Return: the descriptor to
 * send with the reply, -1 for none, -2 for no reply; the reply is in @r.
 */
int usertp__control_serve(struct conn *c, char *req, struct reply *r)
{
	struct usertp__ctl_msg m;
	const char *why;

	if (usertp__ctl_decode(req, &m, &why)) {
		reply_error(r, -EINVAL, why);
		return -1;
	}
	if (!requests[m.type].serve) {
		char not_one[64];

		snprintf(not_one, sizeof(not_one), "not a request: '%s'", usertp__ctl_word(m.type));
		reply_error(r, -EINVAL, not_one);
		return -1;
	}
	if (requests[m.type].on_session && !c->session) {
		reply_error(r, -ENOENT, "no session on this connection");
		return -1;
	}
	return requests[m.type].serve(c, &m, r);
}
