/* SPDX-License-Identifier: MIT */
/*
 * instance-buffer.c - an instance's buffer (instance-private.h): the records held per CPU, as
 * the kernel's ring buffer holds them, and the files that read them: trace, trace_pipe, trace_pipe_raw,
 * buffer_size_kb, per_cpu stats, trace_marker and trace_marker_raw.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include <event-parse.h>
#include <usertp/consumer.h>

#include "filter.h"
#include "kernel-page.h"
#include "trace-lines.h"
#include "private/usertp-consumer-private.h"
#include "pid-list.h"
#include "instance-private.h"

/* --- the records -------------------------------------------------------------------------- */

/* The bytes a record of @size takes in the kernel's buffer: its header, 4-byte aligned. */
static unsigned int record_bytes(unsigned int size)
{
	return 4 + (size > 112 ? 4 : 0) + ((size + 3) & ~3u);
}

static void held_free(struct held *h)
{
	free(h->text);
	free(h->raw);
	free(h);
}

static void held_unlink(struct cpu_records *c, struct held *h)
{
	*(h->prev ? &h->prev->next : &c->head) = h->next;
	*(h->next ? &h->next->prev : &c->tail) = h->prev;
	c->bytes -= h->bytes;
	c->entries--;
	held_free(h);
}

/* A CPU's room: its buffer_size_kb, less the page being written, as the kernel's. */
static uint64_t room(const struct cpu_records *c)
{
	uint64_t pages = c->kb * 1024 / USERTP__KPAGE_DATA;

	return (pages > 1 ? pages - 1 : 1) * USERTP__KPAGE_DATA;
}

/* Hold @h (under lock): after the records of its CPU that are not newer. */
void usertp__inst_hold(struct usertp__instance *in, struct held *h)
{
	struct cpu_records *c = &in->cpus[h->cpu];
	struct held *after;

	while (c->bytes + h->bytes > room(c) && c->head) {
		if (!in->option[OPT_OVERWRITE]) {
			c->dropped++;
			held_free(h);
			return;
		}
		held_unlink(c, c->head);
		c->overrun++;
		c->lost_pending++;
	}
	/* (After the evictions, which may have freed the tail.) */
	after = c->tail;
	while (after && after->ts > h->ts)
		after = after->prev;
	h->prev = after;
	h->next = after ? after->next : c->head;
	*(h->next ? &h->next->prev : &c->tail) = h;
	*(after ? &after->next : &c->head) = h;
	c->bytes += h->bytes;
	c->entries++;
}

/*
 * The text of a record (@data, @size bytes, its common_type the session's id @sid), "name:
 * payload" as libtraceevent prints it (to free()); NULL: no memory.  Takes tep_lock.
 */
static char *record_text(struct usertp__instance *in, const void *data, unsigned int size,
			 uint16_t sid, uint64_t ts, unsigned int cpu)
{
	struct tep_record tr = { .ts = ts, .cpu = (int)cpu, .size = (int)size, .data = (void *)data };
	const char *bad = "";
	struct tep_event *ev;
	struct trace_seq s;
	char *text;

	pthread_mutex_lock(&in->tep_lock);
	ev = sid ? tep_find_event(usertp_session_tep(in->session), sid) : NULL;
	trace_seq_init(&s);
	if (!ev)
		trace_seq_printf(&s, "(NULL): (an event whose format its program did not give)");
	else if (!usertp__tep_record_ok(ev, data, (int)size, &bad))
		/* (another user's record: libtraceevent would read where it does not say) */
		trace_seq_printf(&s, "%s: [FIELD %s OUTSIDE THE RECORD]", ev->name, bad);
	else if (!usertp__tlines_named(ev->system))
		tep_print_event(usertp_session_tep(in->session), &s, &tr, "%s", TEP_PRINT_INFO);
	else
		tep_print_event(usertp_session_tep(in->session), &s, &tr, "%s: %s", TEP_PRINT_NAME,
				TEP_PRINT_INFO);
	trace_seq_terminate(&s);
	pthread_mutex_unlock(&in->tep_lock);
	text = strdup(s.buffer ? s.buffer : "");
	trace_seq_destroy(&s);
	return text;
}

/*
 * @rec as held (in the pump, under apply): its raw form; its text is made when it is first
 * read (usertp__inst_held_text(): most records are never read as text, and making it was two
 * thirds of the pump's time, bench/RESULTS.md), or now where it has no raw form.
 */
