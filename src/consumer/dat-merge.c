/* SPDX-License-Identifier: MIT */
/*
 * dat-merge.c - the recordings of several processes as one trace.dat file (dat-merge.h says
 * what it does).  The file's layout and page flags come from src/lib/trace-dat.c, which the
 * embedded recorder uses too; the spool pages are parsed with the ring buffer's own checked
 * iterator (src/lib/ring-buffer.c).
 *
 *	events:  per source, its declared ids -> one id per (system, name, format) in the file
 *	header:  written once, with a CPU table of zeros
 *	per CPU: one reader per source (one page in memory), a k-way merge by timestamp, the
 *		 records copied into output pages (a page whose records nothing else goes
 *		 between, as it is: emit_page()), then the CPU's table entry set in place;
 *		 or, a source's pages adopted (dat-merge.h), moved where they are with
 *		 fallocate's collapse, nothing read
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ring-buffer.h"
#include "trace-dat.h"
#include "dat-merge.h"
#include "dat-v7.h"
#include "zstd.h"
#include "event-ids.h"

/*
 * Pages that may still sit in the output buffer, not yet written: the buffer holds whole pages
 * (CPU data starts on an empty one) and is written out when full; one more page may be closed
 * after a failed write.
 */
#define PENDING_PAGES (sizeof(((struct usertp__dat_out *)0)->buf) / USERTP__KPAGE_SIZE)

struct id_map {
	uint16_t from, to;
};

/* One source's spool of one CPU, read a page at a time. */
/* A spool is read this much at a time (whole pages). */
#define READ_AHEAD (64u * USERTP__KPAGE_SIZE)
/* Spool bytes read before they are given back (release_spools). */
#define SPOOL_RELEASE_STEP (256u * 1024)

struct reader {
	unsigned int index, cpu;
	int fd;
	uint64_t off;  /* of the next page in the spool */
	uint64_t end;  /* of the spool's pages in the file (UINT64_MAX: its end) */
	bool use_read; /* a pipe: read() rather than pread() */
	bool release;  /* give the spool's pages back to the file system once read */
	uint64_t released; /* up to where */
	bool in_page, warned_page;
	size_t ahead_len, ahead_pos; /* bytes read ahead, and taken */
	unsigned int nr_recs, next_rec; /* the page's records, checked when it was loaded */
	struct usertp__rb_page_copy page;
	unsigned char *ahead;	      /* READ_AHEAD bytes (kept across CPUs) */
	struct usertp__kpage_entry recs[USERTP__KPAGE_MAX_RECORDS];
	uint64_t lost;	   /* events lost before the next record, by the counts given */
	bool lost_unknown; /* ...and some whose number is not known */
	bool has_head;	   /* the next record, the merge's key */
	struct usertp__kpage_entry head;
	uint16_t head_id;  /* its id in the file */
	uint64_t head_lost;
	bool head_lost_unknown;
};

/* The page being filled for one CPU of the file. */
struct out_page {
	unsigned char data[USERTP__KPAGE_SIZE];
	bool open;
	struct usertp__kpage k; /* its entries (on data) */
	uint64_t events;
	uint64_t lost;	  /* marked on this page */
	bool lost_unknown;
};

struct merge {
	const struct usertp__merge_input *in;
	struct usertp__merge_stats *stats;
	struct usertp__dat_out *o;
	struct usertp__ids ids; /* the file's events */
	char **formats;		/* their texts, with the file's ids */
	struct id_map **maps; /* per source, sorted by from */
	unsigned int *nr_maps;
	/* Per source, by declared id up to its highest: the file's id + 1 (0: not declared). */
	uint32_t **to_id;
	unsigned int *nr_to_id;
	bool *warned_id;      /* per source */
	struct reader *readers;
	struct out_page page;
	unsigned int cpu;
	uint64_t last_ts; /* of the CPU's last record */
	/* Counts of pages put since the output last reached the file: stats once written. */
	unsigned int nr_pending;
	uint64_t pending_events[PENDING_PAGES + 1], pending_lost[PENDING_PAGES + 1];
	uint64_t pending_start; /* file offset of the first of them */
};

