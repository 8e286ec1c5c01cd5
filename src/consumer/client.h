/* SPDX-License-Identifier: MIT */
/*
 * client.h - private to the usertp command: finding programs that use libusertp and talking
 * to their control endpoints (src/lib/ctl-proto.h has the protocol).
 */
#ifndef USERTP_CLIENT_H
#define USERTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "ctl-proto.h"

struct usertp__program {
	pid_t pid;
	char comm[17];
	char path[108]; /* its endpoint */
	bool foreign;	/* another user's (only root lists them) */
};

/*
 * How long root waits for an answer of another user's program, which it does not trust
 * to answer at all: as long as such a program waits for root's sessions when it joins
 * (JOIN_ALL_MS in src/lib/control.c).
 */
#define USERTP__FOREIGN_ANSWER_MS 250

/*
 * The programs with an endpoint in our runtime directory, by pid (endpoints left by dead
 * processes are removed); as root with @every_user, every other user's too.  Return: how
 * many (in *out, to free()), or a negative errno.
 */
int usertp__client_programs(struct usertp__program **out, bool every_user);
/*
 * The runtime directory (ctl-proto.h), with a warning on stderr, once, when it is not the
 * usual one because another user took that, or when it cannot be used.
 */
int usertp__client_dir(char *buf, size_t size, bool create);
/* Remove the sockets recorders that died left in the runtime directory. */
void usertp__client_remove_stale(void);
/* The same in directory @dir (the system directory: root's sockets for every user). */
void usertp__client_remove_stale_in(const char *dir);

/*
 * Find the endpoint of process @pid: ours, or as root any user's.  A process younger than
 * USERTP_CTL_STARTING_MS may not have made it yet: it is waited for until then.
 * Return: 0, -ESRCH when there is no such process, -ENOENT when it has no endpoint, -EBUSY
 * when the endpoint serves all it can, -EACCES when it refuses us, -ETIMEDOUT when it does
 * not answer, -EPROTO when it answers nonsense.
 */
int usertp__client_find(pid_t pid, struct usertp__program *prog);
/*
 * The same, without waiting: for a program already in touch with us (one that joins a
 * recorder has no endpoint until it has joined; one that called exec() may have none yet).
 */
int usertp__client_find_now(pid_t pid, struct usertp__program *prog);
/* What an error of usertp__client_find() means, for a message. */
const char *usertp__client_find_error(int err);

/*
 * Ask each of @progs (@n of them) the request @req (a word alone: hello, events, ids) at once, each on a connection of its own, and take
 * the replies as they come: a program of ours is waited for @timeout_ms from the start, another
 * user's USERTP__FOREIGN_ANSWER_MS, so that programs that do not answer cost that once, not
 * once each.  replies[i]: its reply (to free()) or NULL; results[i]: as usertp__client_call()'s
 * (-ENOENT: it could not be reached, -EBUSY: its backlog is full).  Return: 0 or -ENOMEM.
 */
int usertp__client_ask_all(const struct usertp__program *progs, size_t n,
			   enum usertp__ctl_type req, int timeout_ms, char **replies, int *results);

/* Connect to @prog's endpoint.  Return: the socket or a negative errno. */
int usertp__client_connect(const struct usertp__program *prog);

/*
 * Send the request @req with its argument @arg (or NULL: "format SYS:EVENT" has one), encoded
 * by the protocol's codec, and wait for the reply (at most @timeout_ms per part).  *reply (to
 * free()) holds it, NUL-terminated; *fd a descriptor that came with it (or -1; may be NULL).
 * Return: 0 when the reply is "ok...", -EREMOTEIO for an "error ..." reply (still in *reply),
 * another negative errno when the exchange failed.
 */
int usertp__client_call(int sock, enum usertp__ctl_type req, const char *arg, char **reply,
			int *fd, int timeout_ms);

/*
 * The same for the request @req with its keys, and @pass_fd (>= 0) sent with it; an "ok"
 * reply is decoded into *ok (its texts point into *reply).  Return: as usertp__client_call(),
 * or -EPROTO for a reply that does not decode.
 */
int usertp__client_call_msg(int sock, const struct usertp__ctl_msg *req, int pass_fd, char **reply,
			   struct usertp__ctl_msg *ok, int *fd, int timeout_ms);

/* The text after the first line of a reply. */
const char *usertp__client_body(const char *reply);

/* An "error ERRNO text" reply as "text (ERRNO)" for messages. */
const char *usertp__client_error_text(const char *reply, char *buf, size_t size);

#endif
