/* SPDX-License-Identifier: MIT */
/*
 * control.c - the control endpoint: how usertp (list, record) and later the tracefs file
 * system reach a running program.
 *
 * At start-up libusertp listens on "<runtime dir>/<pid>.sock" (ctl-proto.h says where and
 * how messages look) with one thread that sleeps in poll() until someone connects: no other
 * cost for a program that is never traced, and USERTP_CONTROL=0 switches it off (no thread,
 * no socket).  Starting the program never waits for anything, except under
 * `usertp record -- CMD`, whose USERTP_SESSION variable makes the program join the recorder
 * before main() ("join", below).
 *
 * Requests (one per message; replies "ok..." or "error ERRNO text"):
 *	hello			ok pid= ppid= uid= cpus= version= comm=
 *	events			ok, then "sys:event" lines (available_events)
 *	ids			ok, then "id sys:event" lines
 *	format SYS:EVENT	ok, then the event's format text
 *	comms			ok, then "tid comm" lines of the threads that recorded
 *	start events=SPECS kb=N overwrite=0|1 clock=mono|x86-tsc recorder=PATH
 *				ok size=BYTES, then "id sys:event" lines, with the region's memfd
 *	enabled			ok, then the "id sys:event" lines of the session
 *	stop			ok: the session ends (as it does when the connection closes)
 *
 * Every connection's peer must be this user or root; others get one error line and are
 * closed.  A peer that sends something malformed gets an error; one that sends too much or
 * stalls mid-message is disconnected.  Nothing a peer sends can stop the program.
 */
#define _GNU_SOURCE
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
#include "session.h"

#define MAX_CONNS 16
#define PART_TIMEOUT_MS 2000   /* for the rest of a message once it has begun */
#define JOIN_TIMEOUT_MS 10000  /* for the recorder to answer at start-up */

struct conn {
	int fd;
	struct usertp__session *session;
	bool held; /* the start-up path is using it: the thread leaves it alone */
};

static struct {
	bool on;   /* the endpoint: not with USERTP_CONTROL=0 */
	pid_t pid; /* 0 until set up (and never with USERTP_CONTROL=0 and no recorder to join) */
	int listen_fd;
	int wake[2]; /* written to make the thread look at the connections again */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	pthread_mutex_t lock; /* conns */
	pthread_mutex_t send_lock; /* one message at a time on any connection */
	struct conn conns[MAX_CONNS];
	int joined; /* the connection to the recorder that started us, until "ready", or -1 */
} ctl = { .listen_fd = -1, .wake = { -1, -1 }, .lock = PTHREAD_MUTEX_INITIALIZER,
	     .send_lock = PTHREAD_MUTEX_INITIALIZER, .joined = -1 };

/* --- replies ------------------------------------------------------------------------------ */

struct reply {
	char *buf;
	size_t len, cap;
};