static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warn(const char *fmt, ...)
{
	va_list ap;

	fputs("usertp: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static const char *source_name(const struct merge *m, unsigned int i, char *buf, size_t size)
{
	if (m->in->sources[i].name)
		return m->in->sources[i].name;
	snprintf(buf, size, "source %u", i);
	return buf;
}

static int cmp_map(const void *a, const void *b)
{
	const struct id_map *x = a, *y = b;

	return (x->from > y->from) - (x->from < y->from);
}

static const struct id_map *map_find(const struct merge *m, unsigned int src, uint16_t id)
{
	struct id_map key = { id, 0 };

	return bsearch(&key, m->maps[src], m->nr_maps[src], sizeof(key), cmp_map);
}

/* The file's id of source @src's declared @id, by the table: false if it was not declared. */
static bool file_id(const struct merge *m, unsigned int src, uint16_t id, uint16_t *to)
{
	uint32_t v = id < m->nr_to_id[src] ? m->to_id[src][id] : 0;

	*to = (uint16_t)(v - 1);
	return v != 0;
}

/* Map one declared event of source @s to a file event, adding it if it is new. */
static int add_event(struct merge *m, unsigned int s, const struct usertp__merge_event *ev)
{
	char name[64];
	bool added;
	int i;

	if (map_find(m, s, (uint16_t)ev->id) && ev->id <= USERTP__IDS_MAX) {
		warn("%s: event id %u declared twice; the second is ignored",
		     source_name(m, s, name, sizeof(name)), ev->id);
		return 0;
	}
	i = usertp__ids_add(&m->ids, ev->system, ev->format, ev->id, &added);
	if (i == -EINVAL) {
		warn("%s: event id %u has no usable format text; its records are left out",
		     source_name(m, s, name, sizeof(name)), ev->id);
		return 0;
	}
	if (i < 0)
		return i;
	/* The file event's index for now: its id once all are known. */
	m->maps[s][m->nr_maps[s]++] = (struct id_map){ (uint16_t)ev->id, (uint16_t)i };
	qsort(m->maps[s], m->nr_maps[s], sizeof(struct id_map), cmp_map);
	return 0;
}

static int build_events(struct merge *m, struct usertp__dat_event **out)
{
	const struct usertp__merge_input *in = m->in;
	unsigned int s, i;
	int ret;

	m->maps = calloc(in->nr_sources + 1, sizeof(*m->maps));
	m->nr_maps = calloc(in->nr_sources + 1, sizeof(*m->nr_maps));
	if (!m->maps || !m->nr_maps)
		return -ENOMEM;
	for (s = 0; s < in->nr_sources; s++) {
		m->maps[s] = calloc(in->sources[s].nr_events + 1, sizeof(**m->maps));
		if (!m->maps[s])
			return -ENOMEM;
		for (i = 0; i < in->sources[s].nr_events; i++) {
			ret = add_event(m, s, &in->sources[s].events[i]);
			if (ret)
				return ret;
		}
	}
	usertp__ids_assign(&m->ids);
	m->to_id = calloc(in->nr_sources + 1, sizeof(*m->to_id));
	m->nr_to_id = calloc(in->nr_sources + 1, sizeof(*m->nr_to_id));
	if (!m->to_id || !m->nr_to_id)
		return -ENOMEM;
	for (s = 0; s < in->nr_sources; s++) {
		for (i = 0; i < m->nr_maps[s]; i++)
			m->maps[s][i].to = (uint16_t)m->ids.events[m->maps[s][i].to].id;
		/* (Sorted by from: the last is the highest.) */
		m->nr_to_id[s] = m->nr_maps[s] ? m->maps[s][m->nr_maps[s] - 1].from + 1u : 0;
		m->to_id[s] = calloc(m->nr_to_id[s] + 1, sizeof(**m->to_id));
		if (!m->to_id[s])
			return -ENOMEM;
		for (i = 0; i < m->nr_maps[s]; i++)
			m->to_id[s][m->maps[s][i].from] = m->maps[s][i].to + 1u;
	}
	m->formats = calloc(m->ids.nr + 1, sizeof(*m->formats));
	*out = calloc(m->ids.nr + 1, sizeof(**out));
	if (!m->formats || !*out)
		return -ENOMEM;
	for (i = 0; i < m->ids.nr; i++) {
		m->formats[i] = usertp__ids_format(&m->ids, i);
		if (!m->formats[i])
			return -ENOMEM;
		(*out)[i] = (struct usertp__dat_event){ m->ids.events[i].system, m->formats[i] };
	}
	return 0;
}

/*
 * Read the spool's next page (from what was read ahead, READ_AHEAD bytes at a time).
 * Return: 1, 0 at its end, -1 when it cannot be read to the end.
 */
static int read_page(struct reader *r, const char *name)
{
	ssize_t n = 0;

	if (r->ahead_len - r->ahead_pos < USERTP__KPAGE_SIZE) {
		size_t got = r->ahead_len - r->ahead_pos;

		/* A partial page left: moved to the front, the rest read after it. */
		memmove(r->ahead, r->ahead + r->ahead_pos, got);
		r->ahead_pos = 0;
		/* Pages given back (a hole: usertp_session_set_dat_limit()) are not read. */
		if (!got && !r->use_read) {
			off_t data = lseek(r->fd, (off_t)r->off, SEEK_DATA);

			if (data > (off_t)r->off)
				r->off = (uint64_t)data / USERTP__KPAGE_SIZE * USERTP__KPAGE_SIZE;
		}
		while (got < READ_AHEAD) {
			if (!r->use_read) {
				uint64_t left = r->end - (r->off + got);

				if (r->off + got >= r->end) {
					n = 0;
					break;
				}
				n = pread(r->fd, r->ahead + got,
					  left < READ_AHEAD - got ? (size_t)left : READ_AHEAD - got,
					  (off_t)(r->off + got));
				if (n < 0 && errno == ESPIPE && !r->off && !got) {
					r->use_read = true;
					continue;
				}
			} else {
				n = read(r->fd, r->ahead + got, READ_AHEAD - got);
			}
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			got += (size_t)n;
		}
		r->ahead_len = got;
		/* (r->off stays the spool offset of ahead[0] until pages are taken.) */
	}
	if (r->ahead_len - r->ahead_pos >= USERTP__KPAGE_SIZE) {
		memcpy(r->page.data, r->ahead + r->ahead_pos, USERTP__KPAGE_SIZE);
		r->ahead_pos += USERTP__KPAGE_SIZE;
		r->off += USERTP__KPAGE_SIZE;
		if (r->ahead_pos == r->ahead_len) {
			r->ahead_pos = r->ahead_len = 0;
		} else {
			/* The offset of what is left: pread goes on from there. */
		}
		/* In steps, not a system call per page. */
		if (r->release && r->off - r->released >= SPOOL_RELEASE_STEP) {
			fallocate(r->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)r->released,
				  (off_t)(r->off - r->released));
			r->released = r->off;
		}
		return 1;
	}
	if (n == 0 && r->ahead_len == r->ahead_pos)
		return 0;
	warn("%s, CPU %u: %s at spool offset %" PRIu64 "; the rest of its data is left out", name,
	     r->cpu, n < 0 ? strerror(errno) : "a page cut short", r->off);
	return -1;
}

/* A page (or the rest of a spool) that cannot be read: its events count as lost. */
static void bad_page(struct merge *m, struct reader *r)
{
	m->stats->bad_pages++;
	r->lost_unknown = true;
}

/*
 * Check a page and set its records up for reading: its commit word (size and loss flags), then
 * every entry, walked once, so that a page is either read whole or skipped whole.
 */
static bool load_page(struct merge *m, struct reader *r, const char *name)
{
	uint64_t lost;
	int n;

	if (!usertp__kpage_header(r->page.data, &r->page.used, &lost))
		goto bad;
	n = usertp__kpage_records(r->page.data, r->page.used, r->recs, USERTP__KPAGE_MAX_RECORDS);
	if (n < 0)
		goto bad;
	r->nr_recs = (unsigned int)n;
	r->next_rec = 0;
	if (lost == USERTP__KPAGE_LOST_UNKNOWN)
		r->lost_unknown = true;
	else
		r->lost += lost;
	return true;
bad:
	if (!r->warned_page)
		warn("%s, CPU %u: malformed page at spool offset %" PRIu64
		     " skipped, marked as lost events (later ones are not reported)",
		     name, r->cpu, r->off - USERTP__KPAGE_SIZE);
	r->warned_page = true;
	bad_page(m, r);
	return false;
}

/* The reader's next record with a declared id, and the losses before it, as its head. */
static void reader_advance(struct merge *m, struct reader *r)
{
	char buf[64];
	const char *name = source_name(m, r->index, buf, sizeof(buf));
	struct usertp__kpage_entry e;
	uint16_t id = 0, to;

	r->has_head = false;
	while (r->fd >= 0) {
		if (!r->in_page) {
			int ret = read_page(r, name);

			if (ret <= 0) {
				if (ret < 0)
					bad_page(m, r);
				r->fd = -1;
				break;
			}
			r->in_page = load_page(m, r, name);
			continue;
		}
		if (r->next_rec == r->nr_recs) {
			r->in_page = false;
			continue;
		}
		e = r->recs[r->next_rec++];
		if (e.size >= 2)
			memcpy(&id, e.data, 2);
		/* Shorter than the common fields: not an event either. */
		if (e.size < 8 || !file_id(m, r->index, id, &to)) {
			m->stats->dropped++;
			if (!m->warned_id[r->index])
				warn("%s: records of undeclared event id %u left out (later ones are not reported)",
				     name, id);
			m->warned_id[r->index] = true;
			continue;
		}
		r->head = e;
		r->head_id = to;
		r->head_lost = r->lost;
		r->head_lost_unknown = r->lost_unknown;
		r->lost = 0;
		r->lost_unknown = false;
		r->has_head = true;
		return;
	}
}

/* Count what reached the file: the first @n pages put since the last time. */
static void pending_commit(struct merge *m, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		m->stats->events[m->cpu] += m->pending_events[i];
		m->stats->lost[m->cpu] += m->pending_lost[i];
	}
	m->stats->pages += n;
	m->nr_pending = 0;
	m->pending_start = m->o->written;
}

