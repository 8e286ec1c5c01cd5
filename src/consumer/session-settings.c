/* SPDX-License-Identifier: MIT */
/*
 * session-settings.c - a session's settings (session.h), given to every program at once with one
 * deadline, and put back where a program refused them: event specs, tracing on and off,
 * filters, the pid filter.
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

/* --- settings ----------------------------------------------------------------------------- */

/*
 * Send @req on the session connections of @srcs (@n of them) at once, and take their messages
 * until each has replied: a program of ours is waited for USERTP__CALL_TIMEOUT_MS from the
 * start, another user's USERTP__FOREIGN_ANSWER_MS, and one whose earlier reply is still out
 * (it did not answer in time) not at all, so that programs that do not answer cost that once
 * per operation, however many, and then nothing until they answer again (their late replies
 * are taken as they come).  results[i]: 0, -EREMOTEIO (an error reply; the first is in
 * s->error), -ETIMEDOUT, or another negative errno (the connection is over: the caller ends
 * it); bodies[i] (@bodies may be NULL): an "ok" reply's body, to free().  Return: 0 or -ENOMEM.
 */
static int sources_call(struct usertp_session *s, struct usertp__source **srcs, unsigned int n,
			const struct usertp__ctl_msg *req, int *results, char **bodies)
{
	char *message = usertp__ses_message_buffer(s), *text = NULL;
	struct pollfd *pfd = calloc(n ? n : 1, sizeof(*pfd));
	long long start = usertp__mono_ms();
	long len = usertp__ctl_encode(req, &text);
	unsigned int waiting = 0;
	bool refused = false;

	if (!message || !pfd || len < 0) {
		free(pfd);
		free(text);
		return len < 0 ? (int)len : -ENOMEM;
	}
	for (unsigned int i = 0; i < n; i++) {
		struct usertp__source *src = srcs[i];

		pfd[i] = (struct pollfd){ .fd = -1, .events = POLLIN };
		if (bodies)
			bodies[i] = NULL;
		results[i] = usertp__ctl_send(src->session, text, (size_t)len, -1);
		if (results[i])
			continue;
		if (src->unanswered) {
			src->unanswered++;
			results[i] = -ETIMEDOUT;
			continue;
		}
		results[i] = -ETIMEDOUT;
		pfd[i].fd = src->session;
		waiting++;
	}
	free(text);
	while (waiting) {
		long long now = usertp__mono_ms(), next = -1;

		for (unsigned int i = 0; i < n; i++) {
			long long deadline = start + (srcs[i]->foreign ? USERTP__FOREIGN_ANSWER_MS
								       : USERTP__CALL_TIMEOUT_MS);

			if (pfd[i].fd < 0)
				continue;
			if (deadline <= now) {
				srcs[i]->unanswered++; /* its reply, when it comes, is left out */
				pfd[i].fd = -1;
				waiting--;
			} else if (next < 0 || deadline < next) {
				next = deadline;
			}
		}
		if (!waiting || poll(pfd, n, (int)(next - now)) <= 0)
			continue;
		for (unsigned int i = 0; i < n; i++) {
			struct usertp__source *src = srcs[i];
			struct usertp__ctl_msg m;
			const char *why;
			long got;

			if (pfd[i].fd < 0 || !pfd[i].revents)
				continue;
			/* (One that sends part of a message holds us until the deadline, no longer.) */
			got = usertp__ctl_recv(src->session, message, USERTP_CTL_MAX_MSG + 1, NULL,
					       (int)(next - usertp__mono_ms() > 0 ? next - usertp__mono_ms()
										: 0));
			if (got <= 0) {
				results[i] = got ? (int)got : -ECONNRESET;
				pfd[i].fd = -1;
				waiting--;
				continue;
			}
			if (usertp__ctl_decode(message, &m, &why))
				continue; /* nonsense: left out */
			if (m.type != USERTP_CTL_MSG_OK && m.type != USERTP_CTL_MSG_ERROR) {
				usertp__ses_session_news(s, src, &m);
				continue;
			}
			if (src->unanswered) {
				src->unanswered--; /* the reply to an earlier request */
				continue;
			}
			pfd[i].fd = -1;
			waiting--;
			if (m.type == USERTP_CTL_MSG_OK) {
				results[i] = bodies && !(bodies[i] = strdup(m.body)) ? -ENOMEM : 0;
				continue;
			}
			results[i] = -EREMOTEIO;
			if (!refused) {
				size_t word = strcspn(m.arg, " ");

				refused = true;
				s->remote_err = usertp__ctl_errno_of(m.arg, word);
				usertp__session_fail(s, -EREMOTEIO, "%s: %s%s%s", src->name,
						     m.arg[word] ? m.arg + word + 1 : m.arg,
						     *m.body ? "\n" : "", m.body);
			}
		}
	}
	free(pfd);
	return 0;
}

