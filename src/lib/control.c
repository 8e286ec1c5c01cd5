/* SPDX-License-Identifier: MIT */
/*
 * control.c - the control endpoint: how consumers (libusertp-consumer's sessions, usertp
 * list and record, the mount) reach a running program: the endpoint, its thread and
 * connections, the news for recorders, joining them at start-up; each request is served by
 * control-serve.c.
 *
 * At start-up libusertp starts one thread, which listens on "<runtime dir>/<pid>.sock"
 * (ctl-proto.h says where and how messages look) and sleeps in poll() until someone connects:
 * no other cost for a program that is never traced, and USERTP_CONTROL=0 switches it off (no
 * thread, no socket).  The thread makes the socket while main() begins (consumers wait for the
 * endpoint of a process that young: USERTP_CTL_STARTING_MS), holding no lock main() takes; an
 * exit meanwhile waits for it (EXIT_FLUSH_MS at most) and removes it.  Then it looks for the
 * sessions of all once more (join_recorders_of_all()).  Starting the program waits for
 * nothing, except under `usertp record -- CMD`, whose USERTP_SESSION variable makes the
 * program join the recorder before main() (up to JOIN_SESSION_MS), and while `usertp record
 * -a` runs (up to JOIN_ALL_MS; up to JOIN_ALL_BUSY_MS while the recorder is not stopped: many
 * programs that start at once are taken one after another).
 *
 * Requests (one per message; replies "ok..." or "error ERRNO text"):
 *	hello			ok pid= ppid= uid= cpus= version= comm=
 *	events			ok, then "sys:event" lines (available_events)
 *	ids			ok, then "id sys:event" lines
 *	format SYS:EVENT	ok, then the event's format text
 *	comms [since=N]		ok since=M, then "tid comm" lines of the threads that recorded
 *				(noted from N on: the recorder asks since=M next time)
 *	start events=SPECS kb=N overwrite=0|1 clock=mono|x86-tsc tracing=0|1 recorder=PATH
 *	      [pids=P,P.. notrace_pids=P,P.. event_fork=0|1 at_start=0|1]
 *				ok size=BYTES, then "id sys:event" lines, with the region's memfd
 *	set [events=SPECS] [tracing=0|1]
 *				the session's settings, changed at once while the program runs;
 *				ok size=BYTES, then the "id sys:event" lines it records now
 *				(after the "format" news of those it did not record before)
 *	filter events=SPEC	then the filter (none or "0": removed) of the events SPEC
 *				selects, in the kernel's grammar; ok, or the error with the
 *				filter file's text (the expression, a caret, parse_error)
 *	pids [pids=P,P..] [notrace_pids=P,P..] [event_fork=0|1]
 *				the session's pid filter, whole (set_event_pid,
 *				set_event_notrace_pid, event-fork); ok
 *	enabled			ok, then the "id sys:event" lines of the session
 *	sessions		ok, then per session "session N tracing=0|1" (then
 *				" joining-again" for one whose connection the program
 *				closed, recording on while it joins its recorder again),
 *				"events=SPECS",
 *				its "filter SPEC TEXT" lines, and with a pid filter
 *				"pids P,P..", "notrace_pids P,P..", "event_fork 0|1"
 *				(usertp list -v)
 *	listed			the same, of this connection's session only (what the pid
 *				filter lists now, with what event-fork added: usertp mount)
 *	stop			ok: the session ends (as it does when the connection closes)
 *
 * Messages a session's connection carries unasked, to its recorder:
 *	comms since=M		then "tid comm" lines: threads noted since it was last told,
 *				once USERTP__COMM_TELL_EVERY more were (tell_comms())
 *	events			then "id sys:event" lines: events it has not heard of (a library
 *				was loaded), sent before any of them can fire
 *	format id=N name=SYS:EVENT  then the format text of a new event the session records
 *	exit			then "tid comm" lines: the program is exiting
 *	refused [at_start=1]	then what refused its filter (not recorded); at_start=1 (a
 *				session started so, before main()): the program waits for "run"
 *				or its end (verdicts_wait())
 *
 * Every connection's peer must be this user or root; others get one error line and are
 * closed.  Each connection is served on its own, without blocking: a request must arrive
 * whole within REQUEST_DEADLINE_MS of its first byte, replies wait until the peer reads them,
 * past MAX_CONNS connections the extra ones are told EBUSY.  A peer that sends something
 * malformed gets an error; one that sends too much, stalls or trickles is disconnected.
 * Nothing a peer sends can stop the program or delay another peer.
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
#include "proc.h"
#include "internal.h"
#include "thread.h"
#include "remote-session.h"
#include "control-private.h"

/* --- receiving ---------------------------------------------------------------------------- */

static int join_recorder_served(const char *path, bool again);

/* Close @c; with @end, its session ends (else it is the caller's).  Return: the session. */
static struct usertp__session *conn_detach(struct conn *c, bool end)
{
	struct usertp__session *s, *replaced;

	pthread_mutex_lock(&usertp__ctl.lock);
	usertp__control_conn_close_fd(c);
	s = c->session;
	replaced = c->replaces;
	c->session = c->replaces = NULL;
	c->comms_sent = 0;
	usertp__control_free_io(c);
	pthread_mutex_unlock(&usertp__ctl.lock);
	/* Ending a session waits for a grace period: not under our lock. */
	usertp__session_end(replaced);
	if (end) {
		usertp__session_end(s);
		s = NULL;
	}
	return s;
}

static void conn_close(struct conn *c)
{
	conn_detach(c, true);
}

/*
 * Whether a join's failure (-errno: join_recorder_served()) says its recorder is gone: no
 * socket at its path, nobody listening there, or not our recorder there (another user's).
 */
static bool recorder_gone(int err)
{
	return err == -ENOENT || err == -ECONNREFUSED || err == -EACCES || err == -ENAMETOOLONG;
}

static int conn_add(int fd, const struct usertp__fd_id *id, struct usertp__session *s);

