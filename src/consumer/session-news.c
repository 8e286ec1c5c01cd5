/* SPDX-License-Identifier: MIT */
/*
 * session-news.c - what a session's programs say on their session connections unasked
 * (session.h): new events, the formats of those it records, refused filters, their threads'
 * names at exit; and the wait for a format that is on its way.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/un.h>
#include <unistd.h>

#include "proc.h"
#include "client.h"
#include "ctl-proto.h"
#include "number.h"
#include "session.h"
#include "filter.h"
#include "format-field.h"
#include "spec.h"

/*
 * The command usertp_session_run() started refused a filter at its start (an event its
 * executable or a library it links defines does not take it): like trace-cmd, which refuses
 * such a filter before anything runs, it is stopped before its main() (its parent reaps it).
 * Return: whether @src is that command.
 */
bool usertp__ses_command_stop(struct usertp_session *s, const struct usertp__source *src)
{
	if (!s->run_pid || src->pid != s->run_pid || src->forked_from)
		return false;
	kill(src->pid, SIGKILL);
	s->run_stopped = true;
	return true;
}

/*
 * Take one message a program sent on its session connection unasked: "events" (new events:
 * their names), "format" (the format of a new event the session records; before any of it
 * can fire) or "exit" (the names of its threads).  Replies ("ok", "error") are the caller's.
 */
void usertp__ses_session_news(struct usertp_session *s, struct usertp__source *src,
			 const struct usertp__ctl_msg *msg)
{
	char system[256];
	const char *name, *line;
	unsigned int id;

	switch (msg->type) {
	case USERTP_CTL_MSG_EXIT:
		src->said_exit = true;
		usertp__source_keep_comms(s, src, msg->body);
		break;
	case USERTP_CTL_MSG_COMMS:
		/* Threads it noted faster than we ask: told before its ring drops them. */
		if (usertp__ctl_has(msg, USERTP_CTL_KEY_SINCE) &&
		    msg->num[USERTP_CTL_KEY_SINCE] > src->comms_since)
			src->comms_since = msg->num[USERTP_CTL_KEY_SINCE];
		usertp__source_keep_comms(s, src, msg->body);
		break;
	case USERTP_CTL_MSG_REFUSED: {
		/* Said once, whole (without the filter file's last empty line). */
		size_t len = strlen(msg->body);

		while (len && msg->body[len - 1] == '\n')
			len--;
		usertp__session_log(s, "%s: %.*s", src->name, (int)len, msg->body);
		s->refused++;
		/* Before main(): our command stops there; another program waits for a word. */
		if (msg->num[USERTP_CTL_KEY_AT_START] && !usertp__ses_command_stop(s, src))
			usertp__ctl_send_msg(src->session,
					     &(struct usertp__ctl_msg){ .type = USERTP_CTL_MSG_RUN }, -1);
		break;
	}
	case USERTP_CTL_MSG_EVENTS:
		for (const char *p = msg->body; *p; p += strcspn(p, "\n"), p += *p == '\n') {
			const char *sp = memchr(p, ' ', strcspn(p, "\n"));

			if (sp)
				usertp__ses_names_add(s, sp + 1, strcspn(sp + 1, "\n"));
		}
		break;
	case USERTP_CTL_MSG_PRINTK:
		usertp__session_keep_printk(s, src, msg->body);
		break;
	case USERTP_CTL_MSG_FORMAT:
		line = msg->text[USERTP_CTL_KEY_NAME];
		id = (unsigned int)msg->num[USERTP_CTL_KEY_ID];
		if (!usertp__ctl_has(msg, USERTP_CTL_KEY_NAME) || !usertp__ctl_has(msg, USERTP_CTL_KEY_ID) ||
		    !usertp__ses_split_event(line, system, sizeof(system), &name))
			break;
		usertp__ses_names_add(s, line, strlen(line));
		if (!usertp__source_has_event(src, id) && usertp__session_selects(s, system, name))
			usertp__source_keep_format(s, src, id, system, msg->body);
		break;
	default:
		break;
	}
}

/* Read one message of @src's session connection.  False: the session is over. */
bool usertp__ses_session_message(struct usertp_session *s, struct usertp__source *src)
{
	char *message = usertp__ses_message_buffer(s);
	long n = message ? usertp__ctl_recv(src->session, message, USERTP_CTL_MAX_MSG + 1, NULL,
					    USERTP__CALL_TIMEOUT_MS)
			 : -ENOMEM;
	struct usertp__ctl_msg m;
	const char *why;

	if (n <= 0)
		return false;
	/* (A message that does not decode is a program's bug or malice: left out.) */
	if (usertp__ctl_decode(message, &m, &why))
		return true;
	if ((m.type == USERTP_CTL_MSG_OK || m.type == USERTP_CTL_MSG_ERROR) && src->unanswered)
		src->unanswered--; /* a reply that came late */
	else
		usertp__ses_session_news(s, src, &m);
	return true;
}

/*
 * A forked child has its parent's events: also those the parent told of after the fork, in
 * news the session may not have read yet when the child's record comes.
 */
static bool inherited(struct usertp_session *s, struct usertp__source *src, unsigned int id)
{
	struct usertp__source *parent = src->forked_from;
	struct pollfd p = { parent ? parent->session : -1, POLLIN, 0 };

	if (!parent)
		return false;
	while (parent->session >= 0 && poll(&p, 1, 0) == 1 && (p.revents & POLLIN) &&
	       usertp__ses_session_message(s, parent))
		;
	usertp__source_inherit(s, src);
	return usertp__source_has_event(src, id);
}

void usertp__session_take_news(struct usertp_session *s, struct usertp__source *src)
{
	struct pollfd p = { src->session, POLLIN, 0 };

	while (src->session >= 0 && !src->ended && poll(&p, 1, 0) == 1 && (p.revents & POLLIN) &&
	       usertp__ses_session_message(s, src))
		;
}

bool usertp__session_await_format(struct usertp_session *s, struct usertp__source *src,
				  unsigned int id, int wait_ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!usertp__source_has_event(src, id) && !inherited(s, src, id)) {
		struct usertp__source *parent = src->forked_from;
		struct pollfd p[2] = { { src->session >= 0 && !src->ended ? src->session : -1, POLLIN, 0 },
				       { parent && parent->session >= 0 ? parent->session : -1,
					 POLLIN, 0 } };
		long spent;

		if (p[0].fd < 0 && p[1].fd < 0)
			break; /* nobody left to tell it */
		clock_gettime(CLOCK_MONOTONIC, &t);
		spent = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (spent >= wait_ms || poll(p, 2, (int)(wait_ms - spent)) < 1)
			break;
		/*
		 * What a program said before it ended is read (its end, with nothing left to
		 * read, is left to usertp_session_process()); the parent's, by inherited().
		 */
		if (!((p[0].revents | p[1].revents) & POLLIN))
			break;
		if ((p[0].revents & POLLIN) && !usertp__ses_session_message(s, src))
			break;
	}
	return usertp__source_has_event(src, id);
}

