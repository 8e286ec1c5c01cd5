/* SPDX-License-Identifier: MIT */
/*
 * session.c - libusertp-consumer's sessions: their programs, their settings, what the
 * programs tell them, and the reading of the programs' buffers (session.h has the model,
 * docs/consumer-design.md the design, src/common/ctl-proto.h the protocol).
 *
 * How programs come:
 *   attach_pid	we connect to the program's endpoint and start a session there;
 *   run		the command runs with USERTP_SESSION naming our socket: libusertp joins us
 *		from its constructor, before main(), as do the programs it execs;
 *   attach_all	every program of this user: those running now, and those that start later,
 *		which join through the runtime directory's all.* links;
 *   fork()	children of traced programs announce themselves on our socket ("fork"), with
 *		buffers of their own.
 * As libraries with events load (linked or dlopen()ed), a program tells each session their
 * names and the formats of those it records, before they can fire.
 *
 * Settings go to every program as a "set" request on its session connection, answered once
 * the program applied it; a program that joins or forks later is given them when it comes.
 * A program that does not answer in time, or answers nonsense, is left out of the change and
 * named in the log; one whose connection closes has ended: what it committed is still in our
 * mapping and is read to the end.
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
#include <sys/eventfd.h>
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

/* --- errors and the log ------------------------------------------------------------------ */

int usertp__session_fail(struct usertp_session *s, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->error, sizeof(s->error), fmt, ap);
	va_end(ap);
	return err;
}