/*
 * @s to be joined again (@announce: announced) later, in its entry @r (NULL: a free one):
 * REJOIN_FIRST_MS after @now the first time, then twice as long each time, up to
 * USERTP_CTL_SWEEP_MS.  Under usertp__ctl.lock.  Return: false when no entry is free.
 */
static bool rejoin_later(struct usertp__session *s, struct rejoin *r, bool announce,
			 long long now)
{
	for (unsigned int k = 0; !r && k < MAX_CONNS; k++)
		if (!usertp__ctl.rejoins[k].session)
			r = &usertp__ctl.rejoins[k];
	if (!r)
		return false;
	r->pause_ms = r->session != s ? REJOIN_FIRST_MS
		      : r->pause_ms * 2 < USERTP_CTL_SWEEP_MS ? r->pause_ms * 2
							      : USERTP_CTL_SWEEP_MS;
	r->announce = announce;
	r->session = s;
	r->due = now + r->pause_ms;
	return true;
}

/*
 * A forked child's announce of @s's buffers, tried again (rejoin()).  Return: the index of
 * the connection it went on, served with @s, or a negative errno (-EBUSY: @s ended).
 */
static int announce_again(struct usertp__session *s)
{
	struct usertp__fd_id id;
	int fd = usertp__session_fork_announce(s, &id);

	return fd < 0 ? fd : conn_add(fd, &id, s);
}

/*
 * Join the recorder of @s again, a session whose connection the program closed (@r: its
 * entry in usertp__ctl.rejoins, or NULL, the first try): the recorder resumes it on the new
 * connection ("resume"), or else starts a new session, @s ending once that has started
 * (c->replaces).  A try that fails while that recorder is there (too busy to take us, or the
 * new connection closed by the program as it was made: it is closing its descriptors still)
 * is tried again later, twice as long after each time, up to USERTP_CTL_SWEEP_MS; @s records
 * on meanwhile, and the recorder reads on what it writes.  It ends once the recorder is gone.
 * (Before, it ended after 5 tries, 10 ms apart, and what the program fired after was recorded
 * nowhere and counted as lost nowhere.)  With @r->announce, the same for a forked child's
 * announce of its buffers (fork_child()).
 */
static void rejoin(struct usertp__session *s, struct rejoin *r)
{
	bool announce = r && r->announce;
	int i = !s->recorder[0] ? -ENOENT
		: announce	? announce_again(s)
				: join_recorder_served(s->recorder, true);
	long long now = usertp__mono_ms();

	/* (Changed under the lock, which a fork() takes: its child sees @s in one place.) */
	pthread_mutex_lock(&usertp__ctl.lock);
	if (i >= 0 || (announce && i == -EBUSY)) { /* (-EBUSY: ended by conn_add()) */
		if (!announce)
			usertp__ctl.conns[i].replaces = s;
		if (r)
			r->session = NULL;
		pthread_mutex_unlock(&usertp__ctl.lock);
		return;
	}
	if (recorder_gone(i) || !rejoin_later(s, r, announce, now)) {
		if (r)
			r->session = NULL;
		pthread_mutex_unlock(&usertp__ctl.lock);
		usertp__session_end(s);
		return;
	}
	pthread_mutex_unlock(&usertp__ctl.lock);
}

/* The joins again that are due (rejoin()).  Return: when the next one is (ms), 0 for none. */
static long long rejoins_try(long long now)
{
	long long next = 0;

	for (unsigned int k = 0; k < MAX_CONNS; k++) {
		struct rejoin *r = &usertp__ctl.rejoins[k];

		if (r->session && r->due <= now)
			rejoin(r->session, r);
		if (r->session && (!next || r->due < next))
			next = r->due;
	}
	return next;
}

/*
 * @c's socket was closed by the program (it closes descriptors it did not open), and may be
 * a file of its own now: never read, written or closed again.  Its session records on, and
 * the program joins that session's recorder again (rejoin()).  A connection made so, lost
 * before it resumed (the program closed it too: it was made while the program closed its
 * descriptors), joins again in turn, for the session it was to resume.
 */
static void conn_lost(struct conn *c)
{
	struct usertp__session *s;

	pthread_mutex_lock(&usertp__ctl.lock);
	if (!c->session) {
		c->session = c->replaces;
		c->replaces = NULL;
	}
	pthread_mutex_unlock(&usertp__ctl.lock);
	/* It records on until the new session starts: nothing is fired for none (c->replaces). */
	s = conn_detach(c, false);
	if (s)
		rejoin(s, NULL);
}

/* Answer the whole request @req (@len bytes, not yet checked to be text).  False: close. */
static bool conn_request(struct conn *c, char *req, size_t len)
{
	struct reply r = { 0 };
	int fd, ret;

	if (!len || strlen(req) != len) {
		usertp__control_reply_add(&r, "error EINVAL not a text message\n");
		fd = -1;
	} else {
		fd = usertp__control_serve(c, req, &r);
	}
	usertp__control_conn_drop_in_fd(c); /* (not taken by the request) */
	/* Joined again: the new session records now, the one it replaces ends (before the reply). */
	if (c->session && c->replaces) {
		usertp__session_end(c->replaces);
		c->replaces = NULL;
	}
	if (fd == -2)
		return true;
	pthread_mutex_lock(&usertp__ctl.lock);
	ret = r.buf ? usertp__control_send_locked(c, r.buf, r.len, fd, &r.fd_id, 0) : -ENOMEM;
	if (!ret && c->news_due && c->session)
		usertp__session_news(c->session, usertp__control_news_send, c);
	c->news_due = false;
	pthread_mutex_unlock(&usertp__ctl.lock);
	free(r.buf);
	return !ret;
}

/*
 * Read what @c's peer sent, without waiting, and answer every request that is whole.
 * Return: false when the connection is over (closed by the peer, broken, or nonsense).
 */