static void page_open(struct out_page *p, uint64_t ts)
{
	p->open = true;
	usertp__kpage_open(&p->k, p->data, ts);
}

/* Put page @data (@used bytes of entries, @events records, losses marked) into the file. */
static void page_put(struct merge *m, const unsigned char *data, uint32_t used, uint64_t events,
		     uint64_t lost, bool lost_unknown)
{
	usertp__dat_put_page(m->o, data, used, lost_unknown ? USERTP__KPAGE_LOST_UNKNOWN : lost);
	if (m->nr_pending <= PENDING_PAGES) {
		m->pending_events[m->nr_pending] = events;
		m->pending_lost[m->nr_pending] = lost_unknown ? 0 : lost; /* as marked */
		m->nr_pending++;
	}
	/* The output buffer holds whole pages: when it is empty they are all in the file. */
	if (!m->o->len && !m->o->error)
		pending_commit(m, m->nr_pending);
}

static void page_close(struct merge *m)
{
	struct out_page *p = &m->page;

	if (!p->open)
		return;
	page_put(m, p->data, p->k.used, p->events, p->lost, p->lost_unknown);
	p->open = false;
	p->events = 0;
	p->lost = 0;
	p->lost_unknown = false;
}

/* Room for entries: a known lost count is stored after them. */
static uint32_t page_room(const struct out_page *p)
{
	return USERTP__KPAGE_DATA - (p->lost && !p->lost_unknown ? 8u : 0u);
}