void usertp__session_log(struct usertp_session *s, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (!s->log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	s->log(line, s->log_arg);
}

const char *usertp_session_error(const struct usertp_session *s)
{
	return s ? s->error : "";
}

void usertp_session_set_log(struct usertp_session *s, void (*fn)(const char *line, void *arg),
			    void *arg)
{
	s->log = fn;
	s->log_arg = arg;
}

/* --- event specs -------------------------------------------------------------------------- */

bool usertp__session_selects(const struct usertp_session *s, const char *system, const char *name)
{
	bool on = false;

	for (unsigned int i = 0; i < s->nr_specs; i++) {
		bool negate = s->specs[i][0] == '!';

		if (usertp__spec_match(s->specs[i] + negate, system, name))
			on = !negate;
	}
	return on;
}

/* "sys:event" into its parts; false if it is not that. */
bool usertp__ses_split_event(const char *line, char *system, size_t size, const char **name)
{
	const char *colon = strchr(line, ':');

	if (!colon || (size_t)(colon - line) >= size)
		return false;
	memcpy(system, line, (size_t)(colon - line));
	system[colon - line] = 0;
	*name = colon + 1;
	return **name != 0;
}

/* Keep "sys:event" (@len bytes) among the names the programs told of. */
void usertp__ses_names_add(struct usertp_session *s, const char *line, size_t len)
{
	for (const char *p = s->names.text; p && p < s->names.text + s->names.len;
	     p += strcspn(p, "\n") + 1)
		if (strcspn(p, "\n") == len && !memcmp(p, line, len))
			return;
	if (s->names.len + len + 2 > s->names.cap) {
		size_t cap = s->names.cap ? 2 * s->names.cap : 4096;
		char *p;

		while (cap < s->names.len + len + 2)
			cap *= 2;
		p = realloc(s->names.text, cap);
		if (!p)
			return;
		s->names.text = p;
		s->names.cap = cap;
	}
	memcpy(s->names.text + s->names.len, line, len);
	s->names.len += len;
	s->names.text[s->names.len++] = '\n';
	s->names.text[s->names.len] = 0;
}

int usertp_session_spec_seen(const struct usertp_session *s, const char *spec, char *close,
			     size_t size)
{
	const char *names = s->names.text ? s->names.text : "";

	if (close && size)
		close[0] = 0;
	if (usertp__spec_check(spec, USERTP__SPEC_GLOB))
		return -EINVAL;
	if (usertp__spec_matches_any(spec, names))
		return 1;
	if (close && size)
		usertp__spec_close_matches(spec, names, close, size);
	return 0;
}

/* The specs as one events= value ("a,!b,c"), allocated. */
char *usertp__ses_specs_text(const struct usertp_session *s)
{
	size_t len = 1;
	char *text;

	for (unsigned int i = 0; i < s->nr_specs; i++)
		len += strlen(s->specs[i]) + 1;
	text = malloc(len);
	if (!text)
		return NULL;
	text[0] = 0;
	for (unsigned int i = 0; i < s->nr_specs; i++) {
		if (i)
			strcat(text, ",");
		strcat(text, s->specs[i]);
	}
	return text;
}

/* --- reading the buffers ------------------------------------------------------------------ */

struct page_arg {
	struct usertp_session *s;
	struct usertp__source *src;
	unsigned int cpu;
};

/* A page of the snapshot at the end (or a copy): to the file, or to the reader's queue. */
static int take_page(const struct usertp__rb_page_copy *page, uint64_t events, void *arg)
{
	struct page_arg *a = arg;

	if (a->s->dat)
		return usertp__writer_page(a->s, a->src, a->cpu, page->data, page->used,
					   page->lost_before, events);
	return usertp__reader_page(a->s, a->src, a->cpu, page);
}

/* File mode: a complete page goes to the spool from where it is, copied once. */
static int spool_page(const struct usertp__rb_page_ref *page, void *arg)
{
	struct page_arg *a = arg;

	return usertp__writer_page(a->s, a->src, a->cpu, page->page, page->used,
				   page->lost_before, page->events);
}

/* Take the complete pages the source's writers left since last time. */
static void source_consume(struct usertp_session *s, struct usertp__source *src)
{
	uint64_t n;

	if (!src->view || src->ended || s->overwrite || usertp__writer_error(s))
		return;
	for (unsigned int cpu = 0; cpu < src->view->nr_cpus; cpu++) {
		struct page_arg arg = { s, src, cpu };
		int ret;

		if (s->reader && !usertp__reader_room(src, cpu))
			continue; /* read later: the program's buffer holds them meanwhile */
		ret = s->dat ? usertp__rb_consume_pages(src->view, cpu, spool_page, &arg, &n)
			     : usertp__rb_consume(src->view, cpu, take_page, &arg, &n);
		if (ret == -EINVAL) {
			usertp__session_log(s, "%s: its buffer does not hold together; reading it stops",
					    src->name);
			src->ended = true;
			return;
		}
		/* On disk after each round: a process killed now leaves them recoverable. */
		if (n && s->dat)
			usertp__writer_flush(s, src, cpu);
	}
}

/* The rest: the page being written, or in overwrite mode everything still there. */
void usertp__ses_source_finish(struct usertp_session *s, struct usertp__source *src)
{
	struct usertp__rb_snapshot snap;

	if (!src->view || src->ended)
		return;
	source_consume(s, src);
	if (usertp__rb_snapshot(src->map, src->size, &snap) == 0) {
		for (unsigned int cpu = 0; cpu < snap.nr_cpus && cpu < src->view->nr_cpus; cpu++) {
			const struct usertp__rb_cpu_snapshot *c = &snap.cpus[cpu];

			for (unsigned int p = 0; p < c->nr_pages; p++) {
				struct usertp__rb_page_copy page = c->pages[p];
				struct page_arg arg = { s, src, cpu };

				/* Overwritten events were before the oldest page kept. */
				if (p == 0 && s->overwrite)
					page.lost_before += c->overrun;
				if ((page.used || page.lost_before) && !usertp__writer_error(s))
					take_page(&page, 0, &arg);
			}
			if (s->dat) {
				usertp__writer_flush(s, src, cpu);
				s->events += c->entries;
				s->read[cpu] += c->entries;
				src->stats[cpu].read += c->entries;
			}
			s->dropped[cpu] += c->dropped;
			src->stats[cpu].dropped = c->dropped;
			/* (Without overwrite, "overrun" are the pages we consumed.) */
			s->overrun[cpu] += s->overwrite ? c->overrun : 0;
			src->stats[cpu].overrun = s->overwrite ? c->overrun : 0;
		}
		usertp__rb_snapshot_free(&snap);
	}
	src->ended = true;
	/* Nothing more is asked of it: a connection left open would wake the loop for nothing. */
	if (src->query >= 0 && !src->comms_asked) {
		close(src->query);
		src->query = -1;
	}
}

void usertp__session_drain(struct usertp_session *s)
{
	for (unsigned int i = 0; i < s->nr_sources; i++) {
		struct usertp__source *src = s->sources[i];
		struct pollfd p = { src->session, POLLIN, 0 };

		/* What a program that has ended said last ("exit": its threads' names). */
		while (src->session >= 0 && poll(&p, 1, 0) == 1 &&
		       usertp__ses_session_message(s, src))
			;
		usertp__ses_source_refresh(s, src);
		if (src->session >= 0) {
			close(src->session);
			src->session = -1;
		}
		if (!src->ended)
			usertp__ses_source_finish(s, src);
	}
}

/* --- running ------------------------------------------------------------------------------ */

int usertp_session_fd(const struct usertp_session *s)
{
	return s->epoll_fd;
}

/* Every descriptor there is to watch, in the epoll set (closed ones leave it by themselves). */
static void watch_all(struct usertp_session *s)
{
	struct epoll_event ev = { .events = EPOLLIN };

	for (unsigned int i = 0; i < s->nr_sources; i++) {
		struct usertp__source *src = s->sources[i];

		if (src->session >= 0 && !src->ended) {
			ev.data.fd = src->session;
			epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, src->session, &ev);
		}
		if (src->comms_asked) {
			ev.data.fd = src->query;
			epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, src->query, &ev);
		}
		/* Past the watermark, the writers wake us rather than wait for a timeout. */
		if (src->view && !src->ended && !s->overwrite && !usertp__writer_error(s))
			usertp__rb_wait_request(src->view);
	}
}