static bool conn_read(struct conn *c)
{
	const size_t cap = sizeof(uint32_t) + MAX_REQUEST;
	ssize_t n;

	if (!c->in && !(c->in = malloc(cap + 1)))
		return false;
	for (;;) {
		union {
			struct cmsghdr align;
			char buf[CMSG_SPACE(4 * sizeof(int))];
		} control;
		struct iovec iov = { c->in + c->in_len, cap - c->in_len };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = control.buf, .msg_controllen = sizeof(control.buf) };
		struct cmsghdr *cm;
		uint32_t len;

		n = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN;
		if (n == 0)
			return false;
		/* One descriptor is kept for the request it came with; any others are closed. */
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
				continue;
			for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
				int f;

				memcpy(&f, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
				usertp__control_conn_take_fd(c, f);
			}
		}
		if (!c->in_len)
			c->deadline = usertp__mono_ms() + REQUEST_DEADLINE_MS;
		c->in_len += (size_t)n;
		while (c->in_len >= sizeof(len)) {
			memcpy(&len, c->in, sizeof(len));
			if (len >= MAX_REQUEST)
				return false; /* out of step for good */
			if (c->in_len < sizeof(len) + len)
				break;
			{
				char *req = (char *)c->in + sizeof(len);
				char after = req[len];
				bool ok;

				req[len] = 0;
				ok = conn_request(c, req, len);
				req[len] = after;
				if (!ok)
					return false;
			}
			c->in_len -= sizeof(len) + len;
			memmove(c->in, c->in + sizeof(len) + len, c->in_len);
			c->deadline = c->in_len ? usertp__mono_ms() + REQUEST_DEADLINE_MS : 0;
		}
	}
}

/* --- the thread --------------------------------------------------------------------------- */

/*
 * Serve @fd, a socket just made whose identity is @id (usertp__fd_id_get()), for session @s
 * (or none yet).  Return: its index, or -EBUSY (closed, if still ours; @s ended).
 */
static int conn_add(int fd, const struct usertp__fd_id *id, struct usertp__session *s)
{
	int i;

	pthread_mutex_lock(&usertp__ctl.lock);
	for (i = 0; i < MAX_CONNS; i++) {
		if (usertp__ctl.conns[i].fd < 0) {
			usertp__ctl.conns[i] = (struct conn){ .session = s, .in_fd = -1, .fd = fd,
							      .fd_id = *id };
			pthread_mutex_unlock(&usertp__ctl.lock);
			usertp__control_wake();
			return i;
		}
	}
	pthread_mutex_unlock(&usertp__ctl.lock);
	if (usertp__fd_is(fd, id))
		usertp__ctl_refuse_nowait(fd, -EBUSY, "too many connections (%d served at once)",
					  MAX_CONNS);
	usertp__fd_close_if(fd, id);
	usertp__session_end(s);
	return -EBUSY;
}

/*
 * (Here and wherever the control thread makes a socket: noted at once, and closed only if
 * still ours.  A daemon may close it the moment it is made and open a file of its own under
 * its number, an eventfd say; closing that, and later reading our next socket there, it
 * read a recorder's "resume" as its count: layouts-mount's exe-daemon.)
 */
static void accept_one(void)
{
	int fd = accept4(usertp__ctl.listen_fd, NULL, NULL, SOCK_CLOEXEC);
	struct usertp__fd_id id;
	uid_t uid;

	if (fd < 0 || usertp__fd_id_get(fd, S_IFSOCK, &id))
		return;
	if (!usertp__ctl_peer_allowed(fd, &uid)) {
		if (usertp__fd_is(fd, &id))
			usertp__ctl_refuse_nowait(
				fd, -EACCES,
				"uid %u may not control process %d (uid %u): only its user or root may",
				(unsigned int)uid, (int)getpid(), (unsigned int)geteuid());
		usertp__fd_close_if(fd, &id);
		return;
	}
	conn_add(fd, &id, NULL);
}

static int endpoint_open(void);
static void join_recorders_of_all(bool wait);
/* Held by the control thread while it makes the endpoint at start-up. */
static pthread_mutex_t endpoint_opening = PTHREAD_MUTEX_INITIALIZER;
/* Whether the start looked for sessions of all (not under USERTP_SESSION's recorder). */
static bool looked_at_all;

/* @open_endpoint: the thread opens the endpoint first (the program's start does not wait). */
/*
 * Each session that has not heard of the last USERTP__COMM_TELL_EVERY threads noted or more
 * is told their names, unasked: "comms since=M" (M: the note to go on from), then the lines.
 */
static void tell_comms(void)
{
	uint64_t noted = usertp__comm_noted();

	for (unsigned int i = 0; i < MAX_CONNS; i++) {
		/* (Only this thread opens, closes and starts sessions on connections.) */
		struct conn *c = &usertp__ctl.conns[i];
		struct reply r = { 0 };
		uint64_t next;
		char *head = NULL;
		long len;

		if (c->fd < 0 || !c->session || noted - c->comms_sent < USERTP__COMM_TELL_EVERY)
			continue;
		/* (Made outside the lock: each living thread's name is read from /proc.) */
		next = usertp__control_reply_comms_lines(&r, c->comms_sent);
		len = usertp__ctl_encode(&(struct usertp__ctl_msg){ .type = USERTP_CTL_MSG_COMMS,
								    .has = USERTP_CTL_K(SINCE),
								    .num[USERTP_CTL_KEY_SINCE] = next,
								    .body = r.buf ? r.buf : "" },
					 &head);
		if (len > 0) {
			pthread_mutex_lock(&usertp__ctl.lock);
			usertp__control_news_send(head, (size_t)len, c);
			pthread_mutex_unlock(&usertp__ctl.lock);
		}
		c->comms_sent = next;
		free(head);
		free(r.buf);
	}
}

/*
 * Make the endpoint from the thread.  Not under the lock, which main() takes to register its
 * events: a socket made slowly must not hold up its start.  An exit meanwhile waits for
 * endpoint_opening, then removes what we made.  Return: whether it is made.
 */
static bool endpoint_make(void)
{
	bool ok;

	pthread_mutex_lock(&endpoint_opening);
	pthread_mutex_lock(&usertp__ctl.lock);
	ok = !usertp__ctl.exiting;
	pthread_mutex_unlock(&usertp__ctl.lock);
	if (ok) {
		int ret;
		unsigned int tries = 0;

		/* (-EBADF: the program closed the socket as it was being made; again.) */
		while ((ret = endpoint_open()) == -EBADF && ++tries < 8)
			;
		ok = !ret;
	}
	pthread_mutex_unlock(&endpoint_opening);
	return ok;
}

