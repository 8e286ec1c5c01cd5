/* SPDX-License-Identifier: MIT */
/*
 * session.c - libusertp-consumer's sessions, the top of them: making and ending one, running
 * it (usertp_session_process()), its counts and the end of its file.  Its parts are below it
 * (session.h lists them; docs/consumer-design.md has the design, src/common/ctl-proto.h the
 * protocol).
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
#include "sinks.h"
#include "filter.h"
#include "format-field.h"
#include "spec.h"

static void take_all_waiting(struct usertp_session *s);

void usertp__session_drain(struct usertp_session *s)
{
	take_all_waiting(s);
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
		if (src->view && !src->ended && !s->overwrite && !s->write_error)
			usertp__rb_wait_request(src->view);
	}
}

/*
 * Take the joins and forks waiting on @fd, USERTP__ACCEPTS_PER_LOOK at most.  Every one
 * that came before this look is taken in it: a forked child says so before its first event,
 * so records older than the look (the kernel's of that child among them) are read only once
 * its source is known (session-read.c).  Return: false when some are left for the next look.
 */
static bool accept_waiting(struct usertp_session *s, int fd)
{
	for (unsigned int i = 0; i < USERTP__ACCEPTS_PER_LOOK; i++) {
		struct pollfd pfd = { fd, POLLIN, 0 };

		if (poll(&pfd, 1, 0) != 1)
			return true;
		usertp__ses_accept_one(s, fd);
	}
	return false;
}

/*
 * At the end: every join and fork waiting is taken, not only one look's.  A program whose
 * children fork in a burst (a pre-forking server's workers) has more of them waiting than a
 * look takes, each said before its first event; before, those past the first look were left
 * there, what they fired recorded nowhere and counted nowhere (1116 of 2000 once).  As many
 * looks as the backlog can hold (SOMAXCONN) at most: whatever forks on meanwhile does not hold
 * the end up for ever.
 */
static void take_all_waiting(struct usertp_session *s)
{
	for (unsigned int i = 0; i < SOMAXCONN / USERTP__ACCEPTS_PER_LOOK + 1; i++) {
		bool done = accept_waiting(s, s->listen_fd);

		if (accept_waiting(s, s->every_fd) && done)
			break;
	}
}

/* How often a source read on after its connection closed is looked at (session-core.h). */
#define ORPHAN_LOOK_MS 10