int usertp_session_process(struct usertp_session *s, int timeout_ms)
{
	struct epoll_event events[16];
	static __thread long long last_comms;
	long long now;
	unsigned int i, n = 0;
	struct pollfd *pfd;

	watch_all(s);
	if (timeout_ms)
		epoll_wait(s->epoll_fd, events, 16, timeout_ms);
	pfd = calloc(s->nr_sources * 2 + 3, sizeof(*pfd));
	if (!pfd)
		return -ENOMEM;
	pfd[n++] = (struct pollfd){ s->listen_fd, POLLIN, 0 };
	pfd[n++] = (struct pollfd){ s->wake_fd, POLLIN, 0 };
	pfd[n++] = (struct pollfd){ s->every_fd, POLLIN, 0 };
	for (i = 0; i < s->nr_sources; i++) {
		struct usertp__source *src = s->sources[i];

		pfd[n++] = (struct pollfd){ src->comms_asked ? src->query : -1, POLLIN, 0 };
		pfd[n++] = (struct pollfd){ src->ended ? -1 : src->session, POLLIN, 0 };
	}
	poll(pfd, n, 0);
	if (pfd[1].revents) {
		uint64_t count;

		(void)!read(s->wake_fd, &count, sizeof(count));
	}
	/* (Sources that join now come after those polled.) */
	for (i = 0; i < (n - 3) / 2; i++) {
		struct usertp__source *src = s->sources[i];

		if (pfd[3 + 2 * i].revents && src->comms_asked && pfd[3 + 2 * i].fd == src->query)
			usertp__ses_source_comms_reply(s, src);
		/* (A join may have ended it meanwhile: a program that exec'd.) */
		if (src->ended || src->session < 0 || pfd[4 + 2 * i].fd != src->session)
			continue;
		if (pfd[4 + 2 * i].revents && !usertp__ses_session_message(s, src)) {
			/* Gone: what it committed is still in our mapping. */
			close(src->session);
			src->session = -1;
			usertp__ses_source_finish(s, src);
		}
	}
	if (pfd[0].revents)
		usertp__ses_accept_one(s, s->listen_fd);
	if (pfd[2].revents)
		usertp__ses_accept_one(s, s->every_fd);
	free(pfd);
	for (i = 0; i < s->nr_sources; i++)
		source_consume(s, s->sources[i]);
	/* The names of the threads, once a second. */
	now = usertp__mono_ms();
	if (now - last_comms >= 1000) {
		last_comms = now;
		for (i = 0; i < s->nr_sources; i++)
			usertp__ses_source_ask_comms(s->sources[i]);
	}
	watch_all(s);
	if (s->run_stopped) {
		s->run_stopped = false; /* (said once) */
		return usertp__session_fail(s, -ECANCELED, "the command was stopped before its main(): "
					    "an event it defines does not take its filter");
	}
	return 0;
}

/* --- the session -------------------------------------------------------------------------- */

int usertp_session_new(struct usertp_session **out, const struct usertp_session_options *opts)
{
	struct usertp_session_options none = { 0 };
	struct usertp_session *s;
	struct epoll_event ev = { .events = EPOLLIN };
	enum usertp__rb_clock clock = USERTP_RB_CLOCK_MONO;
	const char *why_not;
	char why[160];
	int ret;

	*out = NULL;
	if (!opts)
		opts = &none;
	if (opts->buffer_kb > USERTP_RB_MAX_KB)
		return -ERANGE;
	if (opts->clock && usertp__rb_parse_clock(opts->clock, &clock, &why_not))
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->listen_fd = s->every_fd = s->wake_fd = s->epoll_fd = -1;
	s->kb = opts->buffer_kb ? opts->buffer_kb : USERTP_RB_DEFAULT_KB;
	s->overwrite = opts->overwrite;
	s->tsc = clock == USERTP_RB_CLOCK_TSC;
	s->tracing = !opts->tracing_off;
	s->nr_cpus = (unsigned int)get_nprocs_conf();
	if (usertp__rb_size_check(s->nr_cpus, s->kb, why, sizeof(why))) {
		usertp_session_free(s);
		return -ENOMEM;
	}
	s->read = calloc(USERTP_MERGE_MAX_CPUS, sizeof(*s->read));
	s->dropped = calloc(USERTP_MERGE_MAX_CPUS, sizeof(*s->dropped));
	s->overrun = calloc(USERTP_MERGE_MAX_CPUS, sizeof(*s->overrun));
	if (!s->read || !s->dropped || !s->overrun) {
		usertp_session_free(s);
		return -ENOMEM;
	}
	s->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	ret = s->wake_fd < 0 || s->epoll_fd < 0 ? -errno : usertp__ses_listen_open(s);
	if (!ret) {
		ev.data.fd = s->listen_fd;
		epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, s->listen_fd, &ev);
		ev.data.fd = s->wake_fd;
		epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, s->wake_fd, &ev);
		ret = usertp__reader_new(s);
	}
	if (ret) {
		usertp_session_free(s);
		return ret;
	}
	*out = s;
	return 0;
}