/* Append the reader's head record to the CPU's page, with its losses marked before it. */
static void emit(struct merge *m, const struct reader *r)
{
	struct out_page *p = &m->page;
	uint64_t ts = r->head.ts > m->last_ts ? r->head.ts : m->last_ts;
	unsigned char *at;

	if (r->head_lost || r->head_lost_unknown) {
		/* As the kernel marks them: on the page that starts after the loss. */
		page_close(m);
		p->lost += r->head_lost;
		p->lost_unknown |= r->head_lost_unknown;
	}
	at = p->open ? usertp__kpage_add(&p->k, ts, r->head.size, page_room(p)) : NULL;
	if (!at) {
		page_close(m);
		page_open(p, ts);
		at = usertp__kpage_add(&p->k, ts, r->head.size, page_room(p));
	}
	if (!at) {
		/* The count does not fit beside this record: the flag alone. */
		p->lost_unknown = true;
		at = usertp__kpage_add(&p->k, ts, r->head.size, page_room(p));
	}
	if (!at)
		return; /* (no record is longer than a page holds: the reader checked) */
	memcpy(at, r->head.data, r->head.size);
	memcpy(at, &r->head_id, 2); /* common_type */
	p->events++;
	m->last_ts = ts;
}

/* emit_page(): the most bytes left unused at the end of the page it closes early. */
#define PASS_WASTE_MAX 512u

/*
 * The reader's page as it is, when its head is the page's first record and nothing else can
 * go between its records: no loss to mark before it, every record of a declared event, all
 * of them (and the page's own time) not before the last one written, in order, and strictly
 * before every other source's next record; and the page being filled is empty or nearly full
 * (it is closed first: a program's pages that interleave with others' now and then would
 * otherwise leave half-empty pages between theirs).  Its records get the file's ids in place;
 * nothing else of it is rewritten (the programs' writer and the merge lay records out alike:
 * ring-buffer.h).  Return: whether it went to the file so (then the reader is past it).
 */