struct held *usertp__inst_held_new(struct usertp__instance *in, const struct usertp_record *rec)
{
	struct held *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->ts = rec->ts;
	h->tid = rec->tid;
	h->pid = rec->pid;
	h->cpu = rec->cpu < in->nr_cpus ? rec->cpu : in->nr_cpus - 1;
	h->bytes = record_bytes(rec->size);
	h->sid = rec->event && rec->id > 0 ? (uint16_t)rec->id : 0;
	/* The raw record, with the mount's id (the one events/SYS/EV/id says). */
	if (rec->event && rec->size >= 2 && (h->raw = malloc(rec->size))) {
		uint16_t id = (uint16_t)in->event_id(rec->event->system, rec->event->name);

		memcpy(h->raw, rec->data, rec->size);
		memcpy(h->raw, &id, 2);
		h->raw_size = rec->size;
		return h;
	}
	h->text = record_text(in, rec->data, rec->size, h->sid, rec->ts, h->cpu);
	if (!h->text) {
		held_free(h);
		return NULL;
	}
	return h;
}

const char *usertp__inst_held_text(struct usertp__instance *in, struct held *h)
{
	uint16_t mount_id;

	if (!h->text && h->raw) {
		/* (Its session id while it is printed: libtraceevent finds the format by it.) */
		memcpy(&mount_id, h->raw, 2);
		memcpy(h->raw, &h->sid, 2);
		h->text = record_text(in, h->raw, h->raw_size, h->sid, h->ts, h->cpu);
		memcpy(h->raw, &mount_id, 2);
	}
	return h->text ? h->text : "";
}

/* The CPU whose oldest record is the oldest of all (@only >= 0: of that CPU), or -1. */
static int oldest_cpu(const struct usertp__instance *in, int only)
{
	int best = -1;

	for (unsigned int cpu = 0; cpu < in->nr_cpus; cpu++)
		if (in->cpus[cpu].head && (only < 0 || (unsigned int)only == cpu) &&
		    (best < 0 || in->cpus[cpu].head->ts < in->cpus[best].head->ts))
			best = (int)cpu;
	return best;
}

/* Is there anything for trace_pipe (of CPU @only, or all: -1) (under lock)? */
static bool pipe_has(const struct usertp__instance *in, const struct usertp__pipe_reader *r, int only)
{
	return (r && r->off < r->len) || oldest_cpu(in, only) >= 0;
}

/* Keep @handle for the next wake (under lock).  Return: false (no memory: not kept). */
static bool poller_add(struct usertp__instance *in, void *handle)
{
	if (in->nr_pollers == in->cap_pollers) {
		size_t cap = in->cap_pollers ? in->cap_pollers * 2 : 64;
		void **more = realloc(in->pollers, cap * sizeof(*more));

		if (!more)
			return false;
		in->pollers = more;
		in->cap_pollers = cap;
	}
	in->pollers[in->nr_pollers++] = handle;
	return true;
}

/* Wake what waits on the records (under lock). */
void usertp__inst_wake(struct usertp__instance *in)
{
	pthread_cond_broadcast(&in->more);
	for (size_t i = 0; i < in->nr_pollers; i++)
		in->notify(in->pollers[i]);
	in->nr_pollers = 0;
}

bool usertp__inst_count_dropped(struct usertp__instance *in)
{
	unsigned int nr = usertp_session_nr_programs(in->session);
	bool any = false;

	if (nr > in->nr_seen) {
		void *more = realloc(in->seen_dropped, nr * sizeof(*in->seen_dropped));

		if (!more)
			return false;
		in->seen_dropped = more;
		memset(in->seen_dropped + in->nr_seen, 0, (nr - in->nr_seen) * sizeof(*in->seen_dropped));
		in->nr_seen = nr;
	}
	for (unsigned int i = 0; i < nr; i++) {
		struct usertp_cpu_stats st = USERTP_STRUCT_INIT(usertp_cpu_stats);

		for (unsigned int cpu = 0; cpu < USERTP__INSTANCE_CPUS; cpu++) {
			unsigned int to = cpu < in->nr_cpus ? cpu : in->nr_cpus - 1;
			uint64_t more;

			if (usertp_session_cpu_stats(in->session, i, cpu, &st))
				break;
			if (st.dropped <= in->seen_dropped[i][cpu])
				continue;
			more = st.dropped - in->seen_dropped[i][cpu];
			in->seen_dropped[i][cpu] = st.dropped;
			pthread_mutex_lock(&in->lock);
			in->cpus[to].dropped += more;
			in->cpus[to].lost_pending += more;
			pthread_mutex_unlock(&in->lock);
			any = true;
		}
	}
	return any;
}