/* sources_call() of one.  Return: its result. */
static int source_call_reply(struct usertp_session *s, struct usertp__source *src,
			     const struct usertp__ctl_msg *req, char **body)
{
	int result, ret = sources_call(s, &src, 1, req, &result, body);

	return ret ? ret : result;
}

/* The sources of @s still in touch, into *@out (to free()).  Return: how many, or -ENOMEM. */
static int live_sources(const struct usertp_session *s, struct usertp__source ***out)
{
	unsigned int n = 0;

	*out = calloc(s->nr_sources + 1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (unsigned int i = 0; i < s->nr_sources; i++)
		if (!s->sources[i]->ended && s->sources[i]->session >= 0)
			(*out)[n++] = s->sources[i];
	return (int)n;
}

int usertp__ses_source_call(struct usertp_session *s, struct usertp__source *src,
			    const struct usertp__ctl_msg *req)
{
	return source_call_reply(s, src, req, NULL);
}

/* Add the pids of the line "@key P,P.." of @text (a "listed" reply) to @list. */
static int listed_add(struct usertp__pid_list *list, const char *text, const char *key)
{
	size_t klen = strlen(key);

	for (const char *p = text; *p; p += strcspn(p, "\n"), p += *p == '\n') {
		char *line;
		int ret;

		if (strncmp(p, key, klen) || p[klen] != ' ')
			continue;
		line = strndup(p + klen + 1, strcspn(p + klen + 1, "\n"));
		ret = line ? usertp__pid_list_parse(list, line, ",") : -ENOMEM;
		free(line);
		return ret == -ENOMEM ? ret : 0; /* (a program's nonsense: nothing of it) */
	}
	return 0;
}

/*
 * Call every source still in touch with @req at once (sources_call()): the live ones into
 * *@srcs (to free(), as *@results and *@bodies, which may be NULL).  One that is gone is
 * ended here.  Return: how many, or -ENOMEM.
 */
static int call_live(struct usertp_session *s, const struct usertp__ctl_msg *req,
		     struct usertp__source ***srcs, int **results, char ***bodies)
{
	int n = live_sources(s, srcs);

	*results = n >= 0 ? calloc((size_t)n + 1, sizeof(**results)) : NULL;
	if (bodies)
		*bodies = n >= 0 ? calloc((size_t)n + 1, sizeof(**bodies)) : NULL;
	if (n < 0 || !*results || (bodies && !*bodies) ||
	    sources_call(s, *srcs, (unsigned int)n, req, *results, bodies ? *bodies : NULL)) {
		free(*srcs);
		free(*results);
		if (bodies)
			free(*bodies);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		int r = (*results)[i];

		if (r && r != -EREMOTEIO && r != -ETIMEDOUT && r != -ENOMEM) {
			/* Gone: what it committed is still in our mapping. */
			close((*srcs)[i]->session);
			(*srcs)[i]->session = -1;
			usertp__ses_source_finish(s, (*srcs)[i]);
		}
	}
	return n;
}

int usertp__session_listed(struct usertp_session *s, struct usertp__pid_list *trace,
			   struct usertp__pid_list *notrace)
{
	struct usertp__source **srcs;
	int *results, ret = 0, n;
	char **bodies;

	n = call_live(s, &(struct usertp__ctl_msg){ .type = USERTP_CTL_MSG_LISTED }, &srcs,
		      &results, &bodies);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		/* (One that does not say: as if it had added none.) */
		if (!ret && !results[i])
			ret = listed_add(trace, bodies[i], "pids");
		if (!ret && !results[i])
			ret = listed_add(notrace, bodies[i], "notrace_pids");
		free(bodies[i]);
	}
	free(srcs);
	free(results);
	free(bodies);
	return ret;
}

