/* SPDX-License-Identifier: MIT */
/*
 * session-source.c - one program of a session (session.h): starting its session, mapping its
 * region and checking it, learning its events, formats and thread names, taking its pages to
 * the session's sink, and its end.
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

#include <event-parse.h>

#include "proc.h"
#include "client.h"
#include "ctl-proto.h"
#include "number.h"
#include "session.h"
#include "filter.h"
#include "format-field.h"
#include "spec.h"

/* --- sources ------------------------------------------------------------------------------ */

/* Map the region @fd of @size bytes and make @src its source.  Return: 0 or a negative errno. */
int usertp__ses_source_map(struct usertp_session *s, struct usertp__source *src, int fd,
			   size_t size)
{
	int ret;

	struct stat st;
	int seals;

	if (!size || size > USERTP__MAX_REGION)
		return -EINVAL;
	/*
	 * Memory another process controls may shrink under a mapping (a read then dies of
	 * SIGBUS): only a region sealed against shrinking, and as large as said, is mapped.
	 */
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK) || fstat(fd, &st) || (uint64_t)st.st_size < size)
		return -EPERM;
	src->map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (src->map == MAP_FAILED) {
		src->map = NULL;
		return -errno;
	}
	src->size = size;
	src->region_ino = st.st_ino;
	src->view = malloc(sizeof(*src->view));
	if (!src->view)
		return -ENOMEM;
	ret = usertp__rb_view_init(src->view, src->map, size);
	if (ret)
		return ret;
	if (src->view->nr_cpus > USERTP_MERGE_MAX_CPUS)
		return -EINVAL;
	src->nr_cpus = src->view->nr_cpus;
	src->stats = calloc(src->view->nr_cpus, sizeof(*src->stats));
	if (!src->stats)
		return -ENOMEM;
	if (src->view->nr_cpus > s->nr_cpus)
		s->nr_cpus = src->view->nr_cpus;
	return s->sink ? s->sink->source_new(s, src) : -EINVAL;
}

/* Is @pid another user's process, and we root (who records it)? */
struct usertp__source *usertp__ses_source_new(struct usertp_session *s, pid_t pid, const char *comm)
{
	struct usertp__source *src = calloc(1, sizeof(*src)), **list;

	if (!src)
		return NULL;
	list = realloc(s->sources, (s->nr_sources + 1) * sizeof(*list));
	if (!list) {
		free(src);
		return NULL;
	}
	s->sources = list;
	src->index = s->nr_sources;
	src->pid = pid;
	src->session = src->query = -1;
	src->uid_known = !usertp__proc_owner(pid, &src->uid);
	src->foreign = geteuid() == 0 && src->uid_known && src->uid != 0; /* (root's, of all) */
	snprintf(src->comm, sizeof(src->comm), "%s", comm ? comm : "");
	snprintf(src->name, sizeof(src->name), "%s[%d]", src->comm[0] ? src->comm : "?", (int)pid);
	s->sources[s->nr_sources++] = src;
	return src;
}

struct usertp__source *usertp__ses_source_of_pid(const struct usertp_session *s, pid_t pid)
{
	for (unsigned int i = 0; i < s->nr_sources; i++)
		if (s->sources[i]->pid == pid && !s->sources[i]->ended)
			return s->sources[i];
	return NULL;
}

/*
 * The source a child forked from, by the region of buffers the child says its parent had
 * (@region; 0: an older libusertp's child, which does not say): the one whose image it runs,
 * even if that one's end was read before the child's fork (a parent that exits at once, as a
 * daemon's does; or exec'd, and a newer source has its pid).  The child's word is taken where
 * @ppid, its parent now (checked for another user's child), is that source's process, or
 * that process has ended (the child was reparented).  (A false word could give a child only
 * formats already checked, and a parent that is gone.)
 */
struct usertp__source *usertp__ses_parent_of(const struct usertp_session *s, pid_t ppid,
					     uint64_t region)
{
	if (!region)
		return usertp__ses_source_of_pid(s, ppid);
	for (unsigned int i = s->nr_sources; i-- > 0;) {
		struct usertp__source *src = s->sources[i];

		if (src->map && src->region_ino == region &&
		    (src->pid == ppid || src->ended || !usertp__proc_runs(src->pid)))
			return src;
	}
	return NULL;
}