/*
 * Whether the endpoint's descriptors are still ours, looked at each time poll() returns.  A
 * program that closes every descriptor it did not open, as a daemon does when it starts,
 * closes them too, and may open its own under their numbers.  poll() then says POLLNVAL, or
 * that the program's file is readable; or nothing ever, when what the program opened there is
 * idle (its eventfds): a recorder's knock on the old socket, which the sleeping poll() keeps
 * alive, wakes it only to look at the numbers again.  Hence poll() returns each second
 * (USERTP_CTL_SWEEP_MS) whatever it says, and the identities are looked at then too.
 */
static bool endpoint_ours(const struct pollfd *pfd)
{
	return !(pfd[0].revents & POLLNVAL) && !(pfd[1].revents & POLLNVAL) &&
	       usertp__fd_is(usertp__ctl.listen_fd, &usertp__ctl.listen_id) &&
	       usertp__fd_is(usertp__ctl.wake[0], &usertp__ctl.wake_id[0]);
}

/*
 * The program took the endpoint's descriptors: those still ours are closed, the others left
 * alone (the program's now), and the endpoint is made again at the same path, so that
 * recorders, `usertp list` and the mount still reach the program.  Return: whether it is.
 */
static bool endpoint_lost(void)
{
	pthread_mutex_lock(&usertp__ctl.lock);
	if (usertp__ctl.listen_fd >= 0)
		usertp__fd_close_if(usertp__ctl.listen_fd, &usertp__ctl.listen_id);
	usertp__ctl.listen_fd = -1;
	for (int i = 0; i < 2; i++) {
		int fd = usertp__ctl.wake[i];

		__atomic_store_n(&usertp__ctl.wake[i], -1, __ATOMIC_RELEASE);
		if (fd >= 0)
			usertp__fd_close_if(fd, &usertp__ctl.wake_id[i]);
	}
	pthread_mutex_unlock(&usertp__ctl.lock);
	return endpoint_make();
}