static void reply_add(struct reply *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reply_add(struct reply *r, const char *fmt, ...)
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

static int event_line(const struct usertp_event *ev, void *arg)
{
	reply_add(arg, "%s:%s\n", usertp_event_system(ev), usertp_event_name(ev));
	return 0;
}

static int id_line(const struct usertp_event *ev, void *arg)
{
	reply_add(arg, "%d %s:%s\n", usertp_event_id(ev), usertp_event_system(ev),
		  usertp_event_name(ev));
	return 0;
}

static void reply_format(struct reply *r, const char *spec)
{
	char system[256];
	const char *colon = strchr(spec, ':');
	const struct usertp_event *ev;
	char *text;
	int n;

	if (!colon || (size_t)(colon - spec) >= sizeof(system)) {
		reply_add(r, "error EINVAL not SYSTEM:EVENT: %s\n", spec);
		return;
	}
	memcpy(system, spec, (size_t)(colon - spec));
	system[colon - spec] = 0;
	ev = usertp_event_find(system, colon + 1);
	n = ev ? usertp_event_format(ev, NULL, 0) : -ENOENT;
	text = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (!text || usertp_event_format(ev, text, (size_t)n + 1) < 0) {
		reply_add(r, "error ENOENT no event %s\n", spec);
	} else {
		reply_add(r, "ok\n%s", text);
	}
	free(text);
}

/* "tid comm" lines of the threads that recorded. */
static void reply_comms_lines(struct reply *r)
{
	size_t size = 1 << 18;
	char *text = malloc(size);

	if (text) {
		usertp__comm_lines(text, size);
		reply_add(r, "%s", text);
	}
	free(text);
}

static void reply_enabled(struct reply *r, const struct usertp__session *s)
{
	size_t size = 1 << 18;
	char *text = malloc(size);

	if (!text) {
		reply_add(r, "error ENOMEM\n");
		return;
	}
	usertp__session_enabled(s, text, size);
	reply_add(r, "ok size=%zu\n%s", s->sink.rb.size, text);
	free(text);
}

/* The process's name: its main thread's (not the name of the thread asking). */
static void process_comm(char *buf, size_t size)
{
	int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	buf[strcspn(buf, "\n")] = 0;
}

/*
 * Serve one request of connection @c.  Return: the descriptor to send with the reply, or -1;
 * the reply is in @r.
 */
static int serve(struct conn *c, const char *req, struct reply *r)
{
	size_t cmd_len = strcspn(req, " \n");
	const char *why;
	int ret;

#define IS(word) (cmd_len == sizeof(word) - 1 && !strncmp(req, word, cmd_len))
	if (IS("hello")) {
		char comm[17];

		process_comm(comm, sizeof(comm));
		reply_add(r, "ok pid=%d ppid=%d uid=%u cpus=%d version=%d comm=%s\n", (int)getpid(),
			  (int)getppid(), (unsigned int)geteuid(), get_nprocs_conf(),
			  USERTP_CTL_VERSION, comm);
	} else if (IS("events")) {
		reply_add(r, "ok\n");
		usertp_event_foreach(event_line, r);
	} else if (IS("ids")) {
		reply_add(r, "ok\n");
		usertp_event_foreach(id_line, r);
	} else if (IS("format")) {
		reply_format(r, req[cmd_len] == ' ' ? req + cmd_len + 1 : "");
	} else if (IS("comms")) {
		reply_add(r, "ok\n");
		reply_comms_lines(r);
	} else if (IS("start")) {
		if (c->session) {
			reply_add(r, "error EBUSY this connection has a session already\n");
			return -1;
		}
		ret = usertp__session_start(req, &c->session, &why);
		if (ret) {
			reply_add(r, "error %s %s\n", ret == -EBUSY ? "EBUSY" : ret == -ENOMEM ? "ENOMEM" : "EINVAL",
				  why ? why : strerror(-ret));
			return -1;
		}
		reply_enabled(r, c->session);
		return c->session->sink.rb.fd;
	} else if (IS("enabled")) {
		if (!c->session)
			reply_add(r, "error ENOENT no session on this connection\n");
		else
			reply_enabled(r, c->session);
	} else if (IS("stop")) {
		usertp__session_end(c->session);
		c->session = NULL;
		reply_add(r, "ok\n");
	} else {
		reply_add(r, "error EINVAL unknown request '%.*s'\n", (int)(cmd_len > 32 ? 32 : cmd_len),
			  req);
	}
#undef IS
	return -1;
}

/* Read one request of @c and answer it.  Return: false when the connection is over. */
static bool serve_one(struct conn *c, int timeout_ms, char *req, size_t cap, char *last_cmd,
		      size_t last_size)
{
	struct reply r = { NULL, 0, 0 };
	long n = usertp_ctl_recv(c->fd, req, cap, NULL, timeout_ms);
	int fd;
	bool ok;

	if (n == -EBADMSG) {
		ok = !usertp_ctl_sendf(c->fd, -1, "error EINVAL not a text message\n");
		return ok;
	}
	if (n <= 0)
		return false;
	if (last_cmd)
		snprintf(last_cmd, last_size, "%.*s", (int)strcspn(req, " \n"), req);
	if (last_cmd && !strcmp(last_cmd, "run"))
		return true;
	fd = serve(c, req, &r);
	pthread_mutex_lock(&ctl.send_lock);
	ok = r.buf && !usertp_ctl_send(c->fd, r.buf, r.len, fd);
	pthread_mutex_unlock(&ctl.send_lock);
	free(r.buf);
	return ok;
}

/* --- the thread --------------------------------------------------------------------------- */

static void conn_close(struct conn *c)
{
	struct usertp__session *s;

	pthread_mutex_lock(&ctl.lock);
	close(c->fd);
	c->fd = -1;
	s = c->session;
	c->session = NULL;
	pthread_mutex_unlock(&ctl.lock);
	/* Ending a session waits for a grace period: not under our lock. */
	usertp__session_end(s);
}

/* Return: the connection's index, or -1 when there are too many (it is then closed). */
static int conn_add(int fd, struct usertp__session *s, bool held)
{
	/* A peer that does not read cannot hold up the thread, or the exit, for long. */
	struct timeval send_timeout = { 1, 0 };
	int i;

	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof(send_timeout));

	pthread_mutex_lock(&ctl.lock);
	for (i = 0; i < MAX_CONNS; i++) {
		if (ctl.conns[i].fd < 0) {
			ctl.conns[i] = (struct conn){ fd, s, held };
			pthread_mutex_unlock(&ctl.lock);
			return i;
		}
	}
	pthread_mutex_unlock(&ctl.lock);
	usertp_ctl_sendf(fd, -1, "error EBUSY too many connections\n");
	close(fd);
	usertp__session_end(s);
	return -1;
}