/* Connect to the source's endpoint if we are not yet; false if it cannot be reached. */
bool usertp__ses_source_query(struct usertp__source *src)
{
	struct usertp__program prog;

	if (src->query >= 0)
		return true;
	if (usertp__client_find_now(src->pid, &prog))
		return false;
	src->query = usertp__client_connect(&prog);
	return src->query >= 0;
}

/* Take the format of "sys:event" (id @id) through @sock, if the session records it. */
static void source_add_format(struct usertp_session *s, struct usertp__source *src, int sock,
			      unsigned int id, const char *line)
{
	char system[256], *reply = NULL;
	const char *name;

	usertp__ses_names_add(s, line, strlen(line));
	if (usertp__source_has_event(src, id) || usertp__source_refused(src, id) ||
	    !usertp__ses_split_event(line, system, sizeof(system), &name) ||
	    !usertp__session_selects(s, system, name))
		return;
	/*
	 * Asked on the query connection where there is one: news may come on the session's
	 * between a request and its reply (a program that joins has no endpoint yet, and sends
	 * no news until it runs).
	 */
	if (sock == src->session && usertp__ses_source_query(src))
		sock = src->query;
	if (!usertp__client_call(sock, USERTP_CTL_MSG_FORMAT, line, &reply, NULL,
				 USERTP__CALL_TIMEOUT_MS))
		usertp__source_keep_format(s, src, id, system, usertp__client_body(reply));
	free(reply);
}

/*
 * usertp_printk()'s formats and call sites, where the session records its events (ftrace's):
 * all of them now (later ones come as news).
 */
static void source_add_printk(struct usertp_session *s, struct usertp__source *src, int sock)
{
	char *reply = NULL;
	unsigned int i;

	for (i = 0; i < src->nr_events && strcmp(src->events[i].system, "ftrace"); i++)
		;
	if (i == src->nr_events)
		return;
	if (sock == src->session && usertp__ses_source_query(src))
		sock = src->query;
	if (!usertp__client_call(sock, USERTP_CTL_MSG_PRINTK, NULL, &reply, NULL,
				 USERTP__CALL_TIMEOUT_MS))
		usertp__session_keep_printk(s, src, usertp__client_body(reply));
	free(reply);
}

/* Learn the formats of the events @listing ("id sys:event" lines) names, through @sock. */
static void source_add_formats(struct usertp_session *s, struct usertp__source *src, int sock,
			       const char *listing)
{
	for (const char *p = listing; *p; p += strcspn(p, "\n"), p += *p == '\n') {
		char line[512];
		unsigned int id;
		int used = 0;

		if (sscanf(p, "%u %n", &id, &used) != 1 || !used)
			continue;
		snprintf(line, sizeof(line), "%.*s", (int)strcspn(p + used, "\n"), p + used);
		source_add_format(s, src, sock, id, line);
	}
	source_add_printk(s, src, sock);
}

/*
 * Ask through @sock for the events (their ids), the formats of new ones the session records,
 * and the names of the threads.
 */
void usertp__ses_source_learn(struct usertp_session *s, struct usertp__source *src, int sock,
			 int timeout_ms)
{
	char *reply = NULL;

	if (!usertp__client_call(sock, USERTP_CTL_MSG_IDS, NULL, &reply, NULL, timeout_ms))
		source_add_formats(s, src, sock, usertp__client_body(reply));
	free(reply);
	reply = NULL;
	if (!usertp__client_call(sock, USERTP_CTL_MSG_COMMS, NULL, &reply, NULL, timeout_ms) &&
	    *usertp__client_body(reply))
		usertp__source_keep_comms(s, src, usertp__client_body(reply));
	free(reply);
}

