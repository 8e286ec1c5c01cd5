/* SPDX-License-Identifier: MIT */
/*
 * net-send.h - usertp record -N: a recording sent to `trace-cmd listen` with trace-cmd's own
 * protocol (net-send.c), so that trace-cmd's receiver writes the file on its machine.
 */
#ifndef USERTP_NET_SEND_H
#define USERTP_NET_SEND_H

#include <stddef.h>

/* A listener's address as -N takes it: HOST:PORT, [IPv6]:PORT, or PORT (localhost). */
struct usertp__listener {
	char host[256];
	char port[8];
};

/*
 * Parse @text into @l and resolve it (a name that does not resolve is an error now, before
 * anything runs).  Return: 0, or -1 with the reason in @err.
 */
int usertp__listener_parse(const char *text, struct usertp__listener *l, char *err, size_t err_size);

/*
 * Is trace-cmd listen there: a connection, and its greeting, then closed (the listener logs
 * a client that went away).  Return: 0, or -1 with the reason in @err.
 */
int usertp__listener_probe(const struct usertp__listener *l, char *err, size_t err_size);

/*
 * Send the trace.dat (version 6) at @path to @l, as trace-cmd record -N sends a recording:
 * its metadata and options as messages, each CPU's pages on a connection of their own, then
 * the close, once the listener's readers have taken every byte.  Every step is bounded in
 * time.  Return: 0 once the listener has the whole file, or -1 with the reason in @err.
 */
int usertp__listener_send(const struct usertp__listener *l, const char *path, char *err, size_t err_size);

#endif /* USERTP_NET_SEND_H */