/* --- trace and trace_pipe ----------------------------------------------------------------- */

/* The text of `trace` and `trace_pipe` (trace-lines.h) into @out, as the options lay it out. */
static void tlines_write(void *arg, const char *text, size_t len)
{
	fwrite(text, 1, len, arg);
}

static struct usertp__tlines tlines_of(const struct usertp__instance *in, FILE *out)
{
	return (struct usertp__tlines){ tlines_write, out, in->option[OPT_RECORD_TGID],
					 in->option[OPT_IRQ_INFO] };
}

/* One line of `trace` and `trace_pipe` (docs/tracefs.md §6); a user-space record has no flags. */
static void print_line(const struct usertp__tlines *t, struct usertp__instance *in,
		       struct held *h)
{
	usertp__tlines_line(t, usertp__inst_comm_get(in, h->tid), (int)h->tid, (int)h->pid, h->cpu,
			    h->flags, h->ts, in->clock == USERTP_LIVE_X86_TSC, NULL,
			    usertp__inst_held_text(in, h), true);
}

int usertp__instance_trace_text(struct usertp__instance *in, int only, char **text, size_t *len)
{
	FILE *out = open_memstream(text, len);
	struct usertp__tlines tl;
	struct held **at;
	uint64_t entries = 0, written = 0;

	if (!out)
		return -ENOMEM;
	pthread_mutex_lock(&in->lock);
	usertp__inst_comms_take(in);
	at = calloc(in->nr_cpus, sizeof(*at));
	for (unsigned int cpu = 0; cpu < in->nr_cpus; cpu++) {
		if (only >= 0 && (unsigned int)only != cpu)
			continue;
		entries += in->cpus[cpu].entries;
		written += in->cpus[cpu].entries + in->cpus[cpu].overrun;
		if (at)
			at[cpu] = in->cpus[cpu].head;
	}
	tl = tlines_of(in, out);
	usertp__tlines_header(&tl, entries, written, get_nprocs());
	/* Every CPU's records, merged by time. */
	for (;;) {
		int best = -1;

		for (unsigned int cpu = 0; at && cpu < in->nr_cpus; cpu++)
			if (at[cpu] && (best < 0 || at[cpu]->ts < at[best]->ts))
				best = (int)cpu;
		if (best < 0)
			break;
		print_line(&tl, in, at[best]);
		at[best] = at[best]->next;
	}
	pthread_mutex_unlock(&in->lock);
	free(at);
	return fclose(out) || !at ? -ENOMEM : 0;
}

/* Clear CPU @cpu's records and counts (under lock); its size stays. */
static void cpu_clear(struct cpu_records *c)
{
	uint64_t kb = c->kb;

	while (c->head)
		held_unlink(c, c->head);
	*c = (struct cpu_records){ .kb = kb };
}

void usertp__instance_clear(struct usertp__instance *in, int only)
{
	pthread_mutex_lock(&in->lock);
	for (unsigned int cpu = 0; cpu < in->nr_cpus; cpu++)
		if (only < 0 || (unsigned int)only == cpu)
			cpu_clear(&in->cpus[cpu]);
	pthread_mutex_unlock(&in->lock);
}

/* Consume the oldest record into @r's pending text, LOST line first (under lock). */
static int pipe_take(struct usertp__instance *in, struct usertp__pipe_reader *r)
{
	int cpu = oldest_cpu(in, r->cpu);
	struct usertp__tlines tl;
	struct cpu_records *c;
	FILE *out;

	if (cpu < 0)
		return 0;
	c = &in->cpus[cpu];
	free(r->pending);
	r->pending = NULL;
	r->off = 0;
	out = open_memstream(&r->pending, &r->len);
	if (!out)
		return -ENOMEM;
	tl = tlines_of(in, out);
	if (c->lost_pending)
		usertp__tlines_lost(&tl, (unsigned int)cpu, c->lost_pending);
	c->lost_pending = 0;
	c->read++;
	print_line(&tl, in, c->head);
	held_unlink(c, c->head);
	if (fclose(out))
		return -ENOMEM;
	return 1;
}