/* Give every running program the settings; false if one refused them (s->error says). */
static int settings_apply(struct usertp_session *s)
{
	struct usertp__source **srcs;
	struct usertp__ctl_msg req;
	int refused = 0, *results, n;
	char *events;

	if (usertp__ses_settings_msg(s, USERTP_CTL_MSG_SET, &req, &events, NULL))
		return -ENOMEM;
	n = call_live(s, &req, &srcs, &results, NULL);
	free(events);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		if (results[i] == -EREMOTEIO)
			refused = -EREMOTEIO;
		else if (results[i] == -ETIMEDOUT)
			/* It records on as before (its reply, if it comes, is left out). */
			usertp__session_log(s, "%s: did not take the new settings in time",
					    srcs[i]->name);
	}
	free(srcs);
	free(results);
	return refused;
}

/* Does one of the running programs have an event @spec selects?  True too when none runs. */
static bool spec_possible(const struct usertp_session *s, const char *spec)
{
	unsigned int running = 0;

	for (unsigned int i = 0; i < s->nr_sources; i++)
		running += !s->sources[i]->ended;
	return !running || usertp__spec_matches_any(spec, s->names.text ? s->names.text : "");
}

/*
 * Add the specs of @list (comma-separated), each negated when @negate, to the session's list
 * (not applied).  Return: 0, or a negative errno with the list as it was.
 */
static int specs_add(struct usertp_session *s, const char *list, bool negate, bool replace)
{
	unsigned int old = s->nr_specs, added = 0, nr_kernel = 0, bad = 0;
	struct usertp__spec_list given;
	char **kernel = NULL;
	int ret;

	if (!list)
		return usertp__session_fail(s, -EINVAL, "no event spec");
	ret = usertp__spec_list_parse(list, USERTP__SPEC_GLOB, &given, &bad);
	if (ret == -EINVAL) {
		unsigned int n = 0;
		const char *tok = list, *end;

		/* (Named as given: the bad-th of the list.) */
		for (;; n++) {
			tok += strspn(tok, ", \t\n");
			end = tok + strcspn(tok, ", \t\n");
			if (n == bad || !*end)
				break;
			tok = end;
		}
		return usertp__session_fail(s, -EINVAL,
					    "%.*s: not an event spec (sys:event, sys:*, *:event, "
					    "event, globs such as sys:io_*, all)", (int)(end - tok), tok);
	}
	if (ret)
		return ret;
	for (unsigned int i = 0; i < given.nr && !ret; i++) {
		const char *tok = given.specs[i];
		bool off = negate != (tok[0] == '!');
		const char *spec = tok + (tok[0] == '!');
		char **more;

		if (!strcmp(spec, "all"))
			spec = "*:*";
		/* The kernel's (its system is one of the kernel's): for the session's instance. */
		if (!s->specs_unchecked && usertp__kernel_spec(spec)) {
			char **more_kernel = realloc(kernel, (nr_kernel + 1) * sizeof(*kernel));

			if (!more_kernel) {
				ret = -ENOMEM;
				break;
			}
			kernel = more_kernel;
			if (asprintf(&kernel[nr_kernel], "%s%s", off ? "!" : "", spec) < 0) {
				ret = -ENOMEM;
				break;
			}
			nr_kernel++;
			added++;
			continue;
		}
		if (!s->specs_unchecked && !spec_possible(s, spec)) {
			ret = usertp__session_fail(s, -ENOENT, "no event %s in the programs of the session",
						   spec);
			break;
		}
		more = realloc(s->specs, (s->nr_specs + 1) * sizeof(*more));
		if (!more) {
			ret = -ENOMEM;
			break;
		}
		s->specs = more;
		if (asprintf(&s->specs[s->nr_specs], "%s%s", off ? "!" : "", spec) < 0) {
			ret = -ENOMEM;
			break;
		}
		s->nr_specs++;
		added++;
	}
	usertp__spec_list_free(&given);
	if (!ret && !added)
		ret = usertp__session_fail(s, -EINVAL, "no event spec");
	if (!ret && (nr_kernel || replace))
		ret = usertp__ses_kernel_specs(s, (const char *const *)kernel, nr_kernel, replace);
	while (nr_kernel)
		free(kernel[--nr_kernel]);
	free(kernel);
	if (ret)
		while (s->nr_specs > old)
			free(s->specs[--s->nr_specs]);
	return ret;
}