static bool emit_page(struct merge *m, struct reader *r)
{
	const struct usertp__kpage_entry *last = &r->recs[r->nr_recs - 1];
	struct out_page *p = &m->page;
	uint16_t id = 0, to[USERTP__KPAGE_MAX_RECORDS];
	uint64_t page_ts;

	memcpy(&page_ts, r->page.data, 8);
	if (r->next_rec != 1 || r->head.data != r->recs[0].data || r->head_lost ||
	    r->head_lost_unknown || page_ts < m->last_ts || last->ts < r->head.ts)
		return false;
	/* The page being filled is closed before it: only when that wastes little. */
	if (p->open && p->events && page_room(p) - p->k.used >= PASS_WASTE_MAX)
		return false;
	for (unsigned int s = 0; s < m->in->nr_sources; s++)
		if (&m->readers[s] != r && m->readers[s].has_head && m->readers[s].head.ts <= last->ts)
			return false;
	to[0] = r->head_id;
	for (unsigned int i = 1; i < r->nr_recs; i++) {
		if (r->recs[i].size >= 2)
			memcpy(&id, r->recs[i].data, 2);
		if (r->recs[i].size < 8 || !file_id(m, r->index, id, &to[i]) ||
		    r->recs[i].ts < r->recs[i - 1].ts)
			return false;
	}
	for (unsigned int i = 0; i < r->nr_recs; i++)
		memcpy((unsigned char *)r->recs[i].data, &to[i], 2); /* common_type */
	page_close(m);
	page_put(m, r->page.data, r->page.used, r->nr_recs, 0, false);
	m->last_ts = last->ts;
	r->next_rec = r->nr_recs;
	return true;
}

/* All the records of one CPU, oldest first; stops early at a write error. */
static void merge_cpu(struct merge *m, unsigned int cpu)
{
	const struct usertp__merge_input *in = m->in;
	struct out_page *p = &m->page;
	unsigned int s;

	m->cpu = cpu;
	m->last_ts = 0;
	for (s = 0; s < in->nr_sources; s++) {
		const struct usertp__merge_source *src = &in->sources[s];
		struct reader *r = &m->readers[s];

		memset(r, 0, offsetof(struct reader, page));
		r->index = s;
		r->cpu = cpu;
		r->fd = cpu < src->nr_cpus && src->cpu_fd ? src->cpu_fd[cpu] : -1;
		r->off = r->released = r->fd >= 0 && src->cpu_base ? src->cpu_base[cpu] : 0;
		r->end = r->fd >= 0 && src->cpu_len ? r->off + src->cpu_len[cpu] : UINT64_MAX;
		r->release = m->in->release_spools;
		reader_advance(m, r);
	}
	for (;;) {
		struct reader *next = NULL;

		/* Strictly older only: equal timestamps keep the sources' order. */
		for (s = 0; s < in->nr_sources; s++)
			if (m->readers[s].has_head &&
			    (!next || m->readers[s].head.ts < next->head.ts))
				next = &m->readers[s];
		if (!next)
			break;
		if (!emit_page(m, next))
			emit(m, next);
		if (m->o->error)
			return;
		reader_advance(m, next);
	}
	/* Losses after a source's last record: marked on an empty page at the end. */
	for (s = 0; s < in->nr_sources; s++) {
		if (!m->readers[s].lost && !m->readers[s].lost_unknown)
			continue;
		if (p->events)
			page_close(m);
		p->lost += m->readers[s].lost;
		p->lost_unknown |= m->readers[s].lost_unknown;
	}
	if ((p->lost || p->lost_unknown) && !p->open)
		page_open(p, m->last_ts);
	page_close(m);
}

/* Has source @s pages on any CPU? */
static bool source_has_pages(const struct usertp__merge_source *src)
{
	struct stat st;

	for (unsigned int cpu = 0; src->cpu_fd && cpu < src->nr_cpus; cpu++) {
		if (src->cpu_fd[cpu] < 0)
			continue;
		if (src->cpu_len ? src->cpu_len[cpu] != 0
				 : fstat(src->cpu_fd[cpu], &st) || st.st_size != 0)
			return true;
	}
	return false;
}

/* Can source in->adopt - 1's pages be the file's as they are (usertp__merge_input)? */
static bool adoptable(const struct merge *m)
{
	const struct usertp__merge_input *in = m->in;
	unsigned int a = in->adopt - 1;
	const struct usertp__merge_source *src = &in->sources[a];

	if (a >= in->nr_sources || in->file_version == 7 || in->compress || !src->cpu_base ||
	    !src->cpu_len || !src->cpu_events || !src->cpu_lost)
		return false;
	for (unsigned int s = 0; s < in->nr_sources; s++)
		if (s != a && source_has_pages(&in->sources[s]))
			return false;
	/* Every id it declared is the file's same id: its records need no new common_type. */
	for (unsigned int i = 0; i < m->nr_maps[a]; i++)
		if (m->maps[a][i].from != m->maps[a][i].to)
			return false;
	return true;
}