/*
 * The oldest records of CPU @cpu as one page of the kernel's format, into @r's pending bytes,
 * consuming them (under lock).  Records with no raw form are taken and left out.
 * Return: 1, 0 (nothing held), -ENOMEM.
 */
static int raw_take(struct usertp__instance *in, struct usertp__pipe_reader *r, unsigned int cpu)
{
	struct cpu_records *c = &in->cpus[cpu];
	struct usertp__kpage page = { NULL, 0, 0 };
	uint64_t lost = c->lost_pending;
	bool any = false;

	while (c->head && !c->head->raw) {
		c->read++;
		held_unlink(c, c->head);
	}
	if (!c->head)
		return 0;
	page.data = calloc(1, USERTP__KPAGE_SIZE);
	if (!page.data)
		return -ENOMEM;
	while (c->head) {
		struct held *h = c->head;
		unsigned char *at;

		if (!h->raw) {
			c->read++;
			held_unlink(c, h);
			continue;
		}
		if (!any)
			usertp__kpage_open(&page, page.data, h->ts);
		/* A known lost count goes after the entries, where it fits. */
		at = usertp__kpage_add(&page, h->ts, h->raw_size, USERTP__KPAGE_DATA);
		if (!at && any)
			break;
		if (at) /* (else too big for any page: left out, as the kernel cannot hold it) */
			memcpy(at, h->raw, h->raw_size);
		any |= at != NULL;
		c->read++;
		held_unlink(c, h);
	}
	usertp__kpage_seal(page.data, page.used, lost);
	c->lost_pending = 0;
	free(r->pending);
	r->pending = (char *)page.data;
	r->len = USERTP__KPAGE_SIZE;
	r->off = 0;
	return 1;
}

ssize_t usertp__instance_raw_read(struct usertp__instance *in, struct usertp__pipe_reader *r,
				  char *buf, size_t size, bool nonblock, bool (*interrupted)(void))
{
	size_t n;
	int ret = 0;

	pthread_mutex_lock(&in->lock);
	usertp__inst_comms_take(in);
	while (r->off == r->len) {
		struct timespec until;

		ret = raw_take(in, r, (unsigned int)r->cpu);
		if (ret)
			break;
		if (nonblock) {
			ret = -EAGAIN;
			break;
		}
		if (interrupted && interrupted()) {
			ret = -EINTR;
			break;
		}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += PIPE_WAIT_MS * 1000000l;
		until.tv_sec += until.tv_nsec / 1000000000;
		until.tv_nsec %= 1000000000;
		pthread_cond_timedwait(&in->more, &in->lock, &until);
	}
	if (ret < 0 && r->off == r->len) {
		pthread_mutex_unlock(&in->lock);
		return ret;
	}
	n = r->len - r->off < size ? r->len - r->off : size;
	memcpy(buf, r->pending + r->off, n);
	r->off += n;
	pthread_mutex_unlock(&in->lock);
	return (ssize_t)n;
}

ssize_t usertp__instance_pipe_read(struct usertp__instance *in, struct usertp__pipe_reader *r,
				   char *buf, size_t size, bool nonblock, bool (*interrupted)(void))
{
	size_t given = 0;
	int ret = 0;

	pthread_mutex_lock(&in->lock);
	while (!pipe_has(in, r, r->cpu)) {
		struct timespec until;

		if (r->gave && !in->tracing)
			goto out; /* end of file (docs/tracefs.md §7) */
		if (nonblock) {
			ret = -EAGAIN;
			goto out;
		}
		if (interrupted && interrupted()) {
			ret = -EINTR;
			goto out;
		}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += PIPE_WAIT_MS * 1000000l;
		until.tv_sec += until.tv_nsec / 1000000000;
		until.tv_nsec %= 1000000000;
		pthread_cond_timedwait(&in->more, &in->lock, &until);
	}
	/* Whole records while they fit; the rest of one that does not, for the next read. */
	while (given < size) {
		size_t n;

		if (r->off == r->len) {
			ret = pipe_take(in, r);
			if (ret <= 0)
				break;
		}
		n = r->len - r->off < size - given ? r->len - r->off : size - given;
		memcpy(buf + given, r->pending + r->off, n);
		r->off += n;
		given += n;
	}
	r->gave |= given > 0;
	if (given)
		ret = 0;
out:
	pthread_mutex_unlock(&in->lock);
	return ret < 0 ? ret : (ssize_t)given;
}