/* Add the specs of @list, negated when @negate, and apply them. */
static int specs_change(struct usertp_session *s, const char *list, bool negate)
{
	unsigned int old = s->nr_specs;
	int ret = specs_add(s, list, negate, false);

	if (ret)
		return ret;
	ret = settings_apply(s);
	if (ret) {
		/* A program refused them: back to what they were, everywhere. */
		while (s->nr_specs > old)
			free(s->specs[--s->nr_specs]);
		settings_apply(s);
	}
	return ret;
}

int usertp__session_set_clock(struct usertp_session *s, const char *name)
{
	enum usertp__live_clock c;
	const char *why;

	if (usertp__live_clock_parse(name, s->tsc, &c, &why))
		return usertp__session_fail(s, -EINVAL, "clock %s: %s", name, why);
	if (c != s->conv.to)
		usertp__clock_conv_init(&s->conv, s->tsc, c);
	return 0;
}

bool usertp__session_counts_tsc(const struct usertp_session *s)
{
	return s->tsc;
}

void usertp__session_mount_mode(struct usertp_session *s,
				void (*on_comm)(pid_t tid, const char *comm, void *arg), void *arg)
{
	s->specs_unchecked = true;
	s->on_comm = on_comm;
	s->on_comm_arg = arg;
}

int usertp_session_set_specs(struct usertp_session *s, const char *specs)
{
	char **old = s->specs;
	unsigned int nr_old = s->nr_specs;
	int ret = 0;

	s->specs = NULL;
	s->nr_specs = 0;
	if (specs && specs[strspn(specs, ", \t\n")])
		ret = specs_add(s, specs, false, true);
	else
		ret = usertp__ses_kernel_specs(s, NULL, 0, true);
	if (!ret)
		ret = settings_apply(s);
	if (!ret) {
		while (nr_old)
			free(old[--nr_old]);
		free(old);
		return 0;
	}
	/* Refused: the list before, everywhere. */
	while (s->nr_specs)
		free(s->specs[--s->nr_specs]);
	free(s->specs);
	s->specs = old;
	s->nr_specs = nr_old;
	settings_apply(s);
	return ret;
}

int usertp_session_enable(struct usertp_session *s, const char *specs)
{
	return specs_change(s, specs, false);
}

int usertp_session_disable(struct usertp_session *s, const char *specs)
{
	return specs_change(s, specs, true);
}

int usertp_session_set_tracing(struct usertp_session *s, bool on)
{
	bool was = s->tracing;
	int ret;

	s->tracing = on;
	ret = settings_apply(s);
	if (ret) {
		s->tracing = was;
		settings_apply(s);
		return ret;
	}
	return usertp__ses_kernel_settings(s);
}

/*
 * Keep @text as the filter of @events (@old: the one the session had for them, or NULL), for
 * the programs that come later (their start carries it) and the kernel's instance.
 */
static int filter_keep(struct usertp_session *s, struct usertp__session_filter *old,
		       const char *events, const char *text, bool kernel)
{
	if (!old) {
		struct usertp__session_filter *more =
			realloc(s->filters, (s->nr_filters + 1) * sizeof(*more));

		if (!more)
			return -ENOMEM;
		s->filters = more;
		old = &s->filters[s->nr_filters++];
		*old = (struct usertp__session_filter){ strdup(events), NULL, kernel };
	}
	free(old->text);
	old->text = strdup(text);
	return old->events && old->text ? 0 : -ENOMEM;
}

/* The filter the session has for exactly @events, or NULL. */
static struct usertp__session_filter *filter_of(struct usertp_session *s, const char *events)
{
	for (unsigned int i = 0; i < s->nr_filters; i++)
		if (!strcmp(s->filters[i].events, events))
			return &s->filters[i];
	return NULL;
}