int usertp_session_process(struct usertp_session *s, int timeout_ms)
{
	struct epoll_event events[16];
	static __thread long long last_comms;
	long long now;
	unsigned int i, n = 0;
	struct pollfd *pfd;

	/* The command usertp_session_run_only() holds starts now, with the settings of now. */
	usertp__ses_run_release(s, true);
	/* (Before anything is taken: what comes after is newer, session-read.c.) */
	s->looked_at = s->tsc ? usertp__rb_clock_tsc() : usertp__rb_clock_mono();
	usertp__clock_conv_look(&s->conv);
	watch_all(s);
	/* (A source read on after its connection closed has nothing to wake us: looked at often.) */
	for (i = 0; i < s->nr_sources && timeout_ms; i++)
		if (s->sources[i]->orphan && !s->sources[i]->ended &&
		    (timeout_ms < 0 || timeout_ms > ORPHAN_LOOK_MS))
			timeout_ms = ORPHAN_LOOK_MS;
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
		uint64_t word;

		/* (At most as many as the socket's queue holds: max_dgram_qlen.) */
		for (i = 0; i < 64 && recv(s->wake_fd, &word, sizeof(word), MSG_DONTWAIT) >= 0; i++)
			;
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
			if (!src->said_exit && usertp__proc_runs(src->pid))
				src->orphan = true; /* read on (session-core.h) */
			else
				usertp__ses_source_finish(s, src);
		}
	}
	if ((pfd[0].revents && !accept_waiting(s, s->listen_fd)) |
	    (pfd[2].revents && !accept_waiting(s, s->every_fd)))
		s->looked_at = 0; /* (not a whole look: see accept_waiting()) */
	free(pfd);
	for (i = 0; i < s->nr_sources; i++) {
		struct usertp__source *src = s->sources[i];

		usertp__ses_source_consume(s, src);
		/* (Its connection closed as its process was ending: ended now.) */
		if (src->orphan && !src->ended && !usertp__proc_runs(src->pid))
			usertp__ses_source_finish(s, src);
	}
	usertp__ses_kernel_read(s);
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
	struct usertp_session_options given = { .struct_size = sizeof(given) };
	struct usertp_session *s;
	struct epoll_event ev = { .events = EPOLLIN };
	struct usertp__clock_choice file_choice = { USERTP_RB_CLOCK_MONO, false }, live_buffers;
	enum usertp__live_clock live = USERTP_LIVE_MONO; /* (no clock, tsc2nsec: mono read live) */
	bool file_ok, live_ok;
	const char *why_not;
	char why[160];
	int ret, pair[2];

	*out = NULL;
	/* (What a caller built against a later version adds past ours is not read.) */
	if (opts && !USERTP__STRUCT_OK(opts, usertp_session_options, tracing_off))
		return -EINVAL;
	if (opts)
		memcpy(&given, opts, opts->struct_size < sizeof(given) ? opts->struct_size
								: sizeof(given));
	opts = &given;
	if (opts->buffer_kb > USERTP_RB_MAX_KB)
		return -ERANGE;
	/*
	 * Read live, the buffers count the TSC wherever it is invariant, whatever is printed,
	 * and each record is converted as it is read (s->conv: the kernel's clocks of
	 * tsc2nsec.h).  A file takes mono (read in each event, as asked), x86-tsc and tsc2nsec
	 * (the default where the TSC is invariant): its buffers are set when it is chosen
	 * (usertp_session_write_dat()).
	 */
	file_ok = !usertp__clock_parse(opts->clock, &file_choice, &why_not);
	live_ok = opts->clock && !usertp__live_clock_parse(opts->clock, usertp__tsc_invariant(),
							   &live, &why_not);
	if (!file_ok && !live_ok)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->listen_fd = s->every_fd = s->wake_fd = s->wake_give = s->epoll_fd = s->run_release = -1;
	s->kb = opts->buffer_kb ? opts->buffer_kb : USERTP_RB_DEFAULT_KB;
	s->overwrite = opts->overwrite;
	s->file_clock = file_ok; /* (else usertp_session_write_dat() refuses) */
	s->file_choice = file_choice;
	usertp__clock_parse(NULL, &live_buffers, &why_not);
	s->tsc = live_buffers.buffers == USERTP_RB_CLOCK_TSC;
	usertp__clock_conv_init(&s->conv, s->tsc, live);
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
	if (!socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair)) {
		s->wake_fd = pair[0];
		s->wake_give = pair[1];
	}
	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	ret = s->wake_fd < 0 || s->epoll_fd < 0 ? -errno : usertp__ses_listen_open(s);
	if (!ret) {
		ev.data.fd = s->listen_fd;
		epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, s->listen_fd, &ev);
		ev.data.fd = s->wake_fd;
		epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, s->wake_fd, &ev);
		s->await_format = usertp__session_await_format;
		s->take_news = usertp__session_take_news;
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
		if (s->sink)
			s->sink->source_free(src);
		if (src->map)
			munmap(src->map, src->size);
		usertp__source_free_formats(src);
		free(src->view);
		free(src->stats);
		free(src->comms);
		free(src->unnamed);
		free(src);
	}
	free(s->sources);
	free(s->message);
	usertp__ses_run_release(s, false);
	usertp__ses_kernel_free(s);
	if (s->sink)
		s->sink->free(s);
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
	usertp__session_printk_free(s);
	free(s->read);
	free(s->dropped);
	free(s->overrun);
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	if (s->wake_give >= 0)
		close(s->wake_give);
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

	struct usertp_program_info i = { .struct_size = sizeof(i) };

	if (!USERTP__STRUCT_OK(info, usertp_program_info, nr_cpus))
		return -EINVAL;
	if (index >= s->nr_sources)
		return -ERANGE;
	src = s->sources[index];
	i.pid = src->pid;
	memcpy(i.comm, src->comm, sizeof(i.comm));
	i.running = usertp__source_running(src);
	i.forked_from = src->forked_from ? src->forked_from->pid : 0;
	i.nr_cpus = src->view ? src->view->nr_cpus : 0;
	usertp__struct_give(info, &i, sizeof(i));
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
	struct usertp_cpu_stats st;

	if (!USERTP__STRUCT_OK(stats, usertp_cpu_stats, overrun))
		return -EINVAL;
	if (index >= s->nr_sources)
		return -ERANGE;
	src = s->sources[index];
	if (!src->view || cpu >= src->view->nr_cpus)
		return -ERANGE;
	st = src->stats[cpu];
	st.struct_size = sizeof(st);
	if (!src->ended)
		st.dropped = live_dropped(src, cpu);
	usertp__struct_give(stats, &st, sizeof(st));
	return 0;
}

int usertp_session_status(const struct usertp_session *s, struct usertp_session_status *out)
{
	struct usertp_session_status st = { .struct_size = sizeof(st) };

	if (!USERTP__STRUCT_OK(out, usertp_session_status, write_error))
		return -EINVAL;
	st.programs = s->nr_sources;
	st.untraced = s->untraced;
	st.refused = s->refused;
	st.events = s->events;
	st.bytes = s->bytes;
	st.write_error = s->write_error;
	for (unsigned int i = 0; i < s->nr_sources; i++) {
		const struct usertp__source *src = s->sources[i];

		st.running += usertp__source_running(src);
		for (unsigned int cpu = 0; src->view && cpu < src->view->nr_cpus; cpu++)
			st.dropped += src->ended ? src->stats[cpu].dropped : live_dropped(src, cpu);
	}
	st.dropped += usertp__ses_kernel_dropped(s);
	usertp__struct_give(out, &st, sizeof(st));
	return 0;
}

/* --- the file's end ------------------------------------------------------------------------ */

int usertp_session_finish(struct usertp_session *s, struct usertp_dat_summary *sum)
{
	if (!s->dat)
		return usertp__session_fail(s, -EINVAL, "no file: usertp_session_write_dat() first");
	if (sum && !USERTP__STRUCT_OK(sum, usertp_dat_summary, output))
		return usertp__session_fail(s, -EINVAL, "a struct usertp_dat_summary without its "
					    "size (USERTP_STRUCT_INIT)");
	usertp__session_drain(s);
	if (usertp__ses_kernel_stop(s))
		return -ENOMEM;
	return usertp__writer_finish(s, sum);
}