void usertp__pipe_reader_init(struct usertp__pipe_reader *r, int cpu)
{
	*r = (struct usertp__pipe_reader){ .cpu = cpu };
}

void usertp__pipe_reader_free(struct usertp__pipe_reader *r)
{
	free(r->pending);
	usertp__pipe_reader_init(r, r->cpu);
}

bool usertp__instance_poll(struct usertp__instance *in, const struct usertp__pipe_reader *r,
			   void *handle)
{
	bool ready;

	pthread_mutex_lock(&in->lock);
	ready = pipe_has(in, r, r->cpu);
	if (!ready && handle && poller_add(in, handle))
		handle = NULL; /* (kept) */
	if (handle)
		in->notify(handle); /* (ready, or no room to keep it: the caller looks again) */
	pthread_mutex_unlock(&in->lock);
	return ready;
}

bool usertp__instance_pipe_park(struct usertp__instance *in, const struct usertp__pipe_reader *r,
				void *handle)
{
	bool parked = false;

	pthread_mutex_lock(&in->lock);
	/* (Not with records, nor at the end of a trace_pipe: tracing off, something given.) */
	if (!pipe_has(in, r, r->cpu) && !(r->gave && !in->tracing))
		parked = poller_add(in, handle);
	pthread_mutex_unlock(&in->lock);
	return parked;
}

/* --- buffer sizes, per-CPU stats, trace_marker ------------------------------------------- */

unsigned int usertp__instance_nr_cpus(const struct usertp__instance *in)
{
	return in->nr_cpus;
}

char *usertp__instance_buffer_kb_text(struct usertp__instance *in, int only, bool total)
{
	uint64_t sum = 0, first = 0;
	bool same = true;
	char *text;

	pthread_mutex_lock(&in->lock);
	for (unsigned int cpu = 0; cpu < in->nr_cpus; cpu++) {
		if (only >= 0 && (unsigned int)only != cpu)
			continue;
		if (!sum)
			first = in->cpus[cpu].kb;
		same &= in->cpus[cpu].kb == first;
		sum += in->cpus[cpu].kb;
	}
	pthread_mutex_unlock(&in->lock);
	if (total)
		return asprintf(&text, "%llu\n", (unsigned long long)sum) < 0 ? NULL : text;
	return asprintf(&text, same ? "%llu\n" : "X\n", (unsigned long long)first) < 0 ? NULL : text;
}

int usertp__instance_set_buffer_kb(struct usertp__instance *in, int only, uint64_t kb)
{
	if (!kb || kb > USERTP__INSTANCE_MAX_KB)
		return -EINVAL;
	kb = usertp__tfs_buffer_kb(kb);
	pthread_mutex_lock(&in->lock);
	for (unsigned int cpu = 0; cpu < in->nr_cpus; cpu++) {
		struct cpu_records *c = &in->cpus[cpu];

		if (only >= 0 && (unsigned int)only != cpu)
			continue;
		c->kb = kb;
		/* Smaller: the oldest go, as overwritten. */
		while (c->head && c->bytes > room(c)) {
			held_unlink(c, c->head);
			c->overrun++;
			c->lost_pending++;
		}
	}
	pthread_mutex_unlock(&in->lock);
	return 0;
}

/* A time of stats: seconds.microseconds, or a counter's ticks as they are (the kernel's). */
static void stats_time(char *buf, size_t size, uint64_t ts, bool ticks)
{
	if (ticks)
		snprintf(buf, size, "%llu", (unsigned long long)ts);
	else
		snprintf(buf, size, "%5llu.%06llu", (unsigned long long)(ts / 1000000000),
			 (unsigned long long)(ts % 1000000000 / 1000));
}

char *usertp__instance_stats_text(struct usertp__instance *in, unsigned int cpu)
{
	const struct cpu_records *c;
	char *text, oldest[32], now[32];
	bool ticks;
	int n;

	if (cpu >= in->nr_cpus)
		return NULL;
	pthread_mutex_lock(&in->lock);
	ticks = in->clock == USERTP_LIVE_X86_TSC;
	c = &in->cpus[cpu];
	stats_time(oldest, sizeof(oldest), c->head ? c->head->ts : 0, ticks);
	stats_time(now, sizeof(now), usertp__live_clock_now(in->clock), ticks);
	n = asprintf(&text,
		     "entries: %llu\noverrun: %llu\ncommit overrun: 0\nbytes: %llu\n"
		     "oldest event ts: %s\nnow ts: %s\n"
		     "dropped events: %llu\nread events: %llu\n",
		     (unsigned long long)c->entries, (unsigned long long)c->overrun,
		     (unsigned long long)c->bytes, oldest, now,
		     (unsigned long long)c->dropped, (unsigned long long)c->read);
	pthread_mutex_unlock(&in->lock);
	return n < 0 ? NULL : text;
}

