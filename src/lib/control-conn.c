/* SPDX-License-Identifier: MIT */
/*
 * control-conn.c - the control endpoint's connections (control-private.h): their table, and
 * sending on them, queued, so that the endpoint's thread never waits for a peer.  Below the
 * endpoint (control.c) and the requests (control-serve.c), which both send.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl-proto.h"
#include "internal.h"
#include "control-private.h"

struct usertp__ctl usertp__ctl = { .listen_fd = -1, .wake = { -1, -1 },
				   .lock = PTHREAD_MUTEX_INITIALIZER };

/* --- sending: queued, never waited for by the thread -------------------------------------- */

/* Under usertp__ctl.lock. */
int usertp__control_queue_locked(struct conn *c, const char *text, size_t len, int pass_fd,
				 const struct usertp__fd_id *pass_id)
{
	struct out_msg *m;
	uint32_t hdr = (uint32_t)len;

	if (len > USERTP_CTL_MAX_MSG || c->out_bytes + len > OUT_LIMIT)
		return -ENOBUFS;
	m = malloc(sizeof(*m) + sizeof(hdr) + len);
	if (!m)
		return -ENOMEM;
	m->next = NULL;
	m->len = sizeof(hdr) + len;
	m->off = 0;
	m->fd = pass_fd >= 0 ? fcntl(pass_fd, F_DUPFD_CLOEXEC, 3) : -1;
	if (pass_fd >= 0 && m->fd < 0) {
		free(m);
		return -errno;
	}
	/* (A copy of a file of the program's, which took the number: never sent.) */
	if (m->fd >= 0 && !usertp__fd_is(m->fd, pass_id)) {
		close(m->fd); /* (the copy just made) */
		free(m);
		return -EBADF;
	}
	m->fd_id = pass_fd >= 0 ? *pass_id : (struct usertp__fd_id){ 0, 0 };
	memcpy(m->data, &hdr, sizeof(hdr));
	memcpy(m->data + sizeof(hdr), text, len);
	if (!c->out)
		c->out_tail = &c->out;
	*c->out_tail = m;
	c->out_tail = &m->next;
	c->out_bytes += len;
	return 0;
}

/* Send what the peer takes now.  Under usertp__ctl.lock.  Return: 0 (sent or waiting) or -errno. */
int usertp__control_flush_locked(struct conn *c)
{
	struct out_msg *m;

	while ((m = c->out)) {
		union usertp__ctl_fd_control control;
		struct iovec iov = { m->data + m->off, m->len - m->off };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n;

		/*
		 * The descriptor goes with the message's first bytes.  Neither it nor the socket
		 * is used unless still ours: a program that closed them may have opened its own
		 * files under their numbers, which must never be sent, or sent to.
		 */
		if ((m->fd >= 0 && !m->off && !usertp__fd_is(m->fd, &m->fd_id)) ||
		    !usertp__fd_is(c->fd, &c->fd_id))
			return -EBADF;
		if (m->fd >= 0 && !m->off)
			usertp__ctl_attach_fd(&mh, &control, m->fd);
		n = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		m->off += (size_t)n;
		if (m->off < m->len)
			continue;
		c->out = m->next;
		c->out_bytes -= m->len - sizeof(uint32_t);
		if (m->fd >= 0)
			usertp__fd_close_if(m->fd, &m->fd_id);
		free(m);
	}
	return 0;
}

void usertp__control_free_io(struct conn *c)
{
	struct out_msg *m;

	while ((m = c->out)) {
		c->out = m->next;
		if (m->fd >= 0)
			usertp__fd_close_if(m->fd, &m->fd_id);
		free(m);
	}
	c->out_bytes = 0;
	free(c->in);
	c->in = NULL;
	c->in_len = 0;
	c->deadline = 0;
	usertp__control_conn_drop_in_fd(c);
}

void usertp__control_wake(void)
{
	int fd = __atomic_load_n(&usertp__ctl.wake[1], __ATOMIC_ACQUIRE);
	/* (The thread makes them again when the program took them: endpoint_lost().) */
	struct usertp__fd_id id = { __atomic_load_n(&usertp__ctl.wake_id[1].dev, __ATOMIC_RELAXED),
				    __atomic_load_n(&usertp__ctl.wake_id[1].ino, __ATOMIC_RELAXED) };

	/* (Not a byte into a file of the program's that has the pipe's number now.) */
	if (fd >= 0 && usertp__fd_is(fd, &id))
		(void)!write(fd, "", 1);
}

void usertp__control_conn_set_fd(struct conn *c, int fd)
{
	c->fd = fd;
	(void)usertp__fd_id_get(fd, S_IFSOCK, &c->fd_id); /* (else lost at once: conn_lost()) */
}

void usertp__control_conn_close_fd(struct conn *c)
{
	if (c->fd >= 0)
		usertp__fd_close_if(c->fd, &c->fd_id);
	c->fd = -1;
}

/*
 * (Noted at once: a daemon may close it and open a file of its own under its number, an
 * eventfd say, before the request is served.  An older recorder's wake eventfd is not kept:
 * every eventfd has the same identity, so one of the program's could not be told from it.)
 */
void usertp__control_conn_take_fd(struct conn *c, int fd)
{
	if (c->in_fd >= 0 || usertp__fd_id_get(fd, S_IFSOCK, &c->in_fd_id)) {
		close(fd); /* (received just now: ours) */
		return;
	}
	c->in_fd = fd;
}

void usertp__control_conn_drop_in_fd(struct conn *c)
{
	if (c->in_fd >= 0)
		usertp__fd_close_if(c->in_fd, &c->in_fd_id);
	c->in_fd = -1;
}

/*
 * Send @text on @c now if the peer takes it, else leave it to the thread (or, where there is
 * no thread, wait for the peer at most @wait_ms).  Under usertp__ctl.lock.
 */
int usertp__control_send_locked(struct conn *c, const char *text, size_t len, int pass_fd,
				const struct usertp__fd_id *pass_id, int wait_ms)
{
	long long until = usertp__mono_ms() + wait_ms;
	int ret = usertp__control_queue_locked(c, text, len, pass_fd, pass_id);

	if (ret)
		return ret;
	for (;;) {
		struct pollfd p = { c->fd, POLLOUT, 0 };
		long long left;

		ret = usertp__control_flush_locked(c);
		if (ret || !c->out)
			return ret;
		if (usertp__ctl.thread) {
			usertp__control_wake(); /* it polls for POLLOUT now */
			return 0;
		}
		left = until - usertp__mono_ms();
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return -ETIMEDOUT;
	}
}

/* --- news for recorders ------------------------------------------------------------------- */

void usertp__control_news_send(const char *msg, size_t len, void *arg)
{
	struct conn *c = arg;

	/* Without a thread (USERTP_CONTROL=0 under a recorder) nobody sends it later. */
	usertp__control_send_locked(c, msg, len, -1, NULL, 1000);
}