/*
 * CPU @cpu's pages of the adopted source, moved to where the file is (*@shift: how far the
 * moves before have brought its pages down).  Return: 0, or a negative errno.
 */
static int adopt_cpu(struct merge *m, int fd, unsigned int cpu, uint64_t *shift)
{
	const struct usertp__merge_source *src = &m->in->sources[m->in->adopt - 1];
	uint64_t at, len = cpu < src->nr_cpus ? src->cpu_len[cpu] : 0;

	usertp__dat_flush(m->o);
	if (m->o->error)
		return -m->o->error;
	if (!len)
		return 0;
	at = src->cpu_base[cpu] - *shift;
	if (at < m->o->pos || m->o->pos % USERTP__KPAGE_SIZE || len % USERTP__KPAGE_SIZE)
		return -EINVAL;
	if (at > m->o->pos && fallocate(fd, FALLOC_FL_COLLAPSE_RANGE, (off_t)m->o->pos,
					(off_t)(at - m->o->pos)))
		return -errno;
	*shift += at - m->o->pos;
	m->o->pos += len;
	m->o->written += len;
	if (lseek(fd, (off_t)m->o->pos, SEEK_SET) < 0)
		return -errno;
	m->stats->events[cpu] += src->cpu_events[cpu];
	m->stats->lost[cpu] += src->cpu_lost[cpu];
	m->stats->pages += len / USERTP__KPAGE_SIZE;
	return 0;
}

/* Say where CPU @cpu's data is, in the table of the file's header. */
static int set_table(int fd, uint64_t table, unsigned int cpu, uint64_t offset, uint64_t size)
{
	uint64_t entry[2] = { offset, size };
	ssize_t n = pwrite(fd, entry, sizeof(entry), (off_t)(table + 16ull * cpu));

	return n == (ssize_t)sizeof(entry) ? 0 : n < 0 ? -errno : -EIO;
}

/*
 * After a failed write at CPU @cpu, whose data starts at @cpu_start: keep the whole pages
 * written (compressed: the whole chunks), say so in the version 6 table (@table, 0: version 7),
 * cut the file after them.  Return: the file's new size.
 */
static uint64_t keep_whole_pages(struct merge *m, int fd, uint64_t table, uint64_t meta_end,
				 uint64_t data_start, unsigned int cpu, uint64_t cpu_start)
{
	uint64_t written = m->o->written, keep, whole;

	if (written < data_start) {
		/* In the header: whole, it is a file without data; otherwise nothing is kept. */
		keep = written >= meta_end ? meta_end : 0;
	} else {
		whole = m->o->chunker ? 0 : (written - m->pending_start) / USERTP__KPAGE_SIZE;
		keep = m->pending_start + whole * USERTP__KPAGE_SIZE;
		pending_commit(m, (unsigned int)(whole < m->nr_pending ? whole : m->nr_pending));
		if (table && keep > cpu_start && set_table(fd, table, cpu, cpu_start, keep - cpu_start))
			keep = cpu_start; /* the table cannot say so: this CPU's pages go */
	}
	if (keep < written && ftruncate(fd, (off_t)keep))
		warn("ftruncate: %s: the file ends in a partial page", strerror(errno));
	return keep;
}

