/* SPDX-License-Identifier: MIT */
/*
 * trace-text.c - a ring-buffer snapshot as the kernel's "trace" file (its text is
 * src/common/trace-lines.c's, the mount's too): its header, then one line per event, the CPUs
 * merged in timestamp order.
 *
 * Lost events are shown where they happened, as trace_pipe shows them: "CPU:N [LOST M EVENTS]"
 * before the first event of a CPU whose oldest events were overwritten, before a page that
 * follows dropped events, and at the end for events dropped after the last one.
 *
 * No malloc and no stdio: this also runs in fatal-signal handlers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "io.h"
#include "trace-lines.h"
#include "trace-text.h"
#include "tsc2nsec.h"

struct out {
	int fd;
	int error;
	size_t len;
	char buf[16384];
};

static void out_flush(struct out *o)
{
	if (!o->error)
		o->error = -usertp__write_all(o->fd, o->buf, o->len, NULL);
	o->len = 0;
}

/* The text's callback (trace-lines.h): into the buffer, written out as it fills. */
static void out_write(void *arg, const char *text, size_t len)
{
	struct out *o = arg;

	while (len) {
		size_t n = sizeof(o->buf) - o->len < len ? sizeof(o->buf) - o->len : len;

		memcpy(o->buf + o->len, text, n);
		o->len += n;
		text += n;
		len -= n;
		if (o->len == sizeof(o->buf))
			out_flush(o);
	}
}

static void write_header(const struct usertp__tlines *t, const struct usertp__rb_snapshot *snap,
			 int nr_online)
{
	uint64_t entries = 0, written = 0;
	unsigned int i;

	for (i = 0; i < snap->nr_cpus; i++) {
		entries += snap->cpus[i].entries;
		written += snap->cpus[i].entries + snap->cpus[i].overrun;
	}
	usertp__tlines_header(t, entries, written, nr_online);
}

/* Where one CPU's merge stands. */
struct cursor {
	const struct usertp__rb_cpu_snapshot *cpu;
	unsigned int page;
	struct usertp__kpage_iter it;
	struct usertp__kpage_entry entry;
	bool have;	  /* entry is the CPU's next event */
	bool page_start;  /* entry is the first of its page */
	uint64_t lost_shown;
};

static void cursor_advance(struct cursor *c)
{
	c->have = false;
	c->page_start = false;
	while (c->page < c->cpu->nr_pages) {
		if (!c->it.page) {
			usertp__kpage_iter_init(&c->it, c->cpu->pages[c->page].data, c->cpu->pages[c->page].used);
			c->page_start = true;
		}
		if (usertp__kpage_iter_next(&c->it, &c->entry) == 1) {
			c->have = true;
			return;
		}
		c->page++;
		c->it.page = NULL;
	}
}

/* Thread names found for this output, so that /proc is read once per thread, not per line. */
struct comm_cache {
	int tid[256];
	char comm[256][32];
};

static const char *comm_lookup(struct comm_cache *cache, int tid)
{
	unsigned int i = (unsigned int)tid % 256;

	if (cache->tid[i] != tid) {
		if (!usertp__comm_find(tid, cache->comm[i], sizeof(cache->comm[i])))
			strcpy(cache->comm[i], "<...>");
		cache->tid[i] = tid;
	}
	return cache->comm[i];
}

static void write_event(const struct usertp__tlines *t, const struct usertp__kpage_entry *e,
			unsigned int cpu, const struct usertp__text_source *src,
			struct comm_cache *cache)
{
	const struct usertp_trace_entry *ent = (const void *)e->data;
	const struct usertp_event *ev = NULL;
	const char *comm = "<...>", *name = "UNKNOWN";
	char text[4096];
	bool truncated;
	int pid = 0;

	if (e->size >= sizeof(*ent)) {
		pid = ent->pid;
		ev = src->lookup(ent->type, src->arg);
		comm = pid == 0 ? "<idle>" : comm_lookup(cache, pid);
	}
	if (ev) {
		name = usertp__tlines_named(usertp_event_system(ev)) ? usertp_event_name(ev) : NULL;
		if (usertp__event_print_buf(ev, e->data, e->size, text, sizeof(text), &truncated) < 0)
			snprintf(text, sizeof(text), "[BAD RECORD]");
	} else {
		snprintf(text, sizeof(text), "[UNKNOWN EVENT type=%u]",
			 e->size >= sizeof(*ent) ? ent->type : 0u);
	}
	usertp__tlines_line(t, comm, pid, pid, cpu, NULL,
			    src->tsc2nsec ? usertp__tsc2nsec_apply(src->tsc2nsec, e->ts) : e->ts,
			    src->raw_clock && !src->tsc2nsec, name, text, false);
}

int usertp__trace_text_write(int fd, const struct usertp__rb_snapshot *snap,
			     const struct usertp__text_source *src)
{
	/*
	 * Not on the stack of a signal handler (16 KiB), nor in thread-local storage (which
	 * every thread would carry, and which would keep libusertp from being dlopen()ed):
	 * the recorder writes its output once per process, so one copy is enough.
	 */
	static struct out o;
	static struct comm_cache cache;
	const struct usertp__tlines t = { out_write, &o, false, true };
	struct cursor cursors[64];
	unsigned int i, n = snap->nr_cpus < 64 ? snap->nr_cpus : 64;

	o.fd = fd;
	o.error = 0;
	o.len = 0;
	memset(cache.tid, 0, sizeof(cache.tid)); /* tid 0 is <idle>, never looked up */
	write_header(&t, snap, src->nr_online);
	for (i = 0; i < n; i++) {
		memset(&cursors[i], 0, sizeof(cursors[i]));
		cursors[i].cpu = &snap->cpus[i];
		cursor_advance(&cursors[i]);
		/* Overwritten events were the oldest: before everything else of this CPU. */
		if (cursors[i].cpu->overrun && cursors[i].have)
			usertp__tlines_lost(&t, i, cursors[i].cpu->overrun);
	}
	for (;;) {
		struct cursor *best = NULL;
		const struct usertp__rb_page_copy *page;

		for (i = 0; i < n; i++)
			if (cursors[i].have && (!best || cursors[i].entry.ts < best->entry.ts))
				best = &cursors[i];
		if (!best)
			break;
		page = &best->cpu->pages[best->page];
		if (best->page_start && page->lost_before) {
			usertp__tlines_lost(&t, (unsigned int)(best - cursors), page->lost_before);
			best->lost_shown += page->lost_before;
		}
		write_event(&t, &best->entry, (unsigned int)(best - cursors), src, &cache);
		cursor_advance(best);
	}
	/* Dropped after the last event each CPU kept. */
	for (i = 0; i < n; i++) {
		const struct usertp__rb_cpu_snapshot *c = cursors[i].cpu;
		uint64_t before = cursors[i].lost_shown;

		if (c->dropped > before)
			usertp__tlines_lost(&t, i, c->dropped - before);
	}
	out_flush(&o);
	return o.error ? -o.error : 0;
}
