/* SPDX-License-Identifier: MIT */
/*
 * remote-session.h - private to libusertp: the program's side of the sessions of consumers
 * outside the process (remote-session.c).
 */
#ifndef USERTP_REMOTE_SESSION_H
#define USERTP_REMOTE_SESSION_H

#include <stddef.h>

#include "ctl-proto.h"
#include "internal.h"
#include "rb-sink.h"

struct usertp__session {
	struct usertp__rb_sink sink;
	struct usertp_listener *listener; /* the session's events, recording into sink */
	bool tracing; /* the recorder's tracing on/off (sink.active follows it) */
	char recorder[108]; /* the recorder's socket, where forked children announce themselves */
	/* In a forked child: the inode of its parent's region, told in the announce (0: none). */
	uint64_t parent_region;
	/*
	 * What the recorder was told, by event id: the event whose name it has (named), and
	 * the one whose format it has (described).  An id whose event changed (unloaded, the id
	 * reused) is told again.
	 */
	const struct usertp_event **named, **described;
	unsigned int nr_named, nr_described;
	/* usertp_printk()'s formats it was told of: the first printk_told of the table's. */
	unsigned int printk_told;
	/*
	 * Events that refused their filter (not recorded): what the recorder is to be told, as
	 * "refused" news (usertp__session_news()), a line then the filter file's text each.
	 */
	char *refused;
	/*
	 * at_start=1 (the recorder's own command): an event of the executable or of a library it
	 * links that refuses its filter stops the start; the refusal is told with at_start=1
	 * (refused_at_start), and the registering thread waits for the recorder's verdict: "run",
	 * or the end of the program (awaiting_verdict, under usertp__lock).
	 */
	bool at_start, refused_at_start, awaiting_verdict;
	bool starting; /* its start is applying its specs (a refusal fails the start) */
};

/*
 * Start a session from a "start" request (events=SPECS kb=N overwrite=0|1 clock=mono|x86-tsc
 * tracing=0|1 recorder=PATH); @wake_fd (or -1), the recorder's wake socket, whose identity
 * @wake_id noted as it came, is the session's from then on, set before anything is recorded.
 * Return: 0, or a negative errno with *why saying what was wrong (or NULL); @wake_fd is then
 * the caller's still.
 */
USERTP_HIDDEN int usertp__session_start(const struct usertp__ctl_msg *request, int wake_fd,
					const struct usertp__fd_id *wake_id,
					struct usertp__session **out, const char **why);
/*
 * Change a session's settings from a "set" request (events=SPECS, the whole new list;
 * tracing=0|1), while its program runs.  Return: 0, or a negative errno with *why saying what
 * was wrong (nothing then changes).
 */
USERTP_HIDDEN int usertp__session_set(struct usertp__session *s, const struct usertp__ctl_msg *request,
				      const char **why);
/*
 * The filter (@text, in the kernel's grammar; empty or "0": none) of the session's events
 * @events selects, at once.  Return: 0, or a negative errno with *why holding a line and the
 * filter file's text (the expression, a caret, the kernel's message); nothing then changes.
 */
USERTP_HIDDEN int usertp__session_filter(struct usertp__session *s, const char *events,
					 const char *text, const char **why);
/*
 * The session's pid filter from @request's pids=, notrace_pids= and event_fork= (absent: an
 * empty list, 0), replacing the one it had.  With @starting, a program that follows is listed
 * where its nearest listed ancestor is (it was started by a listed process).
 * Return: 0 or -ENOMEM (nothing changes).
 */
USERTP_HIDDEN int usertp__session_pids(struct usertp__session *s,
				       const struct usertp__ctl_msg *request, bool starting);
/* Stop recording and free the buffers (the recorder's mapping stays valid). */
USERTP_HIDDEN void usertp__session_end(struct usertp__session *s);
/* "id sys:event" lines of the events the session records. */
USERTP_HIDDEN size_t usertp__session_enabled(const struct usertp__session *s, char *buf,
					     size_t size);
/*
 * The news for the session's recorder since last time: an "events" message naming the
 * events it has not heard of ("id sys:event" lines), and a "format id=N" message with the
 * format text of each new event the session records.  @emit gets each message.
 * Return: 0 or -ENOMEM (the rest is told next time).
 */
USERTP_HIDDEN int usertp__session_news(struct usertp__session *s,
				       void (*emit)(const char *msg, size_t len, void *arg),
				       void *arg);
/*
 * Is a thread waiting for @s's recorder to judge a refusal at the program's start (true), and
 * with @go, let it go on.  Under usertp__lock.
 */
USERTP_HIDDEN bool usertp__session_verdict_locked(struct usertp__session *s, bool go);
/* Take everything there is now as told (the start reply tells it). */
USERTP_HIDDEN void usertp__session_news_skip(struct usertp__session *s);
/*
 * Take nothing as told: the next news tell everything again (a session resumed on a new
 * connection: what was queued on the one the program closed never went).
 */
USERTP_HIDDEN void usertp__session_news_forget(struct usertp__session *s);

/*
 * In a forked child: buffers of its own, which record from then on (the recorder hears of
 * them from usertp__session_fork_announce()).  Return: 0, or a negative errno (no recorder,
 * no memory: the session then records nothing).
 */
USERTP_HIDDEN int usertp__session_fork_buffers(struct usertp__session *s);
/*
 * Tell the recorder of a forked child's buffers ("fork", with their memfd) on a new
 * connection.  Return: it (its identity in *@id), or a negative errno (-EAGAIN: the recorder
 * too busy to take it now: the buffers record on, to be announced again).
 */
USERTP_HIDDEN int usertp__session_fork_announce(struct usertp__session *s, struct usertp__fd_id *id);

#endif