void usertp_session_free(struct usertp_session *s)
{
	if (!s)
		return;
	for (unsigned int i = 0; i < s->nr_sources; i++) {
		struct usertp__source *src = s->sources[i];

		if (src->session >= 0)
			close(src->session);
		if (src->query >= 0)
			close(src->query);
		usertp__writer_source_free(src);
		usertp__reader_source_free(src);
		if (src->map)
			munmap(src->map, src->size);
		for (unsigned int e = 0; e < src->nr_events; e++) {
			free((char *)src->events[e].system);
			free((char *)src->events[e].format);
		}
		free(src->events);
		free(src->view);
		free(src->stats);
		free(src->comms);
		free(src);
	}
	free(s->sources);
	free(s->message);
	usertp__reader_free(s);
	usertp__writer_free(s);
	for (unsigned int i = 0; i < s->nr_specs; i++)
		free(s->specs[i]);
	free(s->specs);
	for (unsigned int i = 0; i < s->nr_filters; i++) {
		free(s->filters[i].events);
		free(s->filters[i].text);
	}
	free(s->filters);
	usertp__pid_list_free(&s->trace_pids);
	usertp__pid_list_free(&s->notrace_pids);
	free(s->names.text);
	free(s->read);
	free(s->dropped);
	free(s->overrun);
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	if (s->epoll_fd >= 0)
		close(s->epoll_fd);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->every_fd >= 0)
		close(s->every_fd);
	if (s->every_path[0])
		unlink(s->every_path);
	if (s->all_path[0])
		unlink(s->all_path);
	if (s->sock_path[0])
		unlink(s->sock_path);
	free(s);
}

/* --- programs and counts ------------------------------------------------------------------ */

unsigned int usertp_session_nr_programs(const struct usertp_session *s)
{
	return s->nr_sources;
}

int usertp_session_program(const struct usertp_session *s, unsigned int index,
			   struct usertp_program_info *info)
{
	const struct usertp__source *src;

	if (index >= s->nr_sources)
		return -ERANGE;
	src = s->sources[index];
	memset(info, 0, sizeof(*info));
	info->pid = src->pid;
	memcpy(info->comm, src->comm, sizeof(info->comm));
	info->running = !src->ended && src->session >= 0;
	info->forked_from = src->forked_from ? src->forked_from->pid : 0;
	info->nr_cpus = src->view ? src->view->nr_cpus : 0;
	return 0;
}

/* Events dropped by @cpu's buffer of @src so far, by its counter. */
static uint64_t live_dropped(const struct usertp__source *src, unsigned int cpu)
{
	const struct usertp__rb_cpu *c =
		(const void *)((const char *)src->map + src->view->cpu_offset[cpu]);

	return __atomic_load_n(&c->dropped, __ATOMIC_RELAXED);
}

int usertp_session_cpu_stats(const struct usertp_session *s, unsigned int index, unsigned int cpu,
			     struct usertp_cpu_stats *stats)
{
	const struct usertp__source *src;

	if (index >= s->nr_sources)
		return -ERANGE;
	src = s->sources[index];
	if (!src->view || cpu >= src->view->nr_cpus)
		return -ERANGE;
	*stats = src->stats[cpu];
	if (!src->ended)
		stats->dropped = live_dropped(src, cpu);
	return 0;
}

void usertp_session_status(const struct usertp_session *s, struct usertp_session_status *st)
{
	memset(st, 0, sizeof(*st));
	st->programs = s->nr_sources;
	st->untraced = s->untraced;
	st->refused = s->refused;
	st->events = s->events;
	st->bytes = usertp__writer_bytes(s);
	st->write_error = usertp__writer_error(s);
	for (unsigned int i = 0; i < s->nr_sources; i++) {
		const struct usertp__source *src = s->sources[i];

		st->running += !src->ended && src->session >= 0;
		for (unsigned int cpu = 0; src->view && cpu < src->view->nr_cpus; cpu++)
			st->dropped += src->ended ? src->stats[cpu].dropped : live_dropped(src, cpu);
	}
}