/* A marker record of thread @tid, now, with @text and @raw_size bytes of raw (to fill). */
static struct held *marker_new(struct usertp__instance *in, pid_t tid, unsigned int raw_size)
{
	struct held *h = calloc(1, sizeof(*h));
	int cpu = sched_getcpu();

	if (!h)
		return NULL;
	pthread_mutex_lock(&in->lock);
	h->ts = usertp__live_clock_now(in->clock);
	pthread_mutex_unlock(&in->lock);
	h->tid = tid;
	h->pid = tid;
	h->cpu = cpu >= 0 && (unsigned int)cpu < in->nr_cpus ? (unsigned int)cpu : 0;
	h->flags = "...1."; /* (the kernel writes it with preemption off) */
	h->raw_size = raw_size;
	h->raw = calloc(1, raw_size);
	h->bytes = record_bytes(raw_size);
	return h;
}

/* Hold marker @h (and its raw's common fields, event @name of ftrace).  Return: as _mark(). */
static ssize_t marker_hold(struct usertp__instance *in, struct held *h, const char *name,
			   size_t len)
{
	if (h->raw) {
		uint16_t id = (uint16_t)in->event_id("ftrace", name);
		int32_t pid = h->tid;

		memcpy(h->raw, &id, 2);
		memcpy((char *)h->raw + 4, &pid, 4);
	}
	pthread_mutex_lock(&in->lock);
	if (!in->option[OPT_MARKERS] || !in->tracing || in->paused) {
		bool markers = in->option[OPT_MARKERS];

		pthread_mutex_unlock(&in->lock);
		held_free(h);
		return markers ? -EBADF : -EINVAL;
	}
	usertp__inst_hold(in, h);
	usertp__inst_wake(in);
	pthread_mutex_unlock(&in->lock);
	return (ssize_t)len;
}

ssize_t usertp__instance_mark(struct usertp__instance *in, pid_t tid, const char *buf, size_t len)
{
	struct held *h;

	if (len > USERTP__INSTANCE_MARKER_MAX)
		len = USERTP__INSTANCE_MARKER_MAX;
	/* Raw, as the kernel's ftrace:print: the common fields, ip (0 here), buf and its NUL. */
	h = marker_new(in, tid, 16 + (unsigned int)len + 2);
	/* The text, with the newline the kernel adds when there is none. */
	if (!h || asprintf(&h->text, "tracing_mark_write: %.*s%s", (int)len, buf,
			   len && buf[len - 1] == '\n' ? "" : "\n") < 0) {
		if (h)
			held_free(h);
		return -ENOMEM;
	}
	if (h->raw) {
		memcpy((char *)h->raw + 16, buf, len);
		if (!len || buf[len - 1] != '\n')
			((char *)h->raw)[16 + len] = '\n';
	}
	return marker_hold(in, h, "print", len);
}

ssize_t usertp__instance_mark_raw(struct usertp__instance *in, pid_t tid, const char *buf,
				  size_t len)
{
	/* As the kernel's: the common fields, id, the data, padded to 4 bytes (all printed). */
	size_t data = (len + 3) / 4 * 4 - 4;
	struct held *h;
	uint32_t id;
	char *text;
	size_t at;

	if (len < 4 || len > USERTP__INSTANCE_RAW_MARKER_MAX)
		return -EINVAL;
	memcpy(&id, buf, 4);
	h = marker_new(in, tid, 12 + (unsigned int)data);
	text = h ? malloc(32 + 3 * data) : NULL;
	if (!text) {
		if (h)
			held_free(h);
		return -ENOMEM;
	}
	at = (size_t)sprintf(text, "# %x buf:", id);
	for (size_t i = 0; i < data; i++)
		at += (size_t)sprintf(text + at, " %02x", i < len - 4 ? (unsigned char)buf[4 + i] : 0);
	strcpy(text + at, "\n");
	h->text = text;
	if (h->raw)
		memcpy((char *)h->raw + 8, buf, len);
	return marker_hold(in, h, "raw_data", len);
}