/* Everything it can tell still, at the end (while it runs, events come unasked). */
void usertp__ses_source_refresh(struct usertp_session *s, struct usertp__source *src)
{
	if (src->comms_asked) {
		/* A reply of the loop's on the way: not to be taken for ours. */
		close(src->query);
		src->query = -1;
		src->comms_asked = false;
	}
	if (src->ended || !usertp__ses_source_query(src))
		return;
	usertp__ses_source_learn(s, src, src->query, USERTP__CALL_TIMEOUT_MS);
}

/*
 * The names of its threads, while it runs (a program killed cannot say them at its exit):
 * asked without waiting, the reply read by usertp_session_process(), so that a program slow
 * to answer never holds up the reading of the buffers.
 */
void usertp__ses_source_ask_comms(struct usertp__source *src)
{
	if (src->ended || src->comms_asked || !usertp__ses_source_query(src))
		return;
	/* (since=: those it noted since the last reply; a program older than since= says none) */
	src->comms_asked = !usertp__ctl_send_msg(
		src->query,
		&(struct usertp__ctl_msg){ .type = USERTP_CTL_MSG_COMMS,
					   .has = src->comms_since ? USERTP_CTL_K(SINCE) : 0,
					   .num[USERTP_CTL_KEY_SINCE] = src->comms_since },
		-1);
	if (!src->comms_asked) {
		close(src->query);
		src->query = -1;
	}
}

#define UNNAMED_SLOTS 1024 /* threads a program may leave unnamed before it is not asked again */

/*
 * Is @tid in @src's set of threads it was asked for and did not name?  With @add, put it
 * there (false: it was not; the set full: the program is asked no more).
 */
static bool unnamed(struct usertp__source *src, pid_t tid, bool add)
{
	unsigned int i = ((unsigned int)tid * 2654435761u) % UNNAMED_SLOTS;

	if (!src->unnamed && (!add || !(src->unnamed = calloc(UNNAMED_SLOTS, sizeof(int)))))
		return false;
	while (src->unnamed[i] && src->unnamed[i] != tid)
		i = (i + 1) % UNNAMED_SLOTS;
	if (src->unnamed[i] || !add)
		return src->unnamed[i] != 0;
	src->unnamed[i] = tid;
	if (++src->nr_unnamed >= UNNAMED_SLOTS / 2)
		src->comms_slow = true;
	return false;
}

/*
 * A record of thread @tid, whose name the session does not know yet: its program is asked
 * now, and its reply waited for (a program notes a thread's name before the thread's first
 * record is committed, so the reply names it, also a thread that has ended since), so that
 * what reads the record prints the name, not "<...>".  Another user's program has
 * USERTP__FOREIGN_ANSWER_MS to answer, one of ours USERTP__CALL_TIMEOUT_MS; one that does not
 * answer in time is only asked without waiting from then on.  A program that is ending
 * answers no more: its last word, "exit" with the names, is waited for instead, as long.
 */
void usertp__ses_source_comms_now(struct usertp_session *s, struct usertp__source *src, pid_t tid)
{
	struct tep_handle *tep = usertp_session_tep(s);
	struct pollfd p;

	/* (A thread it was asked for and did not name, one it evicted: asked once, not each record.) */
	if (src->ended || src->comms_slow || unnamed(src, tid, false))
		return;
	usertp__session_take_news(s, src);
	if (tep_is_pid_registered(tep, tid))
		return;
	usertp__ses_source_ask_comms(src);
	if (!src->comms_asked && src->query < 0 && !src->foreign && usertp__proc_runs(src->pid)) {
		/*
		 * A program that young may have no endpoint yet (it makes it as its main()
		 * begins, and its first thread may record at once): waited for, as
		 * usertp__client_find() waits for a young process (one of ours only: another
		 * user's is given no more than its USERTP__FOREIGN_ANSWER_MS).
		 */
		struct usertp__program prog;

		if (!usertp__client_find(src->pid, &prog) &&
		    (src->query = usertp__client_connect(&prog)) >= 0)
			usertp__ses_source_ask_comms(src);
	}
	if (src->comms_asked) {
		p = (struct pollfd){ src->query, POLLIN, 0 };
		if (poll(&p, 1, src->foreign ? USERTP__FOREIGN_ANSWER_MS : USERTP__CALL_TIMEOUT_MS) != 1) {
			src->comms_slow = true;
			return;
		}
		usertp__ses_source_comms_reply(s, src);
	}
	/* (Not answered: its endpoint is gone, it is ending.) */
	if (!tep_is_pid_registered(tep, tid) && src->query < 0 && src->session >= 0) {
		p = (struct pollfd){ src->session, POLLIN, 0 };
		if (poll(&p, 1, USERTP__FOREIGN_ANSWER_MS) == 1)
			usertp__session_take_news(s, src);
	}
	if (!tep_is_pid_registered(tep, tid))
		unnamed(src, tid, true);
}

