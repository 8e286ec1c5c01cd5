/* SPDX-License-Identifier: MIT */
/*
 * reader.c - the sink of a reading session (sinks.h): its records in timestamp order, for
 * usertp_session_next() (session-read.c), and the libtraceevent handle that knows their
 * formats.
 *
 * Each program's CPU is a stream: the complete pages usertp_session_process() took from its
 * buffer (at most QUEUE_PAGES: beyond that they wait in the program's buffer, where new
 * events are dropped and counted when it fills), then the page being written, read without
 * being consumed (usertp__rb_peek()), so that a record is readable as soon as it is committed.
 * A stream remembers the last record it gave (page and offset), so that a page seen while it
 * was written gives only the rest when it comes complete.  usertp_session_next() gives the
 * stream's record with the smallest timestamp; equal ones keep the order of the programs.
 *
 * Ids: a program's ids are its own.  The session gives each distinct event (system, name and
 * format text) one id, the program's own where no other event has it, and rewrites the
 * record's common_type to it (in our copy of the page), so that one tep handle describes the
 * records of every program.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <traceevent/event-parse.h>

#include "ctl-proto.h"
#include "bprint.h"
#include "event-ids.h"
#include "grow.h"
#include "session-core.h"
#include "sinks.h"
#include "private/usertp-consumer-private.h"
#include "trace-dat.h"

#define QUEUE_PAGES 64	/* per stream: 256 KiB read ahead at most */
#define FORMAT_WAIT_MS 200 /* for the format of an event, on its way from the program */

struct queued_page {
	struct queued_page *next;
	struct usertp__rb_page_copy page;
	/*
	 * Zeroes after the page: libtraceevent prints a string to its NUL, and a program's record
	 * may hold none; it stops here at the latest.
	 */
	unsigned char zeroes[8];
};

struct usertp__stream {
	struct queued_page *head, **tail;
	unsigned int nr_queued;
	struct queued_page *cur;   /* the page being read: from the queue, or a peeked copy */
	bool cur_peeked;
	struct usertp__kpage_iter it;
	struct usertp__kpage_entry entry; /* the next record, when has_entry */
	bool has_entry, first_of_page;
	uint32_t entry_end;
	uint64_t seen_page, seen_end; /* the last record given: page, and its end on the page */
	bool seen_any;
	bool bad_said;
	/*
	 * The page being written did not parse from bad_end on when it held bad_used bytes: it
	 * is peeked again only once more has been committed to it (else a page whose writer put
	 * garbage after its records is walked and dropped forever).  bad_lost: such pages since
	 * the last record given, told with the next as lost before it.
	 */
	bool bad_any;
	uint64_t bad_page;
	uint32_t bad_used;
	unsigned long bad_lost;
};

struct usertp__reader {
	struct tep_handle *tep;
	struct usertp__ids ids; /* the session's events (event-ids.h) */
	/*
	 * usertp_printk()'s formats and call sites (bprint.h), by key, as they come: printed by
	 * printk_print(), not by libtraceevent's own bprint, whose maps are made at its first such
	 * record and take nothing registered after (a program started later, a dlopen()).
	 */
	struct reader_key {
		uint64_t key;
		char *text; /* the format, unescaped; the function */
	} *formats, *sites;
	unsigned int nr_formats, nr_sites, formats_cap, sites_cap;
};

static const struct usertp__sink usertp__reader_sink;
static int printk_print(struct trace_seq *seq, struct tep_record *record, struct tep_event *event,
			void *context);