static void accept_one(void)
{
	int fd = accept4(ctl.listen_fd, NULL, NULL, SOCK_CLOEXEC);
	uid_t uid;

	if (fd < 0)
		return;
	if (!usertp_ctl_peer_allowed(fd, &uid)) {
		usertp_ctl_sendf(fd, -1,
				 "error EACCES uid %u may not control process %d (uid %u): only its "
				 "user or root may\n",
				 (unsigned int)uid, (int)getpid(), (unsigned int)geteuid());
		close(fd);
		return;
	}
	conn_add(fd, NULL, false);
}

static void *control_thread(void *arg)
{
	static char req[65536];
	struct pollfd pfd[MAX_CONNS + 2];
	int idx[MAX_CONNS + 2];
	unsigned int i, n;

	(void)arg;
	for (;;) {
		pfd[0] = (struct pollfd){ ctl.listen_fd, POLLIN, 0 };
		pfd[1] = (struct pollfd){ ctl.wake[0], POLLIN, 0 };
		n = 2;
		pthread_mutex_lock(&ctl.lock);
		for (i = 0; i < MAX_CONNS; i++) {
			if (ctl.conns[i].fd >= 0 && !ctl.conns[i].held) {
				idx[n] = (int)i;
				pfd[n++] = (struct pollfd){ ctl.conns[i].fd, POLLIN, 0 };
			}
		}
		pthread_mutex_unlock(&ctl.lock);
		if (poll(pfd, n, -1) < 0)
			continue;
		if (pfd[1].revents) {
			char drain[64];

			(void)!read(ctl.wake[0], drain, sizeof(drain));
		}
		if (pfd[0].revents)
			accept_one();
		for (i = 2; i < n; i++) {
			struct conn *c = &ctl.conns[idx[i]];

			if (!pfd[i].revents)
				continue;
			/* Only this thread closes connections it polls: c stays valid. */
			if (!serve_one(c, PART_TIMEOUT_MS, req, sizeof(req), NULL, 0))
				conn_close(c);
		}
	}
	return NULL;
}

static void wake_thread(void)
{
	(void)!write(ctl.wake[1], "", 1);
}

/* --- start-up, fork, exit ----------------------------------------------------------------- */