static void say(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void say(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Each source's read-ahead buffer.  Return: 0 or -ENOMEM. */
static int readers_alloc(struct merge *m)
{
	for (unsigned int i = 0; i < m->in->nr_sources; i++)
		if (!(m->readers[i].ahead = malloc(READ_AHEAD)))
			return -ENOMEM;
	return 0;
}

static void merge_free(struct merge *m, struct usertp__dat_event *dat_events)
{
	unsigned int i;

	for (i = 0; m->readers && i < m->in->nr_sources; i++)
		free(m->readers[i].ahead);
	for (i = 0; m->formats && i < m->ids.nr; i++)
		free(m->formats[i]);
	for (i = 0; m->maps && i < m->in->nr_sources; i++)
		free(m->maps[i]);
	for (i = 0; m->to_id && i < m->in->nr_sources; i++)
		free(m->to_id[i]);
	free(m->to_id);
	free(m->nr_to_id);
	free(m->formats);
	usertp__ids_free(&m->ids);
	free(m->maps);
	free(m->nr_maps);
	free(m->warned_id);
	free(m->readers);
	free(m->o);
	free(dat_events);
}

/*
 * The CPUSTAT options' final counts: each CPU's records in the file, overwritten, and the rest
 * of what was fired as dropped.
 */
static void final_cpu_stats(struct merge *m, struct usertp__dat_cpu_stats *out)
{
	const struct usertp__merge_input *in = m->in;

	for (unsigned int cpu = 0; cpu < in->nr_cpus; cpu++) {
		uint64_t read = m->stats->events[cpu], overrun = in->overrun[cpu];
		uint64_t rest = in->fired[cpu] > read ? in->fired[cpu] - read : 0;

		out[cpu] = (struct usertp__dat_cpu_stats){ read, overrun < rest ? overrun : rest, 0 };
		out[cpu].dropped = rest - out[cpu].overrun;
		m->stats->file_lost[cpu] = rest;
	}
}

/* Version 6: the CPUSTAT options written in place over the header's (the same length). */
static int put_cpu_stats(struct merge *m, int fd, uint64_t at, struct usertp__dat_cpu_stats *st)
{
	final_cpu_stats(m, st);
	for (unsigned int cpu = 0; cpu < m->in->nr_cpus; cpu++) {
		unsigned char opt[USERTP__DAT_CPUSTAT_MAX];
		size_t len = usertp__dat_cpustat_option(opt, cpu, &st[cpu]);

		if (pwrite(fd, opt, len, (off_t)at) != (ssize_t)len)
			return -errno;
		at += len;
	}
	return 0;
}

int usertp__merge_write(int out_fd, const struct usertp__merge_input *in,
		       struct usertp__merge_stats *stats, char *err, size_t errlen)
{
	struct usertp__dat_cpu_stats *placeholder = NULL;
	struct merge m = { .in = in };
	struct usertp__dat_event *dat_events = NULL;
	struct usertp__dat_source src;
	struct usertp__dat7 *v7 = NULL;
	uint64_t table = 0, meta_end, data_start, cpu_start = 0, shift = 0;
	unsigned int cpu = 0, s;
	int ret;

	say(err, errlen, "%s", "");
	if (stats)
		memset(stats, 0, sizeof(*stats));
	for (s = 0; s < in->nr_sources; s++)
		if (in->sources[s].nr_cpus > in->nr_cpus)
			break;
	if (!in->nr_cpus || in->nr_cpus > USERTP_MERGE_MAX_CPUS || s < in->nr_sources) {
		say(err, errlen, "cannot merge: %u CPUs (1 to %u), source %u has %u", in->nr_cpus,
		    USERTP_MERGE_MAX_CPUS, s, s < in->nr_sources ? in->sources[s].nr_cpus : 0);
		return -EINVAL;
	}
	m.stats = stats ? stats : calloc(1, sizeof(*m.stats));
	m.o = malloc(sizeof(*m.o));
	m.readers = calloc(in->nr_sources + 1, sizeof(*m.readers));
	m.warned_id = calloc(in->nr_sources + 1, sizeof(*m.warned_id));
	ret = m.stats && m.o && m.readers && m.warned_id && !readers_alloc(&m)
		      ? build_events(&m, &dat_events) : -ENOMEM;
	if (ret) {
		say(err, errlen, "%s", ret == -E2BIG ? "more than 65535 distinct events"
						      : "out of memory");
		goto out;
	}

	if (in->adopt && !adoptable(&m)) {
		ret = -EXDEV;
		say(err, errlen, "%s", "the pages are not the file's as they are");
		goto out;
	}
	if (in->fired && in->overrun && !(placeholder = calloc(in->nr_cpus, sizeof(*placeholder)))) {
		ret = -ENOMEM;
		say(err, errlen, "%s", "out of memory");
		goto out;
	}
	src = (struct usertp__dat_source){ .events = dat_events,
					   .nr_events = m.ids.nr,
					   .cmdlines = in->cmdlines,
					   .cmdlines_len = in->cmdlines_len,
					   .raw_clock = in->raw_clock,
					   .tsc2nsec = in->tsc2nsec,
					   .date_offset_us = in->date_offset_us,
					   .cpu_stats = placeholder,
					   .kallsyms = in->kallsyms,
					   .printk_formats = in->printk_formats,
					   .kallsyms_len = in->kallsyms_len,
					   .printk_formats_len = in->printk_formats_len };
	usertp__dat_out_init(m.o, out_fd);
	if (in->file_version == 7) {
		const char *why;

		if (!(v7 = usertp__dat7_begin(m.o, &src, in->nr_cpus, in->compress, &why))) {
			ret = in->compress && !usertp__zstd_available() ? -ENOTSUP : -ENOMEM;
			say(err, errlen, "%s", why);
			goto out;
		}
		meta_end = UINT64_MAX; /* (without its options, a version 7 file is nothing) */
	} else {
		table = usertp__dat_put_header(m.o, &src, in->nr_cpus, NULL, NULL);
		meta_end = m.o->pos;
		usertp__dat_put_page_padding(m.o);
	}
	usertp__dat_flush(m.o);
	data_start = m.pending_start = m.o->pos;
	for (cpu = 0; cpu < in->nr_cpus && !m.o->error; cpu++) {
		if (v7) {
			usertp__dat7_cpu_begin(v7, cpu);
			if (!m.o->error)
				m.pending_start = m.o->written; /* (after the padding) */
		}
		cpu_start = m.o->pos;
		if (in->adopt) {
			ret = adopt_cpu(&m, out_fd, cpu, &shift);
			if (ret) {
				say(err, errlen, "moving CPU %u's pages in place: %s", cpu, strerror(-ret));
				goto out;
			}
			m.pending_start = m.o->pos;
		} else {
			merge_cpu(&m, cpu);
		}
		usertp__dat_flush(m.o);
		if (m.o->error)
			break;
		pending_commit(&m, m.nr_pending);
		if (v7) {
			usertp__dat7_cpu_end(v7, cpu, m.o->pos);
		} else if (m.o->pos > cpu_start) {
			ret = set_table(out_fd, table, cpu, cpu_start, m.o->pos - cpu_start);
			if (ret) {
				say(err, errlen, "pwrite of the CPU table: %s", strerror(-ret));
				goto out;
			}
		}
	}
	if (m.o->error) {
		uint64_t at = m.o->written;
		uint64_t keep = keep_whole_pages(&m, out_fd, table, meta_end, data_start, cpu, cpu_start);
		bool no_options = false;

		ret = -m.o->error;
		if (v7 && keep) {
			/* The options (before the data) set in place for what is kept. */
			usertp__dat7_cpu_end(v7, cpu, keep);
			if (placeholder)
				final_cpu_stats(&m, placeholder);
			no_options = usertp__dat7_finish(v7, keep, placeholder) != 0;
			keep = no_options ? 0 : keep;
			if (no_options) {
				/* Nothing is in the file after all. */
				memset(m.stats->events, 0, sizeof(m.stats->events));
				memset(m.stats->lost, 0, sizeof(m.stats->lost));
				m.stats->pages = 0;
				if (ftruncate(out_fd, 0))
					warn("ftruncate: %s", strerror(errno));
			}
		}
		if (keep)
			say(err, errlen,
			    "write: %s at offset %" PRIu64 "; the file keeps %" PRIu64
			    " whole pages of events (%" PRIu64 " bytes)",
			    strerror(-ret), at, m.stats->pages, keep);
		else
			say(err, errlen, "write: %s at offset %" PRIu64 ", %s: no trace written",
			    strerror(-ret), at,
			    no_options ? "and the file's options could not be set" : "in the header");
		m.stats->size = keep;
	} else if (v7) {
		if (placeholder)
			final_cpu_stats(&m, placeholder);
		ret = usertp__dat7_finish(v7, m.o->pos, placeholder);
		if (ret)
			say(err, errlen, "write of the options: %s", strerror(-ret));
		m.stats->size = m.o->pos;
	} else {
		m.stats->size = m.o->pos;
		/* Adopted: what is past the last CPU's pages (empty regions) goes. */
		if (in->adopt && ftruncate(out_fd, (off_t)m.o->pos)) {
			ret = -errno;
			say(err, errlen, "ftruncate: %s", strerror(errno));
		}
	}
	/* (Also after a failed write: the header, with its CPUSTAT, is there.) */
	if (!v7 && m.o->cpustat_at && m.stats->size > m.o->cpustat_at) {
		int err_stats = put_cpu_stats(&m, out_fd, m.o->cpustat_at, placeholder);

		if (err_stats && !ret) {
			ret = err_stats;
			say(err, errlen, "pwrite of the CPU stats: %s", strerror(-ret));
		}
	}
out:
	usertp__dat7_free(v7);
	free(placeholder);
	if (!stats)
		free(m.stats);
	merge_free(&m, dat_events);
	return ret;
}