int usertp__reader_new(struct usertp_session *s)
{
	struct usertp__reader *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->tep = tep_alloc();
	if (!r->tep) {
		free(r);
		return -ENOMEM;
	}
	tep_set_long_size(r->tep, sizeof(long));
	tep_set_page_size(r->tep, USERTP__KPAGE_SIZE);
	tep_set_file_bigendian(r->tep, __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? TEP_BIG_ENDIAN
									      : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(r->tep, __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? TEP_BIG_ENDIAN
									       : TEP_LITTLE_ENDIAN);
	tep_register_event_handler(r->tep, -1, "ftrace", "bprint", printk_print, r);
	tep_register_event_handler(r->tep, -1, "ftrace", "bputs", printk_print, r);
	s->reader = r;
	s->sink = &usertp__reader_sink;
	return 0;
}

static void reader_free(struct usertp_session *s)
{
	struct usertp__reader *r = s->reader;

	if (!r)
		return;
	usertp__ids_free(&r->ids);
	tep_free(r->tep);
	for (unsigned int i = 0; i < r->nr_formats; i++)
		free(r->formats[i].text);
	for (unsigned int i = 0; i < r->nr_sites; i++)
		free(r->sites[i].text);
	free(r->formats);
	free(r->sites);
	free(r);
	s->reader = NULL;
	s->sink = NULL;
}

struct tep_handle *usertp_session_tep(struct usertp_session *s)
{
	return s->reader ? s->reader->tep : NULL;
}

static int reader_source(struct usertp_session *s, struct usertp__source *src)
{
	(void)s;
	src->streams = calloc(src->nr_cpus, sizeof(*src->streams));
	if (!src->streams)
		return -ENOMEM;
	for (unsigned int cpu = 0; cpu < src->nr_cpus; cpu++)
		src->streams[cpu].tail = &src->streams[cpu].head;
	return 0;
}

static void reader_source_free(struct usertp__source *src)
{
	for (unsigned int cpu = 0; src->streams && cpu < src->nr_cpus; cpu++) {
		struct usertp__stream *st = &src->streams[cpu];

		free(st->cur);
		while (st->head) {
			struct queued_page *q = st->head;

			st->head = q->next;
			free(q);
		}
	}
	free(src->streams);
	src->streams = NULL;
	free(src->ids);
	src->ids = NULL;
	free(src->awaited);
	src->awaited = NULL;
}

/*
 * Whether the source's event @type has a session id: if not yet, its format is waited for,
 * once.  An event whose format never comes (refused as unsafe, or a program that does not
 * send it) is not waited for again: another user's program firing one event of a refused
 * format by the thousand held root's mount 200 ms a record (issue 21, in the attacks
 * together).
 */
static bool source_knows(struct usertp_session *s, struct usertp__source *src, uint16_t type)
{
	uint64_t bit = 1ull << (type % 64);

	if (type < src->nr_ids && src->ids[type])
		return true;
	if ((src->awaited && (src->awaited[type / 64] & bit)) || usertp__source_refused(src, type))
		return false;
	s->await_format(s, src, type, FORMAT_WAIT_MS);
	if (type < src->nr_ids && src->ids[type])
		return true;
	if (!src->awaited)
		src->awaited = calloc(65536 / 64, sizeof(*src->awaited));
	if (src->awaited)
		src->awaited[type / 64] |= bit;
	return false;
}

static bool reader_room(const struct usertp__source *src, unsigned int cpu)
{
	return src->streams && src->streams[cpu].nr_queued < QUEUE_PAGES;
}

static int reader_page(struct usertp_session *s, struct usertp__source *src, unsigned int cpu,
		       const struct usertp__rb_page_copy *page, uint64_t events)
{
	struct usertp__stream *st = &src->streams[cpu];
	struct queued_page *q;

	(void)s;
	(void)events; /* (counted as they are given) */
	if (st->seen_any && page->page_no < st->seen_page)
		return 0; /* given already, while it was written */
	q = malloc(sizeof(*q));
	if (!q)
		return -ENOMEM; /* not consumed: read later */
	memset(q->zeroes, 0, sizeof(q->zeroes));
	q->next = NULL;
	q->page = *page;
	*st->tail = q;
	st->tail = &q->next;
	st->nr_queued++;
	return 0;
}

/* --- ids and formats ---------------------------------------------------------------------- */

/* The session's id of an event: found, or given, and its format parsed under it. */
static int session_id(struct usertp__reader *r, const char *system, const char *format,
		      unsigned int want)
{
	struct tep_event *parsed = NULL;
	bool added;
	char *text;
	int i = usertp__ids_add(&r->ids, system, format, want, &added), ret = 0;

	if (i < 0)
		return i;
	if (!added)
		return (int)r->ids.events[i].id;
	usertp__ids_assign(&r->ids);
	text = usertp__ids_format(&r->ids, (unsigned int)i);
	if (!text)
		return -ENOMEM;
	/* (Refused: its id stays taken, the records come without a format.) */
	if (!usertp__tep_format_ok(text, strlen(text), system, (int)sizeof(long)) ||
	    tep_parse_format(r->tep, &parsed, text, strlen(text), system))
		ret = -EINVAL;
	free(text);
	return ret ? ret : (int)r->ids.events[i].id;
}

static void reader_event(struct usertp_session *s, struct usertp__source *src, unsigned int id,
			  const char *system, const char *format)
{
	int sid;

	if (id > USERTP__IDS_MAX)
		return;
	sid = session_id(s->reader, system, format, id);
	if (sid < 0) {
		usertp__session_log(s, "%s: the format of event %u cannot be read; its records "
				       "come without one", src->name, id);
		return;
	}
	if (id >= src->nr_ids) {
		unsigned int n = id + 32;
		uint16_t *more = realloc(src->ids, n * sizeof(*more));

		if (!more)
			return;
		memset(more + src->nr_ids, 0, (n - src->nr_ids) * sizeof(*more));
		src->ids = more;
		src->nr_ids = n;
	}
	src->ids[id] = (uint16_t)sid;
}

static const char *key_text(const struct reader_key *keys, unsigned int n, uint64_t key)
{
	for (unsigned int i = 0; i < n; i++)
		if (keys[i].key == key)
			return keys[i].text;
	return NULL;
}

/* Keep the lines of @text (@len bytes) that @parse reads, each key once. */
static void keys_add(struct reader_key **keys, unsigned int *n, unsigned int *cap,
		     const char *text, size_t len,
		     uint64_t (*parse)(const char *line, size_t len, char *out, size_t size))
{
	for (const char *line = text, *end = text + len; line < end;) {
		size_t n_line = strcspn(line, "\n");
		char *out;
		uint64_t key;

		if (line + n_line > end)
			n_line = (size_t)(end - line);
		key = parse(line, n_line, NULL, 0);
		if (key && !key_text(*keys, *n, key) &&
		    usertp__grow((void **)keys, cap, *n + 1, sizeof(**keys)) &&
		    (out = malloc(n_line + 1))) {
			parse(line, n_line, out, n_line + 1);
			(*keys)[(*n)++] = (struct reader_key){ key, out };
		}
		line += n_line + 1;
	}
}

static void reader_printk(struct usertp_session *s, struct usertp__source *src,
			  const char *formats, size_t formats_len, const char *sites, size_t sites_len)
{
	struct usertp__reader *r = s->reader;

	(void)src;
	keys_add(&r->formats, &r->nr_formats, &r->formats_cap, formats, formats_len,
		 usertp__printk_format_parse);
	keys_add(&r->sites, &r->nr_sites, &r->sites_cap, sites, sites_len,
		 usertp__printk_site_parse);
}

/*
 * A usertp_printk() record of a format or call site not known yet: the program told of it
 * before it could fire (its news, on its session connection), but the records may be read
 * first; take what the program has said already (no wait).
 */
static void printk_known(struct usertp_session *s, struct usertp__source *src,
			 const struct usertp_record *rec)
{
	const struct usertp__reader *r = s->reader;
	uint64_t keys[2];

	if (!rec->event || rec->size < 24 || strcmp(rec->event->system, "ftrace"))
		return;
	memcpy(keys, (const unsigned char *)rec->data + 8, 16);
	if (!key_text(r->sites, r->nr_sites, keys[0]) || !key_text(r->formats, r->nr_formats, keys[1]))
		s->take_news(s, src);
}

/*
 * The text of an ftrace:bprint or bputs record, as libtraceevent's own makes it from a file's
 * printk_formats and kallsyms ("%ps: " and the text; bprint.h's formats print alike).
 */
static int printk_print(struct trace_seq *seq, struct tep_record *record, struct tep_event *event,
			void *context)
{
	const struct usertp__reader *r = context;
	const unsigned char *data = record->data;
	const char *fmt, *function;
	uint64_t ip, key;
	char text[USERTP__KPAGE_SIZE + 256];

	if (record->size < 24) {
		trace_seq_printf(seq, "[RECORD OF %d BYTES]", record->size);
		return 0;
	}
	memcpy(&ip, data + 8, 8);
	memcpy(&key, data + 16, 8);
	function = key_text(r->sites, r->nr_sites, ip);
	if (function)
		trace_seq_printf(seq, "%s: ", function);
	else
		trace_seq_printf(seq, "0x%llx: ", (unsigned long long)ip);
	fmt = key_text(r->formats, r->nr_formats, key);
	if (!fmt)
		trace_seq_printf(seq, "(NO FORMAT FOUND at %llx)", (unsigned long long)key);
	else if (!strcmp(event->name, "bputs"))
		trace_seq_printf(seq, "%.*s", (int)(strlen(fmt) - (fmt[strlen(fmt) - 1] == '\n')), fmt);
	else {
		usertp__bprint_text(fmt, data + 24, (size_t)record->size - 24, text, sizeof(text));
		trace_seq_puts(seq, text);
	}
	return 0;
}

static void reader_comms(struct usertp_session *s, struct usertp__source *src, const char *lines)
{
	(void)src;
	for (const char *p = lines; *p; p += strcspn(p, "\n"), p += *p == '\n') {
		char comm[17];
		int tid, used = 0;

		if (sscanf(p, "%d %16[^\n]%n", &tid, comm, &used) != 2 || !used || tid <= 0)
			continue;
		/*
		 * (Not tep_override_comm(): it frees the name a reader may hold, as usertp
		 * stream's line printer does; a thread id used again keeps its first name here.)
		 */
		if (!tep_is_pid_registered(s->reader->tep, tid))
			tep_register_comm(s->reader->tep, comm, tid);
		if (s->on_comm)
			s->on_comm(tid, comm, s->on_comm_arg);
	}
}

/* --- the streams -------------------------------------------------------------------------- */

/* Has the stream given the record that ends at @end on page @page already? */
static bool seen(const struct usertp__stream *st, uint64_t page, uint32_t end)
{
	return st->seen_any && (page < st->seen_page || (page == st->seen_page && end <= st->seen_end));
}

static void drop_cur(struct usertp__stream *st)
{
	free(st->cur);
	st->cur = NULL;
	st->cur_peeked = false;
}

/* Make the stream's next record ready, if it has one now.  Return: whether it has. */
static bool stream_fill(struct usertp_session *s, struct usertp__source *src, unsigned int cpu)
{
	struct usertp__stream *st = &src->streams[cpu];

	while (!st->has_entry) {
		int ret;

		if (!st->cur) {
			if (st->head) {
				st->cur = st->head;
				st->head = st->cur->next;
				if (!st->head)
					st->tail = &st->head;
				st->nr_queued--;
			} else if (!src->ended) {
				struct queued_page *q = malloc(sizeof(*q));

				/* The page being written: what is committed of it now. */
				if (q)
					memset(q->zeroes, 0, sizeof(q->zeroes));
				if (!q || usertp__rb_peek(src->view, cpu, &q->page) != 1 ||
				    seen(st, q->page.page_no, q->page.used) ||
				    (st->bad_any && q->page.page_no == st->bad_page &&
				     q->page.used <= st->bad_used)) {
					free(q);
					return false;
				}
				st->cur = q;
				st->cur_peeked = true;
			} else {
				return false;
			}
			usertp__kpage_iter_init(&st->it, st->cur->page.data, st->cur->page.used);
			st->first_of_page = true;
		}
		ret = usertp__kpage_iter_next(&st->it, &st->entry);
		if (ret == 1) {
			if (seen(st, st->cur->page.page_no, st->it.off)) {
				st->first_of_page = false;
				continue;
			}
			st->entry_end = st->it.off;
			st->has_entry = true;
			break;
		}
		if (ret < 0) {
			if (!st->bad_said)
				usertp__session_log(s, "%s: a page of CPU %u does not parse; the "
						    "rest of it is left out, counted as lost",
						    src->name, cpu);
			st->bad_said = true;
			if (st->cur_peeked) {
				st->bad_any = true;
				st->bad_page = st->cur->page.page_no;
				st->bad_used = st->cur->page.used;
			}
			st->bad_lost++;
		}
		drop_cur(st);
	}
	return true;
}

/* Fill @rec from the stream's record and move past it. */
static void stream_give(struct usertp_session *s, struct usertp__source *src, unsigned int cpu,
			struct usertp_record *rec)
{
	struct usertp__stream *st = &src->streams[cpu];
	unsigned char *data = (unsigned char *)st->entry.data;
	uint16_t type = 0;
	int32_t tid = 0;

	memset(rec, 0, sizeof(*rec));
	rec->struct_size = sizeof(*rec);
	rec->pid = src->pid;
	rec->cpu = cpu;
	rec->ts = usertp__clock_conv_apply(&s->conv, st->entry.ts);
	rec->data = data;
	rec->size = st->entry.size;
	rec->id = -1;
	if (st->entry.size >= 8) {
		memcpy(&type, data, 2);
		memcpy(&tid, data + 4, 4);
		rec->tid = tid;
		if (source_knows(s, src, type)) {
			type = src->ids[type];
			memcpy(data, &type, 2); /* our copy: the session's id */
			rec->id = type;
			rec->event = tep_find_event(s->reader->tep, type);
			printk_known(s, src, rec);
		}
	}
	if (st->first_of_page && !seen(st, st->cur->page.page_no, 0))
		rec->lost_before = st->cur->page.lost_before;
	rec->lost_before += st->bad_lost;
	st->bad_lost = 0;
	st->first_of_page = false;
	st->seen_any = true;
	st->seen_page = st->cur->page.page_no;
	st->seen_end = st->entry_end;
	st->has_entry = false;
	src->stats[cpu].read++;
	s->read[cpu]++;
	s->events++;
}

/*
 * The programs' sources, then the kernel's (@i == s->nr_sources; NULL without one): at equal
 * times the programs' records come first, as in a file.
 */
static struct usertp__source *source_at(const struct usertp_session *s, unsigned int i)
{
	return i < s->nr_sources ? s->sources[i] : s->kernel_src;
}

/* The stream whose record has the smallest timestamp of all, if there is one now. */
static struct usertp__source *best_stream(struct usertp_session *s, unsigned int *cpu_out)
{
	struct usertp__source *best = NULL;
	unsigned int best_cpu = 0;

	for (unsigned int i = 0; i <= s->nr_sources; i++) {
		struct usertp__source *src = source_at(s, i);

		for (unsigned int cpu = 0; src && src->streams && cpu < src->nr_cpus; cpu++) {
			if (!stream_fill(s, src, cpu))
				continue;
			if (!best || src->streams[cpu].entry.ts < best->streams[best_cpu].entry.ts) {
				best = src;
				best_cpu = cpu;
			}
		}
	}
	*cpu_out = best_cpu;
	return best;
}

bool usertp__reader_next_ts(struct usertp_session *s, uint64_t *ts)
{
	unsigned int cpu;
	struct usertp__source *best = best_stream(s, &cpu);

	if (best)
		*ts = best->streams[cpu].entry.ts;
	return best;
}

bool usertp__reader_give_record(struct usertp_session *s, struct usertp_record *rec)
{
	unsigned int cpu;
	struct usertp__source *best = best_stream(s, &cpu);

	if (best)
		stream_give(s, best, cpu, rec);
	return best;
}

/* The page given last by usertp__reader_give_page(): freed at the next call. */
static __thread struct queued_page *page_given;

void usertp__reader_page_done(void)
{
	free(page_given);
	page_given = NULL;
}

/* Make @q's records carry the session's ids; return how many there are. */
static uint64_t page_to_session_ids(struct usertp_session *s, struct usertp__source *src,
				    struct queued_page *q)
{
	struct usertp__kpage_iter it;
	struct usertp__kpage_entry e;
	uint64_t n = 0;

	usertp__kpage_iter_init(&it, q->page.data, q->page.used);
	while (usertp__kpage_iter_next(&it, &e) == 1) {
		uint16_t type;

		n++;
		if (e.size < 2)
			continue;
		memcpy(&type, e.data, 2);
		type = source_knows(s, src, type) ? src->ids[type] : 0;
		memcpy((unsigned char *)e.data, &type, 2); /* our copy; 0: no format known */
	}
	return n;
}

/*
 * @q's timestamps on the session's clock (s->conv), the records written again: the deltas
 * of ticks become deltas of nanoseconds, never longer with a TSC of 1 GHz or more; a record
 * that would not fit (a slower TSC) is left out, counted as lost before the page.
 */
static uint64_t page_to_session_clock(struct usertp_session *s, struct queued_page *q)
{
	static __thread unsigned char out[USERTP__KPAGE_SIZE];
	struct usertp__kpage_iter it;
	struct usertp__kpage_entry e;
	struct usertp__kpage page = { .data = NULL };
	uint64_t left_out = 0, first;

	if (s->conv.identity)
		return 0;
	usertp__kpage_iter_init(&it, q->page.data, q->page.used);
	while (usertp__kpage_iter_next(&it, &e) == 1) {
		uint64_t ts = usertp__clock_conv_apply(&s->conv, e.ts);
		void *at;

		if (!page.data)
			usertp__kpage_open(&page, out, ts);
		at = usertp__kpage_add(&page, ts, e.size, USERTP__KPAGE_DATA);
		if (at)
			memcpy(at, e.data, e.size);
		else
			left_out++;
	}
	if (!page.data) {
		memcpy(&first, q->page.data, 8);
		usertp__kpage_open(&page, out, usertp__clock_conv_apply(&s->conv, first));
	}
	memcpy(q->page.data, out, USERTP__KPAGE_SIZE);
	q->page.used = page.used;
	if (left_out)
		q->page.lost_before = q->page.lost_before == USERTP__KPAGE_LOST_UNKNOWN
					      ? q->page.lost_before
					      : q->page.lost_before + left_out;
	return left_out;
}

/* The queued page with the smallest timestamp of all streams, if there is one now. */
bool usertp__reader_give_page(struct usertp_session *s, struct usertp_page *page)
{
	struct usertp__source *best = NULL;
	unsigned int best_cpu = 0;
	uint64_t best_ts = 0;
	struct usertp__stream *st;
	struct queued_page *q;

	for (unsigned int i = 0; i <= s->nr_sources; i++) {
		struct usertp__source *src = source_at(s, i);

		for (unsigned int cpu = 0; src && src->streams && cpu < src->nr_cpus; cpu++) {
			uint64_t ts;

			if (!src->streams[cpu].head)
				continue;
			memcpy(&ts, src->streams[cpu].head->page.data, 8);
			if (!best || ts < best_ts) {
				best = src;
				best_cpu = cpu;
				best_ts = ts;
			}
		}
	}
	if (!best)
		return false;
	st = &best->streams[best_cpu];
	q = st->head;
	st->head = q->next;
	if (!st->head)
		st->tail = &st->head;
	st->nr_queued--;
	page_given = q;
	*page = (struct usertp_page){ .struct_size = sizeof(*page), .pid = best->pid,
				      .cpu = best_cpu, .data = q->page.data,
				      .size = USERTP__KPAGE_SIZE,
				      .events = page_to_session_ids(s, best, q) };
	page->events -= page_to_session_clock(s, q);
	usertp__kpage_seal(q->page.data, q->page.used, q->page.lost_before);
	best->stats[best_cpu].read += page->events;
	s->read[best_cpu] += page->events;
	s->events += page->events;
	return true;
}

static const struct usertp__sink usertp__reader_sink = {
	.source_new = reader_source,
	.source_free = reader_source_free,
	.event = reader_event,
	.comms = reader_comms,
	.printk = reader_printk,
	.room = reader_room,
	.page = reader_page,
	.counts_when_given = true,
	.free = reader_free,
};