static void *control_thread(void *open_endpoint)
{
	struct pollfd pfd[MAX_CONNS + 2];
	int idx[MAX_CONNS + 2];
	unsigned int i, n;
	bool endpoint = true; /* made (not lost and not yet made again) */
	long long endpoint_tried = 0;

	usertp__thread_is_own = true;
	prctl(PR_SET_NAME, "usertp-control");
	if (open_endpoint) {
		bool ok = endpoint_make();

		if (!ok) {
			pthread_mutex_lock(&usertp__ctl.lock);
			usertp__ctl.thread = false;
			pthread_mutex_unlock(&usertp__ctl.lock);
			return NULL;
		}
		if (looked_at_all)
			join_recorders_of_all(false);
	}
	for (;;) {
		long long next = 0, now;
		int timeout = -1;

		/*
		 * Each connection still ours?  A number the program closed may be taken again,
		 * by one of its files or by our own endpoint made again, which poll() alone
		 * would never tell from the connection's.
		 */
		for (i = 0; i < MAX_CONNS; i++)
			if (usertp__ctl.conns[i].fd >= 0 &&
			    !usertp__fd_is(usertp__ctl.conns[i].fd, &usertp__ctl.conns[i].fd_id))
				conn_lost(&usertp__ctl.conns[i]);
		next = rejoins_try(usertp__mono_ms());
		pfd[0] = (struct pollfd){ usertp__ctl.listen_fd, POLLIN, 0 };
		pfd[1] = (struct pollfd){ usertp__ctl.wake[0], POLLIN, 0 };
		n = 2;
		pthread_mutex_lock(&usertp__ctl.lock);
		for (i = 0; i < MAX_CONNS; i++) {
			struct conn *c = &usertp__ctl.conns[i];

			if (c->fd < 0)
				continue;
			idx[n] = (int)i;
			pfd[n++] = (struct pollfd){ c->fd, (short)(POLLIN | (c->out ? POLLOUT : 0)), 0 };
			if (c->deadline && (!next || c->deadline < next))
				next = c->deadline;
		}
		pthread_mutex_unlock(&usertp__ctl.lock);
		if (next) {
			now = usertp__mono_ms();
			timeout = next > now ? (int)(next - now) : 0;
		}
		/*
		 * (Each second at least: the descriptors' identities, endpoint_ours(), and the
		 * connections' above; an endpoint that could not be made again, tried again.)
		 */
		if (timeout < 0 || timeout > USERTP_CTL_SWEEP_MS)
			timeout = USERTP_CTL_SWEEP_MS;
		if (poll(pfd, n, timeout) < 0)
			continue;
		now = usertp__mono_ms();
		if ((endpoint && !endpoint_ours(pfd)) ||
		    (!endpoint && now - endpoint_tried >= USERTP_CTL_SWEEP_MS)) {
			endpoint = endpoint_lost();
			endpoint_tried = now;
			continue;
		}
		if (pfd[1].revents) {
			char drain[64];

			(void)!read(usertp__ctl.wake[0], drain, sizeof(drain));
			tell_comms();
		}
		if (pfd[0].revents)
			accept_one();
		now = usertp__mono_ms();
		for (i = 2; i < n; i++) {
			/* Only this thread closes connections: c stays valid. */
			struct conn *c = &usertp__ctl.conns[idx[i]];
			bool ok = true;

			/* Closed by the program, and maybe a file of its own now: conn_lost(). */
			if ((pfd[i].revents & POLLNVAL) ||
			    (pfd[i].revents && !usertp__fd_is(c->fd, &c->fd_id))) {
				conn_lost(c);
				continue;
			}
			if (ok && (pfd[i].revents & POLLOUT)) {
				pthread_mutex_lock(&usertp__ctl.lock);
				ok = !usertp__control_flush_locked(c);
				pthread_mutex_unlock(&usertp__ctl.lock);
			}
			if (ok && (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				ok = conn_read(c);
			/* A request begun and not finished in time: the peer stalls, or trickles. */
			if (ok && c->deadline && now >= c->deadline)
				ok = false;
			if (!ok)
				conn_close(c);
		}
	}
	return NULL;
}


/*
 * Events of the recorder's command that refused their filter before main() (at_start=1): the
 * recorder judges.  It ends the program (usertp record -- CMD refuses the run), or says "run"
 * (go on without those events).  A recorder that does neither holds us JOIN_SESSION_MS.
 */
static void verdicts_wait(void)
{
	long long deadline = usertp__mono_ms() + JOIN_SESSION_MS;
	bool waiting = true;

	while (waiting) {
		bool late = usertp__mono_ms() >= deadline;

		waiting = false;
		pthread_mutex_lock(&usertp__ctl.lock);
		pthread_mutex_lock(&usertp__lock);
		for (unsigned int i = 0; i < MAX_CONNS; i++)
			if (usertp__ctl.conns[i].fd >= 0 && usertp__ctl.conns[i].session)
				waiting |= usertp__session_verdict_locked(
					usertp__ctl.conns[i].session, late);
		pthread_mutex_unlock(&usertp__lock);
		pthread_mutex_unlock(&usertp__ctl.lock);
		if (waiting)
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
}

void usertp__control_events_changed(void)
{
	unsigned int i;

	if (!usertp__ctl.pid)
		return;
	/*
	 * Each session's recorder hears of the new events, with the formats of those it records,
	 * before any of them can fire: it may have to write them out after we are gone.
	 */
	pthread_mutex_lock(&usertp__ctl.lock);
	for (i = 0; i < MAX_CONNS; i++)
		if (usertp__ctl.conns[i].fd >= 0 && usertp__ctl.conns[i].session)
			usertp__session_news(usertp__ctl.conns[i].session,
					     usertp__control_news_send, &usertp__ctl.conns[i]);
	pthread_mutex_unlock(&usertp__ctl.lock);
	/* (Only a session started with at_start=1 may be waiting: none, no locks taken.) */
	if (__atomic_load_n(&usertp__at_start_sessions, __ATOMIC_RELAXED))
		verdicts_wait();
}

/* --- start-up, fork, exit ----------------------------------------------------------------- */

/*
 * Make the endpoint and publish it (under the lock, where an exit that came meanwhile is seen:
 * then it is removed again, and -ECANCELED).
 */
static int endpoint_open(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct usertp__fd_id id, wake_id[2];
	char dir[PATH_MAX], path[sizeof(sa.sun_path)];
	int fd, ret, wake[2];

	ret = usertp__ctl_dir(dir, sizeof(dir), true);
	if (ret)
		return ret;
	/*
	 * Bound under a name of its own, then renamed to PID.sock: made again (a daemon closed
	 * it), the endpoint's path is never missing, and a recorder that knocks meanwhile knocks
	 * again (usertp__client_knock_again()).
	 */
	if ((size_t)snprintf(path, sizeof(path), "%s/%d.sock", dir, (int)getpid()) >= sizeof(path) ||
	    (size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%d.new.sock", dir,
			     (int)getpid()) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	/*
	 * Each noted as it is made: the program may close them at any moment (a daemon that
	 * starts), and what is closed here is closed only if still ours.
	 */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (usertp__fd_id_get(fd, S_IFSOCK, &id))
		return -EBADF; /* (the number is the program's already: left alone) */
	unlink(sa.sun_path); /* left by a dead process that had our pid */
	if (!usertp__fd_is(fd, &id))
		ret = -EBADF;
	else if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(sa.sun_path, 0600) ||
		 listen(fd, 16) || rename(sa.sun_path, path))
		ret = errno == ENOTSOCK ? -EBADF : -errno; /* (its number a file of the program's) */
	if (ret) {
		unlink(sa.sun_path);
		usertp__fd_close_if(fd, &id);
		return ret;
	}
	memcpy(sa.sun_path, path, sizeof(path));
	if (pipe2(wake, O_CLOEXEC | O_NONBLOCK)) {
		ret = -errno;
		unlink(sa.sun_path);
		usertp__fd_close_if(fd, &id);
		return ret;
	}
	/* (A pipe's two ends share its inode: two that do not are not both ours.) */
	if (usertp__fd_id_get(wake[0], S_IFIFO, &wake_id[0]) ||
	    usertp__fd_id_get(wake[1], S_IFIFO, &wake_id[1]) || wake_id[0].ino != wake_id[1].ino ||
	    wake_id[0].dev != wake_id[1].dev) {
		unlink(sa.sun_path);
		usertp__fd_close_if(fd, &id);
		return -EBADF; /* (an end of ours that is still open is left: not told from theirs) */
	}
	pthread_mutex_lock(&usertp__ctl.lock);
	if (usertp__ctl.exiting) {
		pthread_mutex_unlock(&usertp__ctl.lock);
		unlink(sa.sun_path);
		usertp__fd_close_if(fd, &id);
		for (int i = 0; i < 2; i++)
			usertp__fd_close_if(wake[i], &wake_id[i]);
		return -ECANCELED;
	}
	memcpy(usertp__ctl.path, sa.sun_path, sizeof(usertp__ctl.path));
	usertp__ctl.listen_fd = fd;
	usertp__ctl.listen_id = id;
	for (int i = 0; i < 2; i++) {
		/* (Atomic: usertp__control_wake() reads them without the lock.) */
		__atomic_store_n(&usertp__ctl.wake_id[i].dev, wake_id[i].dev, __ATOMIC_RELAXED);
		__atomic_store_n(&usertp__ctl.wake_id[i].ino, wake_id[i].ino, __ATOMIC_RELAXED);
		__atomic_store_n(&usertp__ctl.wake[i], wake[i], __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&usertp__ctl.lock);
	return 0;
}

/*
 * The thread, which opens the endpoint first if @open_endpoint (at start-up: the program's
 * main() need not wait for a socket to be made).
 */
static void thread_start(bool open_endpoint)
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
	pthread_mutex_lock(&usertp__ctl.lock);
	usertp__ctl.thread = true; /* before it runs: it may fail to open the endpoint at once */
	pthread_mutex_unlock(&usertp__ctl.lock);
	if (pthread_create(&thread, &attr, control_thread, open_endpoint ? &usertp__ctl : NULL)) {
		pthread_mutex_lock(&usertp__ctl.lock);
		usertp__ctl.thread = false;
		pthread_mutex_unlock(&usertp__ctl.lock);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
}

/*
 * At exit, each recorder hears which threads recorded (it could not ask a process that is
 * gone), after whatever news it has not taken yet; the endpoint goes.  A recorder that does
 * not read holds up the exit EXIT_FLUSH_MS at most.
 */
static void at_exit(void)
{
	struct timespec until;
	struct reply r = { 0 };
	long long deadline;
	unsigned int i;

	if (getpid() != usertp__ctl.pid)
		return;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += EXIT_FLUSH_MS * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	deadline = usertp__mono_ms() + EXIT_FLUSH_MS;
	if (pthread_mutex_timedlock(&usertp__ctl.lock, &until)) {
		if (usertp__ctl.path[0])
			unlink(usertp__ctl.path);
		return;
	}
	/*
	 * The endpoint goes: the thread, if it has not begun to make it, will not; if it is
	 * making it, it sees this when it publishes it and removes it again, which is waited
	 * for (not under the lock, which it takes to publish).
	 */
	usertp__ctl.exiting = true;
	pthread_mutex_unlock(&usertp__ctl.lock);
	if (!pthread_mutex_timedlock(&endpoint_opening, &until))
		pthread_mutex_unlock(&endpoint_opening);
	if (pthread_mutex_timedlock(&usertp__ctl.lock, &until)) {
		if (usertp__ctl.path[0])
			unlink(usertp__ctl.path);
		return;
	}
	if (usertp__ctl.path[0])
		unlink(usertp__ctl.path);
	for (i = 0; i < MAX_CONNS; i++) {
		struct conn *c = &usertp__ctl.conns[i];

		if (c->fd < 0 || !c->session)
			continue;
		if (!r.buf) {
			usertp__control_reply_add(&r, "exit\n");
			usertp__control_reply_comms_lines(&r, 0);
		}
		if (!r.buf || usertp__control_queue_locked(c, r.buf, r.len, -1, NULL))
			continue;
		/* Sent here, not by the thread: the process is about to go. */
		while (!usertp__control_flush_locked(c) && c->out) {
			struct pollfd p = { c->fd, POLLOUT, 0 };
			long long left = deadline - usertp__mono_ms();

			if (left <= 0 || poll(&p, 1, (int)left) <= 0)
				break;
		}
	}
	pthread_mutex_unlock(&usertp__ctl.lock);
	free(r.buf);
}

/*
 * Say to a recorder on @fd who we are: "join" (pid, parent, name); @again: we closed our
 * session's connection ourselves (a daemon), and join once more.
 */
static int send_join(int fd, bool again)
{
	struct usertp__ctl_msg m = { .type = USERTP_CTL_MSG_JOIN };
	char comm[17];

	usertp__control_process_comm(comm, sizeof(comm));
	usertp__ctl_set_num(&m, USERTP_CTL_KEY_PID, (uint64_t)getpid());
	usertp__ctl_set_num(&m, USERTP_CTL_KEY_PPID, (uint64_t)getppid());
	usertp__ctl_set_text(&m, USERTP_CTL_KEY_COMM, comm);
	if (again)
		usertp__ctl_set_num(&m, USERTP_CTL_KEY_AGAIN, 1);
	return usertp__ctl_send_msg(fd, &m, -1);
}

/*
 * Is the process that listens on @fd (a recorder) running, or sleeping, rather than stopped
 * (or gone, or hidden from us)?  Then it is taking other programs first.
 */
static bool recorder_running(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char state;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) || cred.pid <= 0)
		return false;
	state = usertp__proc_state(cred.pid);
	return state && !strchr("TtZXx", state);
}

/*
 * Join a recorder (`usertp record -- CMD` through USERTP_SESSION, or `record -a`): connect,
 * say who we are, and answer its requests (it starts a session) until it says "run", all
 * within @deadline_ms, or @busy_ms while the recorder runs (not stopped: it takes programs one
 * after another), so that recording starts before main().  The connection then stays, served
 * by the thread like any other; the recorder hears of events as they come
 * (usertp__control_events_changed()).
 */
static bool join_recorder(const char *path, int deadline_ms, int busy_ms, bool quiet)
{
	static char req[MAX_REQUEST];
	struct conn c = { .fd = -1, .in_fd = -1 };
	long long start = usertp__mono_ms(), deadline = start + deadline_ms;
	uid_t uid;
	bool ran = false;

	c.fd = usertp__ctl_connect_id(path, &c.fd_id);
	if (c.fd == -EBADF)
		return false; /* (the program's already: accept_one() says why) */
	if (quiet && c.fd < 0)
		return false;
	if (c.fd < 0 || !usertp__ctl_peer_allowed(c.fd, &uid)) {
		fprintf(stderr, "usertp: USERTP_SESSION=%s: cannot join the recorder there: %s; "
				"running untraced\n", path, c.fd < 0 ? strerror(-c.fd) : "not our user");
		if (c.fd >= 0)
			usertp__fd_close_if(c.fd, &c.fd_id);
		return false;
	}
	if (send_join(c.fd, false))
		goto fail;
	while (!ran) {
		struct reply r = { 0 };
		long long left = deadline - usertp__mono_ms();
		struct pollfd p = { c.fd, POLLIN, 0 };
		long n;
		int fd, got = -1;

		/* Nothing yet: a running recorder is given more time (never mid-message). */
		if (poll(&p, 1, left > 0 ? (int)left : 0) == 0) {
			if (deadline - start >= busy_ms || !recorder_running(c.fd))
				goto fail;
			deadline = start + busy_ms < deadline + deadline_ms ? start + busy_ms
									    : deadline + deadline_ms;
			continue;
		}
		/* A message has begun: it has its own time to arrive whole (it was late, not cut). */
		left = deadline - usertp__mono_ms();
		n = usertp__ctl_recv(c.fd, req, sizeof(req), &got,
				     left > deadline_ms ? (int)left : deadline_ms);
		if (got >= 0)
			usertp__control_conn_take_fd(&c, got);
		if (n == -EBADMSG || n <= 0)
			goto fail;
		fd = usertp__control_serve(&c, req, &r);
		usertp__control_conn_drop_in_fd(&c);
		ran = fd == -2;
		/* (Neither the socket nor the region sent unless still ours.) */
		if (!ran && (!r.buf || !usertp__fd_is(c.fd, &c.fd_id) ||
			     (fd >= 0 && !usertp__fd_is(fd, &r.fd_id)) ||
			     usertp__ctl_send(c.fd, r.buf, r.len, fd))) {
			free(r.buf);
			goto fail;
		}
		free(r.buf);
	}
	conn_add(c.fd, &c.fd_id, c.session);
	return true;
fail:
	if (!quiet)
		fprintf(stderr, "usertp: USERTP_SESSION=%s: the recorder there did not answer; "
				"running untraced\n", path);
	usertp__fd_close_if(c.fd, &c.fd_id);
	usertp__session_end(c.session);
	return false;
}

/*
 * The sessions of all joined at start-up (their sockets' device and inode), so that the second
 * look (join_recorders_of_all(false)) does not join one twice.  Written before the control
 * thread starts, read by it.
 */
static struct {
	dev_t dev;
	ino_t ino;
} joined_all[USERTP_CTL_MAX_ALL];
static unsigned int nr_joined_all;

static bool joined_already(const struct stat *st)
{
	for (unsigned int i = 0; i < nr_joined_all; i++)
		if (joined_all[i].dev == st->st_dev && joined_all[i].ino == st->st_ino)
			return true;
	return false;
}

/*
 * Join the session at @path from the control thread: say who we are, and serve its requests
 * as any connection's (its "run" needs no answer), without waiting here, since the recorder
 * may be asking our endpoint something at the same time.  Return: the connection's index, or
 * a negative errno (recorder_gone() tells which say the recorder is not there).
 */
static int join_recorder_served(const char *path, bool again)
{
	struct usertp__fd_id id;
	int fd = usertp__ctl_connect_id(path, &id), ret;
	uid_t uid;

	if (fd < 0)
		return fd;
	ret = !usertp__ctl_peer_allowed(fd, &uid) ? -EACCES
	      : !usertp__fd_is(fd, &id)		  ? -EBADF
						  : send_join(fd, again);
	if (ret) {
		usertp__fd_close_if(fd, &id);
		return ret < 0 ? ret : -EIO;
	}
	return conn_add(fd, &id, NULL);
}

/*
 * Join the sessions whose sockets (or links to them) are in @dir, with names that begin with
 * @prefix (at most USERTP_CTL_MAX_ALL in all): before main() with @wait, else from the
 * control thread those not joined before.
 */
static void join_recorders_in(const char *dir, const char *prefix, unsigned int *joined, bool wait)
{
	char path[PATH_MAX + 300];
	struct dirent *de;
	struct stat st;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d)) && *joined < USERTP_CTL_MAX_ALL) {
		if (de->d_name[0] == '.' || strncmp(de->d_name, prefix, strlen(prefix)) ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= sizeof(path))
			continue;
		if (stat(path, &st) || !S_ISSOCK(st.st_mode))
			continue;
		if (wait) {
			if (join_recorder(path, JOIN_ALL_MS, JOIN_ALL_BUSY_MS, true) && nr_joined_all < USERTP_CTL_MAX_ALL)
				joined_all[nr_joined_all++] = (typeof(joined_all[0])){ st.st_dev, st.st_ino };
		} else if (!joined_already(&st)) {
			join_recorder_served(path, false);
		}
		(*joined)++;
	}
	closedir(d);
}

