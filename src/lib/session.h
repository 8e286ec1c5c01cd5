/* SPDX-License-Identifier: MIT */
/* session.h - private to libusertp: recording sessions of outside recorders (session.c). */
#ifndef USERTP_SESSION_H
#define USERTP_SESSION_H

#include <stddef.h>

#include "internal.h"

struct usertp__session {
	struct usertp__rb_sink sink;
	char recorder[108]; /* the recorder's socket, where forked children announce themselves */
};

/*
 * Start a session from a "start" request (events=SPECS kb=N overwrite=0|1 clock=mono|x86-tsc
 * recorder=PATH).  Return: 0, or a negative errno with *why saying what was wrong (or NULL).
 */
USERTP_HIDDEN int usertp__session_start(const char *request, struct usertp__session **out,
					const char **why);
/* Stop recording and free the buffers (the recorder's mapping stays valid). */
USERTP_HIDDEN void usertp__session_end(struct usertp__session *s);
/* "id sys:event" lines of the events the session records. */
USERTP_HIDDEN size_t usertp__session_enabled(const struct usertp__session *s, char *buf,
					     size_t size);
/*
 * In a forked child: new buffers, and the recorder told about them on a new connection.
 * Return: that connection, or a negative errno (the session then records nothing).
 */
USERTP_HIDDEN int usertp__session_fork_child(struct usertp__session *s);

#endif