int usertp_session_set_filter(struct usertp_session *s, const char *events, const char *filter,
			      char *err, size_t errlen)
{
	struct usertp__session_filter *old;
	const char *text = filter ? filter : "0";
	struct usertp__ctl_msg m = { .type = USERTP_CTL_MSG_FILTER, .body = text };
	struct usertp__source **srcs;
	unsigned int took = 0;
	int ret = 0, *results, n;

	if (err && errlen)
		err[0] = 0;
	if (!events || usertp__spec_check(events, USERTP__SPEC_GLOB))
		return usertp__session_fail(s, -EINVAL, "%s: not an event spec", events ? events : "");
	if (strlen(text) > USERTP__FILTER_MAX)
		return usertp__session_fail(s, -EINVAL, "the filter is longer than %u bytes",
					    USERTP__FILTER_MAX);
	/* The kernel's: to its instance, and kept for the instance made later. */
	if (!s->specs_unchecked && usertp__kernel_spec(events)) {
		ret = usertp__ses_kernel_filter(s, events, text, err, errlen);
		return ret ? ret : filter_keep(s, filter_of(s, events), events, text, true);
	}
	/* As usertp_session_enable(): a spec that selects no event of the programs is refused. */
	if (strcmp(text, "0") && !s->specs_unchecked && !spec_possible(s, events))
		return usertp__session_fail(s, -ENOENT,
					    "no event %s in the programs of the session", events);
	old = filter_of(s, events);
	usertp__ctl_set_text(&m, USERTP_CTL_KEY_EVENTS, events);
	n = call_live(s, &m, &srcs, &results, NULL);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		if (results[i] == -EREMOTEIO && !ret)
			ret = s->remote_err ? s->remote_err : -EINVAL;
		else if (results[i] == -ETIMEDOUT)
			usertp__session_log(s, "%s: did not take the filter in time", srcs[i]->name);
		else if (!results[i])
			srcs[took++] = srcs[i];
	}
	if (ret) {
		/* Refused: the programs that took it get the one before back. */
		if (err && errlen) {
			const char *nl = strchr(s->error, '\n');

			snprintf(err, errlen, "%s", nl ? nl + 1 : s->error);
		}
		m.body = old ? old->text : "0";
		if (took)
			sources_call(s, srcs, took, &m, results, NULL);
	}
	free(srcs);
	free(results);
	if (ret)
		return ret;
	return filter_keep(s, old, events, text, false);
}

int usertp_session_set_pid_filter(struct usertp_session *s, const pid_t *pids, size_t nr_pids,
				  const pid_t *notrace, size_t nr_notrace, bool event_fork)
{
	struct usertp__pid_list trace = { NULL, 0 }, no = { NULL, 0 };
	struct usertp__ctl_msg m = { .type = USERTP_CTL_MSG_PIDS };
	char *texts[2] = { NULL, NULL };
	int ret = 0;

	ret = usertp__pid_list_from(&trace, pids, nr_pids);
	if (!ret)
		ret = usertp__pid_list_from(&no, notrace, nr_notrace);
	if (ret) {
		usertp__pid_list_free(&trace);
		usertp__pid_list_free(&no);
		return ret == -EINVAL ? usertp__session_fail(s, ret, "a pid list with a pid below 0 or "
							       "above %d", USERTP__PID_LIST_MAX_PID)
				      : ret;
	}
	usertp__pid_list_free(&s->trace_pids);
	usertp__pid_list_free(&s->notrace_pids);
	s->trace_pids = trace;
	s->notrace_pids = no;
	s->event_fork = event_fork;
	/* Live: to every program now (the programs that come later have it in their start). */
	if (usertp__ses_pid_filter_msg(s, &m, texts))
		ret = -ENOMEM;
	if (!ret) {
		struct usertp__source **srcs;
		int *results, n = call_live(s, &m, &srcs, &results, NULL);

		for (int i = 0; i < n; i++) {
			if (results[i] == -ETIMEDOUT)
				usertp__session_log(s, "%s: did not take the pid filter in time",
						    srcs[i]->name);
			else if (results[i] == -EREMOTEIO)
				usertp__session_log(s, "%s: did not take the pid filter: %s",
						    srcs[i]->name, s->error);
		}
		ret = n < 0 ? n : 0;
		if (n >= 0) {
			free(srcs);
			free(results);
		}
	}
	free(texts[0]);
	free(texts[1]);
	return ret ? ret : usertp__ses_kernel_settings(s);
}

unsigned int usertp_session_specs(const struct usertp_session *s, const char *const **specs)
{
	*specs = (const char *const *)s->specs;
	return s->nr_specs;
}

