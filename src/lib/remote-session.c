/* SPDX-License-Identifier: MIT */
/*
 * remote-session.c - the program's side of the session of a consumer outside the process
 * (usertp record, libusertp-consumer, the mount).
 *
 * A session is what one control connection asked for: event specs, a per-CPU buffer size and
 * mode.  It records through the ring-buffer sink into a region of its own, a memfd that the
 * recorder maps: the recorder reads the pages where they are written, and keeps them when
 * this process dies.  A session lasts as long as its connection (control.c).
 *
 * In a child forked without exec, every session gets new buffers (the parent's stay the
 * parent's), and the child announces itself to the recorder's own socket ("fork" with the new
 * region), so that children are traced as perf's inherit does.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "ctl-proto.h"
#include "internal.h"
#include "rb-sink.h"
#include "listener.h"
#include "thread.h"
#include "number.h"
#include "remote-session.h"

unsigned int usertp__rb_sinks;

static int session_filters_start(struct usertp__session *s, const char *body, const char *events,
				 const char **why);

/*
 * The buffers are made sparse: a session that enables nothing (a mount's instance, which
 * every program that starts joins) costs no memory and no time to fault pages in.  Their
 * pages come in once the session has an event spec, before any event it selects records.
 */
static void session_populate_for(struct usertp__session *s, const char *specs)
{
	if (specs && specs[strspn(specs, ", \t\n")])
		usertp__rb_populate(&s->sink.rb);
}