/*
 * Sessions that record every program of the user (`usertp record -a`, usertp mount's
 * instances) are running: each records this one too, from before main() (@wait).  Root's
 * record every user's: another user's program finds them in the system directory.
 *
 * The control thread looks again once its endpoint exists (!@wait): a session that began
 * after the first look and listed the programs before the endpoint was made (those two
 * moments are ours alone: main() does not wait for the endpoint) knows nothing of this program
 * otherwise.  A session that found the endpoint meanwhile keeps the program it has, and
 * refuses this join (session-join.c).
 */
static void join_recorders_of_all(bool wait)
{
	char dir[PATH_MAX];
	unsigned int joined = 0;

	if (!usertp__ctl_dir(dir, sizeof(dir) - sizeof(USERTP_CTL_ALL_DIR) - 1, false)) {
		strcat(dir, "/" USERTP_CTL_ALL_DIR);
		join_recorders_in(dir, "", &joined, wait);
	}
	if (geteuid() != 0 && !usertp__ctl_system_dir(dir, sizeof(dir), false))
		join_recorders_in(dir, USERTP_CTL_ALL_PREFIX, &joined, wait);
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&usertp__ctl.lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&usertp__ctl.lock);
}

/*
 * In a forked child, session @s (the parent's) gets buffers of its own, announced to its
 * recorder on a connection of its own, @c's (NULL: none free, it stays off).  A recorder too
 * busy to hear of them now (its backlog full: a burst of forks) hears later: they record
 * meanwhile, announced again from the thread (rejoin(); before, the session stayed off, and
 * what the child fired was recorded nowhere and counted nowhere).  Return: 0 when @s is on
 * @c, 1 when its announce waits in usertp__ctl.rejoins, a negative errno when it stays off.
 */