static int endpoint_open(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[PATH_MAX];
	int fd, ret;

	ret = usertp_ctl_dir(dir, sizeof(dir), true);
	if (ret)
		return ret;
	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%d.sock", dir, (int)getpid()) >=
	    sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	unlink(sa.sun_path); /* left by a dead process that had our pid */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(sa.sun_path, 0600) ||
	    listen(fd, 16)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	if (pipe2(ctl.wake, O_CLOEXEC | O_NONBLOCK)) {
		ret = -errno;
		unlink(sa.sun_path);
		close(fd);
		return ret;
	}
	memcpy(ctl.path, sa.sun_path, sizeof(ctl.path));
	ctl.listen_fd = fd;
	return 0;
}

static void thread_start(void)
{
	pthread_attr_t attr;
	pthread_t thread;
	sigset_t all, old;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 1 << 17);
	/* The thread takes none of the program's signals. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (!pthread_create(&thread, &attr, control_thread, NULL))
		pthread_setname_np(thread, "usertp-control");
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
}

/*
 * At exit, each recorder hears which threads recorded (it could not ask a process that is
 * gone), and the endpoint goes.  The reply lock is only waited for a little: a recorder that
 * does not read must not hold up the exit.
 */
static void at_exit(void)
{
	struct timespec until;
	struct reply r = { NULL, 0, 0 };
	unsigned int i;

	if (getpid() != ctl.pid)
		return;
	if (ctl.path[0])
		unlink(ctl.path);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += 200 * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	/* Connections stay open meanwhile (ctl.lock), and no reply is half sent (send_lock). */
	if (pthread_mutex_timedlock(&ctl.lock, &until))
		return;
	if (pthread_mutex_timedlock(&ctl.send_lock, &until)) {
		pthread_mutex_unlock(&ctl.lock);
		return;
	}
	for (i = 0; i < MAX_CONNS; i++) {
		if (ctl.conns[i].fd < 0 || !ctl.conns[i].session)
			continue;
		if (!r.buf) {
			reply_add(&r, "exit\n");
			reply_comms_lines(&r);
		}
		if (r.buf)
			usertp_ctl_send(ctl.conns[i].fd, r.buf, r.len, -1);
	}
	pthread_mutex_unlock(&ctl.send_lock);
	pthread_mutex_unlock(&ctl.lock);
	free(r.buf);
}

/*
 * Under `usertp record -- CMD`: connect to the recorder and serve its requests until it says
 * "run", so that recording starts before main().  The connection is held (the thread does not
 * read it) until the program's own events are registered (usertp__control_main_registered()).
 */
static void join_recorder(const char *path, bool quiet)
{
	static char req[65536];
	char cmd[16] = "", comm[17];
	struct conn c = { -1, NULL, true };
	uid_t uid;

	c.fd = usertp_ctl_connect(path);
	if (quiet && c.fd < 0)
		return;
	if (c.fd < 0 || !usertp_ctl_peer_allowed(c.fd, &uid)) {
		fprintf(stderr, "usertp: cannot join the recorder at USERTP_SESSION=%s: %s; "
				"running untraced\n", path, c.fd < 0 ? strerror(-c.fd) : "not our user");
		if (c.fd >= 0)
			close(c.fd);
		return;
	}
	process_comm(comm, sizeof(comm));
	if (usertp_ctl_sendf(c.fd, -1, "join pid=%d ppid=%d comm=%s\n", (int)getpid(),
			     (int)getppid(), comm))
		goto fail;
	while (strcmp(cmd, "run"))
		if (!serve_one(&c, JOIN_TIMEOUT_MS, req, sizeof(req), cmd, sizeof(cmd)))
			goto fail;
	ctl.joined = conn_add(c.fd, c.session, true);
	return;
fail:
	fprintf(stderr, "usertp: the recorder at USERTP_SESSION=%s did not answer; running "
			"untraced\n", path);
	close(c.fd);
	usertp__session_end(c.session);
}

