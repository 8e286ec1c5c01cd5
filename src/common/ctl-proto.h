/* SPDX-License-Identifier: MIT */
/*
 * ctl-proto.h - the control protocol between libusertp in a program and the usertp command
 * (private to both; compiled into each).
 *
 * Where: a per-user runtime directory (usertp_ctl_dir() below says which); created 0700 and
 * refused when it is not ours or others may enter it.  A program's endpoint is
 * "<dir>/<pid>.sock" (a Unix stream socket, 0600); a recorder's is "<dir>/record-<pid>.sock",
 * and "<dir>/record-all.sock" while a recorder records every program of the user (programs
 * that start join it).  Every connection's peer uid is checked (SO_PEERCRED): the same user
 * or root.
 *
 * Messages: a u32 length (host order, at most USERTP_CTL_MAX_MSG) then that many bytes of
 * text: a command word and "key=value" words on the first line, data lines after it.
 * A message may carry one file descriptor (SCM_RIGHTS).  Replies start "ok" or
 * "error <errno-name> <text>".
 */
#ifndef USERTP_CTL_PROTO_H
#define USERTP_CTL_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

#define USERTP_CTL_VERSION 1
#define USERTP_CTL_MAX_MSG (1u << 20)
/* In the runtime directory while `usertp record -a` runs: programs that start join it. */
#define USERTP_CTL_RECORD_ALL "record-all.sock"

/*
 * The runtime directory into @buf; with @create, made if missing: $XDG_RUNTIME_DIR/usertp,
 * /run/user/UID/usertp, /tmp/usertp-UID, or when another user made that one first,
 * ~/.cache/usertp-run.  Return: 0, -EPERM when it exists but is not ours alone, or another
 * negative errno.
 */
int usertp_ctl_dir(char *buf, size_t size, bool create);
/* The same; @note gets what was passed over and why (empty if nothing), for a warning. */
int usertp_ctl_dir_note(char *buf, size_t size, bool create, char *note, size_t note_size);
/* The runtime directory of user @uid for a process whose environment is @environ (root). */
int usertp_ctl_dir_of(char *buf, size_t size, uid_t uid, const char *xdg_runtime_dir);

/* Room for the control data of a message passing one descriptor. */
union usertp_ctl_fd_control {
	struct cmsghdr align;
	char buf[CMSG_SPACE(sizeof(int))];
};
/* Make @mh pass descriptor @fd (SCM_RIGHTS), in @control. */
void usertp_ctl_attach_fd(struct msghdr *mh, union usertp_ctl_fd_control *control, int fd);

/* Send one message, with @pass_fd when it is >= 0.  Return: 0 or a negative errno. */
int usertp_ctl_send(int sock, const void *msg, size_t len, int pass_fd);
/* printf-style send. */
int usertp_ctl_sendf(int sock, int pass_fd, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Send a short message only if the socket takes it now (errors to peers we drop). */
void usertp_ctl_sendf_nowait(int sock, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Receive one message into @buf (NUL-terminated; @cap includes the NUL), the whole of it
 * within @timeout_ms (-1: no limit).  A descriptor that came with it goes to *fd
 * (-1 if none; fd may be NULL: it is then closed).
 * Return: its length, 0 at end of stream, -ETIMEDOUT, -EMSGSIZE (too long: the stream is
 * then out of step, close it), or another negative errno.
 */
long usertp_ctl_recv(int sock, char *buf, size_t cap, int *fd, int timeout_ms);

/* The value of "key=" in the first line of @msg into @out (cut at @size); false if absent. */
bool usertp_ctl_arg(const char *msg, const char *key, char *out, size_t size);

/* Is the peer of @sock the same user as us, or root?  *uid gets its uid. */
bool usertp_ctl_peer_allowed(int sock, uid_t *uid);

/*
 * Connect to the Unix socket at @path; a listener that does not take connections now gives
 * -EAGAIN at once.  Return: the (blocking) socket or a negative errno.
 */
int usertp_ctl_connect(const char *path);

#endif /* USERTP_CTL_PROTO_H */