/*
 * The session's buffer for one message of a program (USERTP_CTL_MAX_MSG), made when first
 * needed: in the heap, not in each thread's static TLS, where it would cost every thread of
 * the process (each of the mount's FUSE workers) a megabyte it touches.  NULL: no memory.
 */
char *usertp__ses_message_buffer(struct usertp_session *s)
{
	if (!s->message)
		s->message = malloc(USERTP_CTL_MAX_MSG + 1);
	return s->message;
}

void usertp__ses_source_comms_reply(struct usertp_session *s, struct usertp__source *src)
{
	struct usertp__ctl_msg m;
	const char *why;
	char *reply = usertp__ses_message_buffer(s);
	long n = reply ? usertp__ctl_recv(src->query, reply, USERTP_CTL_MAX_MSG + 1, NULL,
					  USERTP__CALL_TIMEOUT_MS)
		       : -ENOMEM;

	src->comms_asked = false;
	if (n <= 0) {
		close(src->query);
		src->query = -1;
		return;
	}
	/* Kept for the next time, but not watched until then (it would wake us at its end). */
	epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, src->query, NULL);
	if (usertp__ctl_decode(reply, &m, &why) || m.type != USERTP_CTL_MSG_OK)
		return;
	if (usertp__ctl_has(&m, USERTP_CTL_KEY_SINCE))
		src->comms_since = m.num[USERTP_CTL_KEY_SINCE];
	usertp__source_keep_comms(s, src, m.body);
}

/*
 * The session's pid filter into @m (a "pids" request, or a "start"): pids= and notrace_pids=
 * when not empty (@pids gets their texts, to free()), event_fork=.  Return: 0 or -ENOMEM.
 */
int usertp__ses_pid_filter_msg(const struct usertp_session *s, struct usertp__ctl_msg *m,
			       char *pids[2])
{
	pids[0] = pids[1] = NULL;
	if (s->trace_pids.nr && !(pids[0] = usertp__pid_list_text(&s->trace_pids, ',')))
		return -ENOMEM;
	if (s->notrace_pids.nr && !(pids[1] = usertp__pid_list_text(&s->notrace_pids, ',')))
		return -ENOMEM;
	if (pids[0])
		usertp__ctl_set_text(m, USERTP_CTL_KEY_PIDS, pids[0]);
	if (pids[1])
		usertp__ctl_set_text(m, USERTP_CTL_KEY_NOTRACE_PIDS, pids[1]);
	usertp__ctl_set_num(m, USERTP_CTL_KEY_EVENT_FORK, s->event_fork);
	return 0;
}

/*
 * A "start" (@type) or "set" request with the settings of this moment, into @m; *events (to
 * free()) holds the specs it points to, @pids (to free()) the start's pid lists.
 * Return: 0 or -ENOMEM.
 */