static int fork_session(struct usertp__session *s, struct conn *c)
{
	struct usertp__fd_id id;
	int fd, ret = c ? usertp__session_fork_buffers(s) : -EBUSY;

	fd = ret ? ret : usertp__session_fork_announce(s, &id);
	if (fd >= 0) {
		usertp__control_conn_set_fd(c, fd);
		return 0;
	}
	/* (The child has one thread: usertp__ctl.lock is not needed.) */
	if (!ret && !recorder_gone(fd) && rejoin_later(s, NULL, true, usertp__mono_ms()))
		return 1;
	__atomic_store_n(&s->sink.active, false, __ATOMIC_RELAXED); /* (stays off) */
	return fd;
}

/* A forked child: its own endpoint and thread; its sessions get their own buffers. */
static void fork_child(void)
{
	struct usertp__session *pending[MAX_CONNS];
	bool endpoint_ok, thread_ok, served = false, had[MAX_CONNS];
	unsigned int i;
	int ret;

	pthread_mutex_unlock(&usertp__ctl.lock);
	pthread_mutex_init(&endpoint_opening, NULL); /* (the parent's thread may have held it) */
	usertp__ctl.thread = false;
	if (!usertp__ctl.pid)
		return; /* nothing of ours runs in this process */
	usertp__ctl.pid = getpid();
	/* (Each closed only if still ours: endpoint_lost().) */
	if (usertp__ctl.listen_fd >= 0)
		usertp__fd_close_if(usertp__ctl.listen_fd, &usertp__ctl.listen_id);
	for (i = 0; i < 2; i++)
		if (usertp__ctl.wake[i] >= 0)
			usertp__fd_close_if(usertp__ctl.wake[i], &usertp__ctl.wake_id[i]);
	usertp__ctl.listen_fd = usertp__ctl.wake[0] = usertp__ctl.wake[1] = -1;
	usertp__ctl.path[0] = 0;
	/*
	 * The parent's connections at once: one the parent closes when it ends must then be
	 * closed, or its recorder would not see that end until we are done here.
	 */
	for (i = 0; i < MAX_CONNS; i++) {
		struct conn *c = &usertp__ctl.conns[i];

		had[i] = c->fd >= 0;
		if (!had[i])
			continue;
		usertp__control_conn_close_fd(c);
		usertp__control_free_io(c); /* the parent's: it sends them */
		/*
		 * A session the parent was resuming on this connection (rejoin()) is ours to go
		 * on with; one that a new session replaces writes no more: neither writes into
		 * the parent's buffers.
		 */
		if (c->replaces && !c->session)
			c->session = c->replaces;
		else if (c->replaces)
			__atomic_store_n(&c->replaces->sink.active, false, __ATOMIC_RELAXED);
		c->replaces = NULL;
	}
	/*
	 * Then the endpoint: the recorder asks it about us as soon as it hears of us.
	 * ThreadSanitizer cannot follow a thread started after a multi-threaded fork (it stops
	 * the process): its builds give forked children no endpoint (their sessions still
	 * record; the recorder learns of them from the "fork" message).
	 */
#if defined(__SANITIZE_THREAD__)
	endpoint_ok = thread_ok = false;
#else
	endpoint_ok = usertp__ctl.on && !endpoint_open();
	thread_ok = true;
#endif
	/*
	 * A session the parent was to join its recorder again with (rejoin()): ours records in
	 * a buffer of its own too, on a connection of its own, not in the parent's.  (Taken out
	 * first: the entries are the child's own announces below.)
	 */
	for (i = 0; i < MAX_CONNS; i++) {
		pending[i] = usertp__ctl.rejoins[i].session;
		usertp__ctl.rejoins[i] = (struct rejoin){ 0 };
	}
	for (i = 0; i < MAX_CONNS; i++) {
		struct conn *c = &usertp__ctl.conns[i];

		if (!had[i] || !c->session)
			continue;
		ret = fork_session(c->session, c);
		if (ret)
			c->session = NULL; /* (off: its memory is the parent's story; or pending) */
		served |= ret >= 0;
	}
	for (i = 0; i < MAX_CONNS; i++) {
		unsigned int k;

		if (!pending[i])
			continue;
		for (k = 0; k < MAX_CONNS && (usertp__ctl.conns[k].fd >= 0 ||
					      usertp__ctl.conns[k].session); k++)
			;
		ret = fork_session(pending[i], k < MAX_CONNS ? &usertp__ctl.conns[k] : NULL);
		if (!ret)
			usertp__ctl.conns[k].session = pending[i];
		served |= ret >= 0;
	}
	/* The thread serves the endpoint, the sessions' connections, and their announces. */
	if (thread_ok && (endpoint_ok || served))
		thread_start(false);
}

