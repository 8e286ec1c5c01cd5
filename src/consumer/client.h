/* SPDX-License-Identifier: MIT */
/*
 * client.h - private to libusertp-consumer: the rest of client.c, besides what the tools take
 * (private/usertp-consumer-private.h): finding programs that use libusertp and talking to
 * their control endpoints (src/common/ctl-proto.h has the protocol).
 */
#ifndef USERTP_CLIENT_H
#define USERTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "ctl-proto.h"
#include "private/usertp-consumer-private.h"

/*
 * How long root waits for an answer of another user's program, which it does not trust
 * to answer at all: as long as such a program waits for root's sessions when it joins
 * (JOIN_ALL_MS in src/lib/control.c, its wait for a recorder that is stopped).
 */
#define USERTP__FOREIGN_ANSWER_MS 250

/* Remove the sockets recorders that died left in the runtime directory. */
void usertp__client_remove_stale(void);
/* The same in directory @dir (the system directory: root's sockets for every user). */
void usertp__client_remove_stale_in(const char *dir);

/*
 * usertp__client_find() without waiting: for a program already in touch with us (one that joins a
 * recorder has no endpoint until it has joined; one that called exec() may have none yet).
 */
int usertp__client_find_now(pid_t pid, struct usertp__program *prog);
/*
 * Whether a knock on @prog's endpoint that failed with @err, the first at @since_ms
 * (usertp__mono_ms()), is made again: its endpoint may be being made again by a daemon that
 * closed it (USERTP_CTL_REMADE_MS, ctl-proto.h), while the process runs and its own socket is
 * there.  Waits a little first when it is.
 */
bool usertp__client_knock_again(const struct usertp__program *prog, int err, long long since_ms);
/*
 * usertp__client_call() for the request @req with its keys, and @pass_fd (>= 0) sent with it; an "ok"
 * reply is decoded into *ok (its texts point into *reply).  Return: as usertp__client_call(),
 * or -EPROTO for a reply that does not decode.
 */
int usertp__client_call_msg(int sock, const struct usertp__ctl_msg *req, int pass_fd, char **reply,
			   struct usertp__ctl_msg *ok, int *fd, int timeout_ms);

#endif