int usertp__ses_settings_msg(const struct usertp_session *s, enum usertp__ctl_type type,
			struct usertp__ctl_msg *m, char **events, char *pids[2])
{
	*m = (struct usertp__ctl_msg){ .type = type };
	*events = usertp__ses_specs_text(s);
	if (!*events)
		return -ENOMEM;
	if (type == USERTP_CTL_MSG_START) {
		/* "SPEC FILTER" lines after the specs' NUL (a filter on one line: its breaks are
		 * white space to the grammar). */
		size_t len = strlen(*events) + 1, size = len + 1;
		char *more;

		for (unsigned int i = 0; i < s->nr_filters; i++)
			size += strlen(s->filters[i].events) + strlen(s->filters[i].text) + 2;
		/* (The kernel's filters are its instance's, never the programs'.) */
		more = realloc(*events, size);
		if (!more)
			return -ENOMEM;
		*events = more;
		more[len] = 0;
		for (unsigned int i = 0; i < s->nr_filters; i++) {
			char *at = more + strlen(more + len) + len;

			if (s->filters[i].kernel)
				continue;
			sprintf(at, "%s %s\n", s->filters[i].events, s->filters[i].text);
			for (char *c = at; *c && c[1]; c++)
				if (*c == '\n')
					*c = ' ';
		}
	}
	usertp__ctl_set_num(m, USERTP_CTL_KEY_TRACING, s->tracing);
	usertp__ctl_set_text(m, USERTP_CTL_KEY_EVENTS, *events);
	if (type == USERTP_CTL_MSG_START && usertp__ses_pid_filter_msg(s, m, pids) < 0)
		return -ENOMEM;
	if (type == USERTP_CTL_MSG_START) {
		m->body = *events + strlen(*events) + 1; /* the filters, after the specs */
		usertp__ctl_set_num(m, USERTP_CTL_KEY_KB, s->kb);
		usertp__ctl_set_num(m, USERTP_CTL_KEY_OVERWRITE, s->overwrite);
		usertp__ctl_set_text(m, USERTP_CTL_KEY_CLOCK,
				    usertp__rb_clock_name(s->tsc ? USERTP_RB_CLOCK_TSC : USERTP_RB_CLOCK_MONO));
		usertp__ctl_set_text(m, USERTP_CTL_KEY_RECORDER, s->sock_path);
	}
	return 0;
}

/* Start a session of @src on @sock; the region comes back.  Return: 0 or a negative errno. */
int usertp__ses_source_start(struct usertp_session *s, struct usertp__source *src, int sock,
			int timeout_ms)
{
	struct usertp__ctl_msg req, ok;
	char *events = NULL, *reply = NULL, err[256], *pids[2] = { NULL, NULL };
	int fd = -1, ret;

	/*
	 * The formats of the events it has that the session records, before they can fire: a
	 * program that fires and ends as soon as it is started can no longer be asked, and its
	 * events would be left out without them (`record -P` of such a program under load).
	 * Those of events it adds later come as news, before they can fire.
	 */
	if (!usertp__client_call(sock, USERTP_CTL_MSG_IDS, NULL, &reply, NULL, timeout_ms))
		source_add_formats(s, src, sock, usertp__client_body(reply));
	free(reply);
	reply = NULL;
	/* With our wake socket: the program wakes us when its buffers fill (ring-buffer.h). */
	ret = usertp__ses_settings_msg(s, USERTP_CTL_MSG_START, &req, &events, pids);
	/*
	 * Where it joins again, should it close its connection (a daemon): another user's
	 * program cannot reach our own socket (our runtime directory is ours alone), only one
	 * in the system directory (of all, or made now to join again).
	 */
	if (!ret && src->foreign && !usertp__ses_listen_again(s))
		usertp__ctl_set_text(&req, USERTP_CTL_KEY_RECORDER, s->every_path);
	if (s->run_pid && src->pid == s->run_pid && !src->forked_from)
		usertp__ctl_set_num(&req, USERTP_CTL_KEY_AT_START, 1); /* usertp__ses_command_stop() */
	if (!ret)
		ret = usertp__client_call_msg(sock, &req, s->overwrite ? -1 : s->wake_give, &reply, &ok,
					     &fd, timeout_ms);
	if (ret == -EREMOTEIO) {
		s->remote_err = !strncmp(reply, "error ", 6)
					? usertp__ctl_errno_of(reply + 6, strcspn(reply + 6, " \n"))
					: 0;
		usertp__session_fail(s, ret, "%s: %s%s", src->name,
				     usertp__client_error_text(reply, err, sizeof(err)),
				     strchr(reply, '\n') && strchr(reply, '\n')[1] ? strchr(reply, '\n') : "");
	}
	if (!ret && (fd < 0 || !usertp__ctl_has(&ok, USERTP_CTL_KEY_SIZE)))
		ret = -EPROTO;
	if (!ret)
		ret = usertp__ses_source_map(s, src, fd, ok.num[USERTP_CTL_KEY_SIZE]);
	if (!ret) {
		/* A program that does not read what we send is dropped, never waited for. */
		int send_ms = src->foreign ? USERTP__FOREIGN_ANSWER_MS : USERTP__CALL_TIMEOUT_MS;
		struct timeval tv = { send_ms / 1000, send_ms % 1000 * 1000 };

		setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		src->session = sock;
		source_add_formats(s, src, sock, ok.body);
	} else if (ret != -EREMOTEIO) {
		usertp__session_fail(s, ret, "%s: cannot start recording it: %s", src->name,
				     strerror(-ret));
	}
	if (fd >= 0)
		close(fd);
	free(reply);
	free(events);
	free(pids[0]);
	free(pids[1]);
	src->session = ret ? -1 : sock;
	return ret;
}