static void __attribute__((constructor)) control_init(void)
{
	const char *v = secure_getenv("USERTP_CONTROL"), *session = secure_getenv("USERTP_SESSION");
	bool off;
	unsigned int i;

	for (i = 0; i < MAX_CONNS; i++)
		usertp__ctl.conns[i].fd = usertp__ctl.conns[i].in_fd = -1;
	if (usertp__runtime_later())
		return; /* the first copy of libusertp serves the process */
	if (v && strcmp(v, "0") && strcmp(v, "1")) {
		fprintf(stderr, "usertp: USERTP_CONTROL=%s: not 0 or 1; the control endpoint stays on\n",
			v);
		v = NULL;
	}
	off = v && !strcmp(v, "0");
	/* A recorder this program was started by is joined even with the endpoint off. */
	if (off && !(session && *session))
		return;
	usertp__init();
	usertp__ctl.on = !off;
	usertp__ctl.pid = getpid();
	if (session && *session) {
		/* Its recorders' sockets, a line each (usertp_session_run_also()), in order. */
		for (const char *p = session; *p; p += strcspn(p, "\n"), p += *p == '\n') {
			char path[PATH_MAX];
			size_t len = strcspn(p, "\n");

			if (!len || len >= sizeof(path))
				continue;
			memcpy(path, p, len);
			path[len] = 0;
			join_recorder(path, JOIN_SESSION_MS, JOIN_SESSION_MS, false);
		}
	} else {
		looked_at_all = true;
		join_recorders_of_all(true);
	}
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	atexit(at_exit);
	if (off)
		return;
	usertp__jump_label_prepare();
	thread_start(true); /* no runtime directory we can trust: the thread ends there */
}