/* `usertp record -a` is running: it records every program of its user that starts. */
static void join_recorder_of_all(void)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];
	struct stat st;

	if (usertp_ctl_dir(dir, sizeof(dir), false))
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, USERTP_CTL_RECORD_ALL);
	if (!stat(path, &st) && S_ISSOCK(st.st_mode))
		join_recorder(path, true);
}

void usertp__control_main_registered(void)
{
	static char msg[65536];
	struct reply r = { NULL, 0, 0 };
	char cmd[16] = "";
	struct conn *c;
	bool ok;

	if (ctl.joined < 0)
		return;
	c = &ctl.conns[ctl.joined];
	ctl.joined = -1;
	/*
	 * The recorder checks its event specs against the program's events and takes the formats
	 * it needs (a short-lived program may be gone before it could ask later), before main().
	 */
	reply_add(&r, "ready\n");
	usertp_event_foreach(event_line, &r);
	ok = r.buf && !usertp_ctl_send(c->fd, r.buf, r.len, -1);
	free(r.buf);
	while (ok && strcmp(cmd, "run"))
		ok = serve_one(c, JOIN_TIMEOUT_MS, msg, sizeof(msg), cmd, sizeof(cmd));
	if (!ok) {
		conn_close(c);
		return;
	}
	pthread_mutex_lock(&ctl.lock);
	c->held = false;
	pthread_mutex_unlock(&ctl.lock);
	wake_thread();
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&ctl.lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&ctl.lock);
}

/* A forked child: its own endpoint and thread; its sessions get their own buffers. */
static void fork_child(void)
{
	bool endpoint_ok;
	unsigned int i;

	pthread_mutex_unlock(&ctl.lock);
	pthread_mutex_init(&ctl.send_lock, NULL);
	if (!ctl.pid)
		return; /* nothing of ours runs in this process */
	ctl.pid = getpid();
	ctl.joined = -1;
	if (ctl.listen_fd >= 0)
		close(ctl.listen_fd);
	close(ctl.wake[0]);
	close(ctl.wake[1]);
	ctl.listen_fd = ctl.wake[0] = ctl.wake[1] = -1;
	ctl.path[0] = 0;
	/*
	 * The endpoint first: the recorder asks it about us as soon as it hears of us.
	 * ThreadSanitizer cannot follow a thread started after a multi-threaded fork (it stops
	 * the process): its builds give forked children no endpoint (their sessions still
	 * record; the recorder learns of them from the "fork" message).
	 */
#if defined(__SANITIZE_THREAD__)
	endpoint_ok = false;
#else
	endpoint_ok = ctl.on && !endpoint_open();
#endif
	for (i = 0; i < MAX_CONNS; i++) {
		struct conn *c = &ctl.conns[i];
		int fd;

		if (c->fd < 0)
			continue;
		close(c->fd);
		c->fd = -1;
		c->held = false;
		if (!c->session)
			continue;
		fd = usertp__session_fork_child(c->session);
		if (fd >= 0)
			c->fd = fd;
		else
			c->session = NULL; /* stays off; its memory is the parent's story */
	}
	if (endpoint_ok)
		thread_start();
}

static void __attribute__((constructor)) control_init(void)
{
	const char *v = getenv("USERTP_CONTROL"), *session = getenv("USERTP_SESSION");
	bool off = v && !strcmp(v, "0");
	unsigned int i;

	for (i = 0; i < MAX_CONNS; i++)
		ctl.conns[i].fd = -1;
	/* A recorder this program was started by is joined even with the endpoint off. */
	if (off && !(session && *session))
		return;
	usertp__init();
	ctl.on = !off;
	ctl.pid = getpid();
	if (session && *session)
		join_recorder(session, false);
	else
		join_recorder_of_all();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	atexit(at_exit);
	if (off || endpoint_open())
		return; /* off, or no runtime directory we can trust: no endpoint */
	usertp__jump_label_prepare();
	thread_start();
}