/* --- reading the buffers ------------------------------------------------------------------ */

struct page_arg {
	struct usertp_session *s;
	struct usertp__source *src;
	unsigned int cpu;
};

/* A page of the snapshot at the end (or a copy): to the sink. */
static int take_page(const struct usertp__rb_page_copy *page, uint64_t events, void *arg)
{
	struct page_arg *a = arg;

	return a->s->sink->page(a->s, a->src, a->cpu, page, events);
}

/* Complete pages, to a sink that takes them from where they are. */
static int take_pages_in_place(const struct usertp__rb_page_ref *pages, unsigned int n, void *arg)
{
	struct page_arg *a = arg;

	return a->s->sink->pages_in_place(a->s, a->src, a->cpu, pages, n);
}

/* Take the complete pages the source's writers left since last time. */
void usertp__ses_source_consume(struct usertp_session *s, struct usertp__source *src)
{
	uint64_t n;

	if (!src->view || src->ended || s->overwrite || s->write_error || !s->sink)
		return;
	for (unsigned int cpu = 0; cpu < src->view->nr_cpus; cpu++) {
		struct page_arg arg = { s, src, cpu };
		int ret;

		if (s->sink->room && !s->sink->room(src, cpu))
			continue; /* read later: the program's buffer holds them meanwhile */
		ret = s->sink->pages_in_place
			      ? usertp__rb_consume_pages(src->view, cpu, take_pages_in_place, &arg, &n)
			      : usertp__rb_consume(src->view, cpu, take_page, &arg, &n);
		if (ret == -EINVAL) {
			usertp__session_log(s, "%s: its buffer does not hold together; reading it stops",
					    src->name);
			src->ended = true;
			return;
		}
		/* On disk after each round: a process killed now leaves them recoverable. */
		if (n && s->sink->flush)
			s->sink->flush(s, src, cpu);
	}
}

/* The rest: the page being written, or in overwrite mode everything still there. */
void usertp__ses_source_finish(struct usertp_session *s, struct usertp__source *src)
{
	struct usertp__rb_snapshot snap;

	if (!src->view || src->ended || !s->sink)
		return;
	usertp__ses_source_consume(s, src);
	if (usertp__rb_snapshot(src->map, src->size, &snap) == 0) {
		for (unsigned int cpu = 0; cpu < snap.nr_cpus && cpu < src->view->nr_cpus; cpu++) {
			const struct usertp__rb_cpu_snapshot *c = &snap.cpus[cpu];

			for (unsigned int p = 0; p < c->nr_pages; p++) {
				struct usertp__rb_page_copy page = c->pages[p];
				struct page_arg arg = { s, src, cpu };

				/* Overwritten events were before the oldest page kept. */
				if (p == 0 && s->overwrite)
					page.lost_before += c->overrun;
				if ((page.used || page.lost_before) && !s->write_error)
					take_page(&page, 0, &arg);
			}
			if (s->sink->flush)
				s->sink->flush(s, src, cpu);
			if (!s->sink->counts_when_given) {
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