int usertp__session_start(const struct usertp__ctl_msg *request, int wake_fd,
			  const struct usertp__fd_id *wake_id, struct usertp__session **out,
			  const char **why)
{
	struct usertp__session *s;
	unsigned long kb = USERTP_RB_DEFAULT_KB;
	bool overwrite = false;
	enum usertp__rb_clock clock = USERTP_RB_CLOCK_MONO;
	const char *events = request->text[USERTP_CTL_KEY_EVENTS];
	int ret;

	*why = NULL;
	if (usertp__ctl_has(request, USERTP_CTL_KEY_KB))
		kb = (unsigned long)request->num[USERTP_CTL_KEY_KB];
	overwrite = request->num[USERTP_CTL_KEY_OVERWRITE];
	if (usertp__ctl_has(request, USERTP_CTL_KEY_CLOCK) &&
	    usertp__rb_parse_clock(request->text[USERTP_CTL_KEY_CLOCK], &clock, why))
		return -EINVAL;
	{
		static char size_why[160];

		if (usertp__rb_size_check((unsigned int)get_nprocs_conf(), kb, size_why,
					 sizeof(size_why))) {
			*why = size_why;
			return -ENOMEM;
		}
	}
	/* One clock per process: every buffer's timestamps must compare. */
	if (clock != usertp__rb_clock_id && __atomic_load_n(&usertp__rb_sinks, __ATOMIC_RELAXED)) {
		*why = "another recorder of this process uses another clock";
		return -EBUSY;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (usertp__ctl_has(request, USERTP_CTL_KEY_RECORDER))
		snprintf(s->recorder, sizeof(s->recorder), "%s", request->text[USERTP_CTL_KEY_RECORDER]);
	ret = usertp__rb_create_sparse(&s->sink.rb, (unsigned int)get_nprocs_conf(), kb, overwrite);
	if (ret) {
		free(s);
		return ret;
	}
	session_populate_for(s, events);
	/* (Written only when it changes, which it may only with no buffer: writers read it.) */
	if (clock != usertp__rb_clock_id)
		__atomic_store_n(&usertp__rb_clock_id, clock, __ATOMIC_RELAXED);
	s->at_start = request->num[USERTP_CTL_KEY_AT_START];
	if (s->at_start)
		__atomic_fetch_add(&usertp__at_start_sessions, 1, __ATOMIC_RELAXED);
	s->tracing = !usertp__ctl_has(request, USERTP_CTL_KEY_TRACING) ||
		     request->num[USERTP_CTL_KEY_TRACING];
	/* Before the listener: writers read it from their first event on. */
	usertp__rb_set_wake_fd(&s->sink.rb, wake_fd, wake_id);
	__atomic_store_n(&s->sink.active, s->tracing, __ATOMIC_RELAXED);
	__atomic_fetch_add(&usertp__rb_sinks, 1, __ATOMIC_RELAXED);
	/*
	 * A recorder's specs are trace-cmd's -e: globs too.  The listener starts with none, is
	 * given the session's filters (the start's body), then its specs: each event gets its
	 * filter from its first record, and one that refuses its filter fails the start.
	 */
	ret = usertp__listener_create_ops("", USERTP__SPEC_GLOB, usertp__rb_sink_ops(&s->sink.rb),
					  NULL, &s->sink, &s->listener);
	/* The pid filter before the events: not one record of a thread it leaves out. */
	if (!ret && (ret = usertp__session_pids(s, request, true)))
		usertp_listener_destroy(s->listener);
	if (!ret)
		ret = session_filters_start(s, request->body, events, why);
	if (ret) {
		__atomic_fetch_sub(&usertp__rb_sinks, 1, __ATOMIC_RELAXED);
		if (s->at_start)
			__atomic_fetch_sub(&usertp__at_start_sessions, 1, __ATOMIC_RELAXED);
		s->sink.rb.wake_fd = -1; /* the caller's still */
		usertp__rb_destroy(&s->sink.rb);
		free(s->refused);
		free(s);
		if (!*why)
			*why = ret == -EINVAL ? "events= is not a list of sys:event, sys:*, *:event or "
						"event specs"
					      : NULL;
		return ret;
	}
	*out = s;
	return 0;
}

/* --- filters ------------------------------------------------------------------------------ */

/* What went wrong with a filter, for the reply: a line, then the filter file's text. */
static char filter_why[8192];

/*
 * An event that refuses its filter is not recorded (it would record unfiltered); the
 * recorder is told (at the start, the start fails; later, as news; before main(), in the
 * recorder's own command, the news stops the program: usertp__registering_at_start).
 * Under usertp__lock.
 */
static void session_filter_refused(void *arg, const char *events, const struct usertp_event *ev,
				   const char *text, const struct usertp__filter_error *e)
{
	struct usertp__session *s = (struct usertp__session *)((char *)arg -
							       offsetof(struct usertp__session, sink));
	char head[600], err[8192], *more;
	size_t old = s->refused ? strlen(s->refused) : 0;

	bool stops = s->at_start && (usertp__registering_at_start || s->starting);

	snprintf(head, sizeof(head), "the filter of %s does not fit %s:%s%s: %s\n", events,
		 ev->event_class->system, ev->name, stops ? "" : ", which is not recorded",
		 strerror(-e->err));
	usertp__filter_error_file(text, e, err, sizeof(err));
	more = realloc(s->refused, old + strlen(head) + strlen(err) + 1);
	if (!more)
		return; /* (not recorded all the same) */
	sprintf(more + old, "%s%s", head, err);
	s->refused = more;
	s->refused_at_start |= stops;
}

bool usertp__session_verdict_locked(struct usertp__session *s, bool go)
{
	if (go)
		s->awaiting_verdict = false;
	return s->awaiting_verdict;
}

/* The start's filters ("SPEC FILTER" lines of @body), then @events. */
static int session_filters_start(struct usertp__session *s, const char *body, const char *events,
				 const char **why)
{
	char *copy = strdup(body ? body : ""), *save = NULL, err[4096];
	int ret = copy ? 0 : -ENOMEM;

	usertp__listener_on_filter_refused(s->listener, session_filter_refused);
	for (char *line = copy ? strtok_r(copy, "\n", &save) : NULL; line && !ret;
	     line = strtok_r(NULL, "\n", &save)) {
		char *text = strchr(line, ' ');

		if (!text)
			continue;
		*text++ = 0;
		ret = usertp_listener_set_filter(s->listener, line, text, err, sizeof(err));
		if (ret) {
			snprintf(filter_why, sizeof(filter_why), "the filter of %s: %s\n%s", line,
				 strerror(-ret), err);
			*why = filter_why;
		}
	}
	free(copy);
	/* (A refusal now fails the start: for the recorder's own command, that stops it.) */
	s->starting = true;
	if (!ret)
		ret = usertp__listener_set_specs(s->listener, events, USERTP__SPEC_GLOB);
	s->starting = false;
	pthread_mutex_lock(&usertp__lock);
	if (!ret && s->refused) {
		/* At the start: the start fails (nothing starts), with what was refused. */
		snprintf(filter_why, sizeof(filter_why), "%s", s->refused);
		*why = filter_why;
		ret = -EINVAL;
	}
	pthread_mutex_unlock(&usertp__lock);
	if (ret)
		usertp_listener_destroy(s->listener);
	return ret;
}

int usertp__session_filter(struct usertp__session *s, const char *events, const char *text,
			   const char **why)
{
	char err[4096];
	int ret;

	char *trimmed = strdup(text ? text : "");
	size_t len;

	*why = NULL;
	if (!trimmed)
		return -ENOMEM;
	/* As tracefs: trailing white space is not the filter's; nothing at all removes it. */
	len = strlen(trimmed);
	while (len && isspace((unsigned char)trimmed[len - 1]))
		trimmed[--len] = 0;
	ret = usertp_listener_set_filter(s->listener, events, len ? trimmed : NULL, err,
					 sizeof(err));
	free(trimmed);
	if (ret) {
		snprintf(filter_why, sizeof(filter_why), "the filter of %s: %s\n%s", events,
			 strerror(-ret), err);
		*why = filter_why;
	}
	return ret;
}

int usertp__session_pids(struct usertp__session *s, const struct usertp__ctl_msg *request,
			 bool starting)
{
	struct usertp__pid_list trace = { NULL, 0 }, notrace = { NULL, 0 };
	bool follow = request->num[USERTP_CTL_KEY_EVENT_FORK];
	int ret = 0;

	/* (The lists were checked when the request was decoded.) */
	if (usertp__ctl_has(request, USERTP_CTL_KEY_PIDS))
		ret = usertp__pid_list_parse(&trace, request->text[USERTP_CTL_KEY_PIDS], ",");
	if (!ret && usertp__ctl_has(request, USERTP_CTL_KEY_NOTRACE_PIDS))
		ret = usertp__pid_list_parse(&notrace, request->text[USERTP_CTL_KEY_NOTRACE_PIDS], ",");
	if (!ret && starting && follow)
		ret = usertp__pid_lists_inherit(&trace, &notrace);
	if (!ret)
		ret = usertp__listener_set_pid_lists(s->listener, &trace, &notrace, follow);
	usertp__pid_list_free(&trace);
	usertp__pid_list_free(&notrace);
	return ret;
}

int usertp__session_set(struct usertp__session *s, const struct usertp__ctl_msg *request,
			const char **why)
{
	int ret;

	*why = NULL;
	if (usertp__ctl_has(request, USERTP_CTL_KEY_EVENTS)) {
		session_populate_for(s, request->text[USERTP_CTL_KEY_EVENTS]);
		ret = usertp__listener_set_specs(s->listener, request->text[USERTP_CTL_KEY_EVENTS],
						 USERTP__SPEC_GLOB);
		if (ret) {
			*why = ret == -EINVAL ? "events= is not a list of sys:event, sys:*, *:event or event specs"
					      : NULL;
			return ret;
		}
	}
	if (usertp__ctl_has(request, USERTP_CTL_KEY_TRACING))
		s->tracing = request->num[USERTP_CTL_KEY_TRACING];
	__atomic_store_n(&s->sink.active, s->tracing, __ATOMIC_RELAXED);
	return 0;
}

void usertp__session_end(struct usertp__session *s)
{
	if (!s)
		return;
	__atomic_store_n(&s->sink.active, false, __ATOMIC_RELAXED);
	/* After this no writer is inside the buffers: they can go (the recorder keeps its map). */
	usertp_listener_destroy(s->listener);
	__atomic_fetch_sub(&usertp__rb_sinks, 1, __ATOMIC_RELAXED);
	if (s->at_start)
		__atomic_fetch_sub(&usertp__at_start_sessions, 1, __ATOMIC_RELAXED);
	usertp__rb_destroy(&s->sink.rb);
	free(s->named);
	free(s->described);
	free(s->refused);
	free(s);
}

/* --- news for the recorder ---------------------------------------------------------------- */

/*
 * Was the recorder told of @ev under @id (in @table)?  It is taken as told from now on.
 * (Out of memory: taken as told; the recorder's own refresh may still learn it.)
 */
static bool told(const struct usertp_event ***table, unsigned int *nr, int id,
		 const struct usertp_event *ev)
{
	if (id <= 0 || id > 65535)
		return true;
	if ((unsigned int)id >= *nr) {
		unsigned int n = (unsigned int)id + 64;
		const struct usertp_event **bigger = realloc(*table, n * sizeof(*bigger));

		if (!bigger)
			return true;
		memset(bigger + *nr, 0, (n - *nr) * sizeof(*bigger));
		*table = bigger;
		*nr = n;
	}
	if ((*table)[id] == ev)
		return true;
	(*table)[id] = ev;
	return false;
}

struct news_names {
	struct usertp__session *s;
	FILE *text;
	bool any;
};

static void news_name(const struct usertp_event *ev, int id, void *arg)
{
	struct news_names *n = arg;

	if (!told(&n->s->named, &n->s->nr_named, id, ev)) {
		fprintf(n->text, "%d %s:%s\n", id, usertp_event_system(ev), usertp_event_name(ev));
		n->any = true;
	}
}

struct recorded {
	int id;
	const struct usertp_event *ev;
};

struct recorded_list {
	struct recorded *list;
	unsigned int n, cap;
};

static void recorded_add(const struct usertp_event_file *file, void *arg)
{
	struct recorded_list *r = arg;
	const struct usertp_event *ev = __atomic_load_n(&file->event, __ATOMIC_ACQUIRE);

	if (!ev)
		return;
	if (r->n == r->cap) {
		unsigned int cap = r->cap ? 2 * r->cap : 32;
		struct recorded *bigger = realloc(r->list, cap * sizeof(*bigger));

		if (!bigger)
			return;
		r->list = bigger;
		r->cap = cap;
	}
	r->list[r->n++] = (struct recorded){ file->id, ev };
}

/*
 * usertp_printk()'s formats and call sites the recorder was not told of yet, to a session
 * that records ftrace:bprint or bputs: "printk", then printk_formats lines, then kallsyms
 * lines (bprint.h), each text as a trace.dat holds it.  Return: 0 or -ENOMEM.
 */
static int news_printk(struct usertp__session *s,
		       void (*emit)(const char *msg, size_t len, void *arg), void *arg)
{
	unsigned int n = usertp__printk_count();
	size_t flen, klen, head = sizeof("printk\n") - 1;
	char *text;

	if (n <= s->printk_told)
		return 0;
	flen = usertp__printk_lines(s->printk_told, n, false, NULL, 0);
	klen = usertp__printk_lines(s->printk_told, n, true, NULL, 0);
	if (head + flen + klen > USERTP_CTL_MAX_MSG - 64)
		return 0; /* (more than a message holds: told no more) */
	text = malloc(head + flen + klen + 1);
	if (!text)
		return -ENOMEM;
	memcpy(text, "printk\n", head);
	usertp__printk_lines(s->printk_told, n, false, text + head, flen + 1);
	usertp__printk_lines(s->printk_told, n, true, text + head + flen, klen + 1);
	emit(text, head + flen + klen, arg);
	free(text);
	s->printk_told = n;
	return 0;
}

int usertp__session_news(struct usertp__session *s,
			 void (*emit)(const char *msg, size_t len, void *arg), void *arg)
{
	struct news_names names = { s, NULL, false };
	struct recorded_list rec = { NULL, 0, 0 };
	char *text = NULL;
	size_t len = 0;
	int ret = 0;

	names.text = open_memstream(&text, &len);
	if (!names.text)
		return -ENOMEM;
	fputs("events\n", names.text);
	usertp__event_foreach_locked(news_name, &names);
	if (fclose(names.text))
		ret = -ENOMEM;
	else if (names.any)
		emit(text, len, arg);
	free(text);

	pthread_mutex_lock(&usertp__lock);
	if (s->refused) {
		struct usertp__ctl_msg m = { .type = USERTP_CTL_MSG_REFUSED, .body = s->refused };
		char *msg;
		long mlen;

		if (s->refused_at_start)
			usertp__ctl_set_num(&m, USERTP_CTL_KEY_AT_START, 1);
		mlen = usertp__ctl_encode(&m, &msg);
		if (mlen > 0) {
			emit(msg, (size_t)mlen, arg);
			free(msg);
			free(s->refused);
			s->refused = NULL;
			s->awaiting_verdict |= s->refused_at_start;
			s->refused_at_start = false;
		}
	}
	usertp__listener_files(s->listener, recorded_add, &rec);
	pthread_mutex_unlock(&usertp__lock);
	/* (Before the formats: a reader that waits for bprint's has its texts by then.) */
	for (unsigned int i = 0; i < rec.n; i++)
		if (!strcmp(usertp_event_system(rec.list[i].ev), "ftrace")) {
			ret = news_printk(s, emit, arg);
			break;
		}
	for (unsigned int i = 0; i < rec.n; i++) {
		const struct usertp_event *ev = rec.list[i].ev;
		char head[600];
		int hlen, flen;

		if (told(&s->described, &s->nr_described, rec.list[i].id, ev))
			continue;
		hlen = snprintf(head, sizeof(head), "format id=%d name=%s:%s\n", rec.list[i].id,
				usertp_event_system(ev), usertp_event_name(ev));
		flen = usertp_event_format(ev, NULL, 0);
		text = flen >= 0 && hlen > 0 && (size_t)hlen < sizeof(head)
			       ? malloc((size_t)hlen + (size_t)flen + 1) : NULL;
		if (!text || usertp_event_format(ev, text + hlen, (size_t)flen + 1) < 0) {
			/* Gone meanwhile, or no memory: told another time. */
			s->described[rec.list[i].id] = NULL;
			free(text);
			ret = ret ? ret : -ENOMEM;
			continue;
		}
		memcpy(text, head, (size_t)hlen);
		emit(text, (size_t)hlen + (size_t)flen, arg);
		free(text);
	}
	free(rec.list);
	return ret;
}

static void news_drop(const char *msg, size_t len, void *arg)
{
	(void)msg;
	(void)len;
	(void)arg;
}

void usertp__session_news_skip(struct usertp__session *s)
{
	/*
	 * (Not the printk lines: the start's reply does not list them; the recorder asks for them
	 * after it, and those that come meanwhile are news.)
	 */
	unsigned int printk_told = s->printk_told;

	usertp__session_news(s, news_drop, NULL);
	s->printk_told = printk_told;
}

void usertp__session_news_forget(struct usertp__session *s)
{
	memset(s->named, 0, s->nr_named * sizeof(*s->named));
	memset(s->described, 0, s->nr_described * sizeof(*s->described));
}

struct enabled_text {
	char *buf;
	size_t size, len;
};

static void enabled_line(const struct usertp_event_file *file, void *arg)
{
	struct enabled_text *t = arg;
	const struct usertp_event *ev = __atomic_load_n(&file->event, __ATOMIC_ACQUIRE);
	int n;

	if (!ev || t->len >= t->size)
		return;
	n = snprintf(t->buf + t->len, t->size - t->len, "%d %s:%s\n", file->id,
		     ev->event_class->system, ev->name);
	if (n > 0)
		t->len += (size_t)n < t->size - t->len ? (size_t)n : t->size - t->len;
}

size_t usertp__session_enabled(const struct usertp__session *s, char *buf, size_t size)
{
	struct enabled_text t = { buf, size, 0 };

	pthread_mutex_lock(&usertp__lock);
	usertp__listener_files(s->listener, enabled_line, &t);
	pthread_mutex_unlock(&usertp__lock);
	if (t.len >= size)
		t.len = size ? size - 1 : 0;
	if (size)
		buf[t.len] = 0;
	return t.len;
}

int usertp__session_fork_buffers(struct usertp__session *s)
{
	struct usertp__rb old = s->sink.rb;
	int ret;

	/*
	 * The parent's region tells the recorder which of its programs we run the image of,
	 * whether or not it has read that one's end yet (a parent that exits at once, as a
	 * daemon's does; or exec's) and whoever our parent is by now.
	 */
	s->parent_region = old.fd_id.ino <= INT64_MAX ? old.fd_id.ino : 0;
	__atomic_store_n(&s->sink.active, false, __ATOMIC_RELAXED);
	if (!s->recorder[0])
		return -ENOENT;
	ret = usertp__rb_create_sparse(&s->sink.rb, old.nr_cpus,
				      (unsigned long)old.nr_pages * USERTP__KPAGE_DATA / 1024,
				      old.overwrite);
	if (ret) {
		s->sink.rb = old;
		return ret;
	}
	if (old.populated)
		usertp__rb_populate(&s->sink.rb);
	/* The recorder's wake socket (inherited) wakes it for the child's buffers too. */
	s->sink.rb.wake_fd = old.wake_fd;
	s->sink.rb.wake_id = old.wake_id;
	old.wake_fd = -1;
	usertp__rb_destroy(&old);
	/* Ours record from now on: what we fire before the recorder hears of them waits there. */
	__atomic_store_n(&s->sink.active, s->tracing, __ATOMIC_RELAXED);
	return 0;
}

int usertp__session_fork_announce(struct usertp__session *s, struct usertp__fd_id *id)
{
	struct usertp__ctl_msg m = { .type = USERTP_CTL_MSG_FORK };
	int sock, ret;

	if (s->parent_region)
		usertp__ctl_set_num(&m, USERTP_CTL_KEY_REGION, s->parent_region);
	sock = usertp__ctl_connect_id(s->recorder, id);
	if (sock < 0)
		return sock;
	usertp__ctl_set_num(&m, USERTP_CTL_KEY_PID, (uint64_t)getpid());
	usertp__ctl_set_num(&m, USERTP_CTL_KEY_PPID, (uint64_t)getppid());
	usertp__ctl_set_num(&m, USERTP_CTL_KEY_SIZE, s->sink.rb.size);
	ret = usertp__ctl_send_msg(sock, &m, s->sink.rb.fd);
	if (ret) {
		usertp__fd_close_if(sock, id);
		return ret;
	}
	return sock;
}
