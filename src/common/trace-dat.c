/* SPDX-License-Identifier: MIT */
/*
 * trace-dat.c - trace.dat files, version 6, which trace-cmd, KernelShark and libtracecmd read
 * (trace-cmd's Documentation/trace-cmd/trace-cmd.dat.v6.5.txt describes the layout):
 *
 *	magic, "tracing", "6", endianness, long size, page size
 *	header_page and header_event texts
 *	ftrace formats (usertp_printk()'s bprint and bputs, when recorded), then per system the
 *	format texts of the other recorded events
 *	kallsyms and printk formats (the kernel's, with kernel events; the programs' printk
 *	formats and their call sites' functions, bprint.h), saved
 *	cmdlines ("pid comm" lines)
 *	CPU count, options (trace clock, per-CPU stats), "flyrecord", per CPU (offset, size), the
 *	clock text
 *	padding to a page, then per CPU its pages, exactly in the ring buffer's format
 *
 * Pages that follow lost events carry the kernel's flags in their commit word (bit 31: events
 * were lost before this page; bit 30: their count is stored after the data), so that readers
 * print "[N EVENTS DROPPED]" where it happened.
 *
 * Two writers use these pieces: usertp__trace_dat_write() here, for the embedded recorder (one
 * process's snapshot), and the usertp command's merge of several processes (src/tool/dat-merge.c),
 * which compiles this file too.  Like trace-text.c: no malloc, no stdio, usable from a
 * fatal-signal handler.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "io.h"
#include "kernel-page.h"
#include "trace-dat.h"
#include "tsc2nsec.h"

void usertp__dat_out_init(struct usertp__dat_out *o, int fd)
{
	memset(o, 0, offsetof(struct usertp__dat_out, buf));
	o->fd = fd;
}

static void write_all(struct usertp__dat_out *o, const unsigned char *data, size_t len)
{
	size_t done = 0;

	if (o->fd < 0 || o->error)
		return;
	o->error = -usertp__write_all(o->fd, data, len, &done);
	o->written += done;
}

/* What the buffer holds as one chunk: its header and its compressed bytes, in one write. */
static void write_chunk(struct usertp__dat_out *o)
{
	struct usertp__dat_chunker *z = o->chunker;
	uint32_t raw = (uint32_t)o->len, packed;
	uint64_t before = o->written;

	if (!z->count) {
		uint32_t none = 0; /* the count, set by the owner */

		write_all(o, (const unsigned char *)&none, 4);
	}
	packed = (uint32_t)z->compress(z->ctx, z->dst + 8, z->cap - 8, o->buf, raw);
	if (!packed && !o->error)
		o->error = EIO;
	memcpy(z->dst, &packed, 4);
	memcpy(z->dst + 4, &raw, 4);
	write_all(o, z->dst, 8 + (size_t)packed);
	if (!o->error)
		z->count++;
	/* @pos: the file's offset (a partial chunk counts nothing: the owner cuts it off). */
	o->pos = o->pos - raw + (o->written - before);
}

/* Counts what reached the file, so that a writer can tell which pages are whole after ENOSPC. */
void usertp__dat_flush(struct usertp__dat_out *o)
{
	if (o->chunker && o->len && o->fd >= 0 && !o->error)
		write_chunk(o);
	else
		write_all(o, o->buf, o->len);
	o->len = 0;
}

void usertp__dat_put(struct usertp__dat_out *o, const void *data, size_t size)
{
	const unsigned char *p = data;

	o->pos += size;
	while (size) {
		size_t n = sizeof(o->buf) - o->len < size ? sizeof(o->buf) - o->len : size;

		memcpy(o->buf + o->len, p, n);
		o->len += n;
		p += n;
		size -= n;
		if (o->len == sizeof(o->buf))
			usertp__dat_flush(o);
	}
}

static void put(struct usertp__dat_out *o, const void *data, size_t size)
{
	usertp__dat_put(o, data, size);
}

static void put_u16(struct usertp__dat_out *o, uint16_t v) { put(o, &v, 2); }
static void put_u32(struct usertp__dat_out *o, uint32_t v) { put(o, &v, 4); }
static void put_u64(struct usertp__dat_out *o, uint64_t v) { put(o, &v, 8); }
static void put_str(struct usertp__dat_out *o, const char *s) { put(o, s, strlen(s) + 1); }

static void put_zeros(struct usertp__dat_out *o, uint64_t n)
{
	static const unsigned char zeros[256];

	while (n) {
		size_t k = n < sizeof(zeros) ? (size_t)n : sizeof(zeros);

		put(o, zeros, k);
		n -= k;
	}
}

/* (The page's numbers, in text: kernel-page.h's.) */
_Static_assert(USERTP__KPAGE_HEADER == 16 && USERTP__KPAGE_DATA == 4080, "header_page's text");
const char usertp__dat_header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

const char usertp__dat_header_event[] = "# compressed entry header\n"
				   "\ttype_len    :    5 bits\n"
				   "\ttime_delta  :   27 bits\n"
				   "\tarray       :   32 bits\n"
				   "\n"
				   "\tpadding     : type == 29\n"
				   "\ttime_extend : type == 30\n"
				   "\ttime_stamp : type == 31\n"
				   "\tdata max type_len  == 28\n";

size_t usertp__dat_cpustat_option(unsigned char *buf, unsigned int cpu,
				  const struct usertp__dat_cpu_stats *st)
{
	/*
	 * The kernel's per_cpu/cpuN/stats lines that apply, with the numbers padded to 20
	 * columns so that a writer can put the final counts in place once it knows them.
	 */
	int n = snprintf((char *)buf + 6, USERTP__DAT_CPUSTAT_MAX - 6,
			 "CPU: %u\nentries: 0\noverrun: %-20llu\ncommit overrun: 0\n"
			 "dropped events: %-20llu\nread events: %-20llu\n",
			 cpu, (unsigned long long)st->overrun, (unsigned long long)st->dropped,
			 (unsigned long long)st->read);
	uint16_t id = USERTP__DAT_OPTION_CPUSTAT;
	uint32_t size = (uint32_t)n + 1;

	memcpy(buf, &id, 2);
	memcpy(buf + 2, &size, 4);
	return 6 + size;
}

bool usertp__dat_stat_value(const char *text, size_t len, const char *key, uint64_t *out)
{
	size_t klen = strlen(key);

	for (const char *p = text; p < text + len;) {
		const char *nl = memchr(p, '\n', (size_t)(text + len - p));
		size_t line = nl ? (size_t)(nl - p) : (size_t)(text + len - p);

		if (line > klen + 1 && !memcmp(p, key, klen) && p[klen] == ':') {
			uint64_t v = 0;
			size_t i = klen + 1, digits = 0;

			while (i < line && p[i] == ' ')
				i++;
			for (; i < line && p[i] >= '0' && p[i] <= '9' && digits < 20; i++, digits++) {
				if (v > (UINT64_MAX - (uint64_t)(p[i] - '0')) / 10)
					return false;
				v = v * 10 + (uint64_t)(p[i] - '0');
			}
			if (!digits)
				return false;
			*out = v;
			return true;
		}
		p += line + 1;
	}
	return false;
}

bool usertp__dat_cpustat_parse(const char *text, size_t len, unsigned int *cpu,
			       struct usertp__dat_cpu_stats *st)
{
	uint64_t n;

	if (!usertp__dat_stat_value(text, len, "CPU", &n) || n > 1u << 20)
		return false;
	*cpu = (unsigned int)n;
	st->overrun = st->dropped = st->read = 0;
	usertp__dat_stat_value(text, len, "overrun", &st->overrun);
	usertp__dat_stat_value(text, len, "dropped events", &st->dropped);
	usertp__dat_stat_value(text, len, "read events", &st->read);
	return true;
}

void usertp__dat_put_header_info(struct usertp__dat_out *o, const struct usertp__dat_source *src)
{
	(void)src;
	put(o, "header_page", 12);
	put_u64(o, sizeof(usertp__dat_header_page) - 1);
	put(o, usertp__dat_header_page, sizeof(usertp__dat_header_page) - 1);
	put(o, "header_event", 13);
	put_u64(o, sizeof(usertp__dat_header_event) - 1);
	put(o, usertp__dat_header_event, sizeof(usertp__dat_header_event) - 1);
}

/* Events of system "ftrace" (usertp_printk()'s bprint and bputs) go here, as trace-cmd's. */
static bool is_ftrace(const struct usertp__dat_event *ev)
{
	return !strcmp(ev->system, "ftrace");
}

void usertp__dat_put_ftrace_formats(struct usertp__dat_out *o, const struct usertp__dat_source *src)
{
	unsigned int i, count = 0;

	for (i = 0; i < src->nr_events; i++)
		count += is_ftrace(&src->events[i]);
	put_u32(o, count);
	for (i = 0; i < src->nr_events; i++) {
		if (!is_ftrace(&src->events[i]))
			continue;
		put_u64(o, strlen(src->events[i].format));
		put(o, src->events[i].format, strlen(src->events[i].format));
	}
}

void usertp__dat_put_event_formats(struct usertp__dat_out *o, const struct usertp__dat_source *src)
{
	unsigned int i, j, nr_systems = 0;

	/* Event systems, each once, in the order first seen; ftrace's have their section. */
	for (i = 0; i < src->nr_events; i++) {
		for (j = 0; j < i && strcmp(src->events[j].system, src->events[i].system); j++)
			;
		nr_systems += j == i && !is_ftrace(&src->events[i]);
	}
	put_u32(o, nr_systems);
	for (i = 0; i < src->nr_events; i++) {
		unsigned int count = 0;

		for (j = 0; j < i && strcmp(src->events[j].system, src->events[i].system); j++)
			;
		if (j < i || is_ftrace(&src->events[i]))
			continue;
		for (j = i; j < src->nr_events; j++)
			count += !strcmp(src->events[j].system, src->events[i].system);
		put_str(o, src->events[i].system);
		put_u32(o, count);
		for (j = i; j < src->nr_events; j++) {
			if (strcmp(src->events[j].system, src->events[i].system))
				continue;
			put_u64(o, strlen(src->events[j].format));
			put(o, src->events[j].format, strlen(src->events[j].format));
		}
	}
}

void usertp__dat_put_kallsyms(struct usertp__dat_out *o, const struct usertp__dat_source *src)
{
	put_u32(o, (uint32_t)src->kallsyms_len);
	put(o, src->kallsyms, src->kallsyms_len);
}

void usertp__dat_put_printk(struct usertp__dat_out *o, const struct usertp__dat_source *src)
{
	put_u32(o, (uint32_t)src->printk_formats_len);
	put(o, src->printk_formats, src->printk_formats_len);
}

void usertp__dat_put_cmdlines(struct usertp__dat_out *o, const struct usertp__dat_source *src)
{
	put_u64(o, src->cmdlines_len);
	put(o, src->cmdlines, src->cmdlines_len);
}

size_t usertp__dat_trace_clock(char *buf, size_t size, const struct usertp__dat_source *src)
{
	int n = src->tsc2nsec ? snprintf(buf, size, "[tsc2nsec]\n")
			      : snprintf(buf, size, "local global counter uptime perf %s %s\n",
					 src->raw_clock ? "mono [x86-tsc]" : "[mono] x86-tsc",
					 "mono_raw boot");

	return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
}

const char *usertp__dat_clock_name(const struct usertp__dat_source *src)
{
	return src->tsc2nsec ? "tsc2nsec" : src->raw_clock ? "x86-tsc" : "mono";
}

void usertp__dat_put_time_options(struct usertp__dat_out *o, const struct usertp__dat_source *src)
{
	char offset[24];

	if (src->date_offset_us) {
		snprintf(offset, sizeof(offset), "0x%llx", (unsigned long long)src->date_offset_us);
		put_u16(o, USERTP__DAT_OPTION_DATE);
		put_u32(o, (uint32_t)strlen(offset) + 1);
		put_str(o, offset);
	}
	if (!src->tsc2nsec)
		return;
	put_u16(o, USERTP__DAT_OPTION_TSC2NSEC);
	put_u32(o, 16);
	put_u32(o, src->tsc2nsec->mult);
	put_u32(o, src->tsc2nsec->shift);
	put_u64(o, 0);
	/*
	 * A fixed width, padded with spaces (readers take it with strtoll(), base 0: no leading
	 * zeros, which would make it octal): the recorder counts the header's bytes first.
	 */
	snprintf(offset, sizeof(offset), "%21lld", (long long)src->tsc2nsec->offset);
	put_u16(o, USERTP__DAT_OPTION_OFFSET);
	put_u32(o, (uint32_t)strlen(offset) + 1);
	put_str(o, offset);
}

/* The same bytes whether counting or writing (the recorder counts first). */
uint64_t usertp__dat_put_header(struct usertp__dat_out *o, const struct usertp__dat_source *src,
				unsigned int nr_cpus, const uint64_t *cpu_offset,
				const uint64_t *cpu_size)
{
	static const unsigned char magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g',
					       '6', 0, 0 /* little endian */, 8 /* long */ };
	unsigned int i;
	uint64_t table;
	char clock[96];
	size_t clock_len = usertp__dat_trace_clock(clock, sizeof(clock), src);

	put(o, magic, sizeof(magic));
	put_u32(o, USERTP__KPAGE_SIZE);
	usertp__dat_put_header_info(o, src);
	usertp__dat_put_ftrace_formats(o, src);
	usertp__dat_put_event_formats(o, src);
	usertp__dat_put_kallsyms(o, src);
	usertp__dat_put_printk(o, src);
	usertp__dat_put_cmdlines(o, src);

	put_u32(o, nr_cpus);
	put(o, "options  ", 10);
	/*
	 * TRACECLOCK.  Version 6 readers take the clock from the text after the CPU table; the
	 * option's data is for version 7, but trace-cmd 3.1 parses it in a v6 file too, and with
	 * no data it tokenizes a zero-size buffer: now and then (one read in a few hundred) it
	 * then prints raw timestamps.  So the option carries the text as well, NUL-terminated.
	 */
	put_u16(o, USERTP__DAT_OPTION_TRACECLOCK);
	put_u32(o, (uint32_t)clock_len + 1);
	put_str(o, clock);
	usertp__dat_put_time_options(o, src);
	o->cpustat_at = src->cpu_stats ? o->pos : 0;
	for (i = 0; src->cpu_stats && i < nr_cpus; i++) {
		unsigned char opt[USERTP__DAT_CPUSTAT_MAX];

		put(o, opt, usertp__dat_cpustat_option(opt, i, &src->cpu_stats[i]));
	}
	put_u16(o, USERTP__DAT_OPTION_DONE);
	put(o, "flyrecord", 10);
	table = o->pos;
	for (i = 0; i < nr_cpus; i++) {
		put_u64(o, cpu_offset ? cpu_offset[i] : 0);
		put_u64(o, cpu_size ? cpu_size[i] : 0);
	}
	put_u64(o, clock_len);
	put(o, clock, clock_len);
	return table;
}

void usertp__dat_put_page_padding(struct usertp__dat_out *o)
{
	put_zeros(o, (USERTP__KPAGE_SIZE - o->pos % USERTP__KPAGE_SIZE) % USERTP__KPAGE_SIZE);
}

void usertp__dat_put_page(struct usertp__dat_out *o, const unsigned char *page, uint32_t used,
			  uint64_t lost)
{
	unsigned char *data;

	/* Built in place in the output buffer: the page is copied once (a recorder's hot path). */
	if (sizeof(o->buf) - o->len < USERTP__KPAGE_SIZE)
		usertp__dat_flush(o);
	data = o->buf + o->len;
	if (used > USERTP__KPAGE_DATA)
		used = USERTP__KPAGE_DATA;
	memcpy(data, page, USERTP__KPAGE_HEADER + used);
	usertp__kpage_seal(data, used, lost);
	o->len += USERTP__KPAGE_SIZE;
	o->pos += USERTP__KPAGE_SIZE;
	if (o->len == sizeof(o->buf))
		usertp__dat_flush(o);
}

int usertp__trace_dat_write(int fd, const struct usertp__rb_snapshot *snap,
			    const struct usertp__dat_source *src)
{
	/* 64 KiB: static for the reasons usertp__trace_text_write() gives (written once). */
	static struct usertp__dat_out o;
	static struct usertp__dat_cpu_stats stats[64];
	struct usertp__dat_source with_stats = *src;
	uint64_t cpu_offset[64] = { 0 }, cpu_size[64] = { 0 }, start;
	unsigned int i, p, nr = snap->nr_cpus;

	if (nr > 64)
		return -E2BIG;
	/* Each CPU's events: in the file, overwritten, dropped (fired = the three). */
	for (i = 0; i < nr; i++)
		stats[i] = (struct usertp__dat_cpu_stats){ snap->cpus[i].entries, snap->cpus[i].overrun,
							   snap->cpus[i].dropped };
	with_stats.cpu_stats = stats;
	src = &with_stats;
	/* Pass 1: how long the metadata is, hence where the pages go. */
	usertp__dat_out_init(&o, -1);
	usertp__dat_put_header(&o, src, nr, cpu_offset, cpu_size);
	start = (o.pos + USERTP__KPAGE_SIZE - 1) / USERTP__KPAGE_SIZE * USERTP__KPAGE_SIZE;
	for (i = 0; i < nr; i++) {
		if (!snap->cpus[i].nr_pages)
			continue;
		cpu_offset[i] = start;
		cpu_size[i] = (uint64_t)snap->cpus[i].nr_pages * USERTP__KPAGE_SIZE;
		start += cpu_size[i];
	}
	/* Pass 2: write. */
	usertp__dat_out_init(&o, fd);
	usertp__dat_put_header(&o, src, nr, cpu_offset, cpu_size);
	usertp__dat_put_page_padding(&o);
	for (i = 0; i < nr; i++) {
		const struct usertp__rb_cpu_snapshot *c = &snap->cpus[i];

		for (p = 0; p < c->nr_pages; p++) {
			/* Overwritten events were before the oldest page kept. */
			uint64_t lost = c->pages[p].lost_before + (p == 0 ? c->overrun : 0);

			usertp__dat_put_page(&o, c->pages[p].data, c->pages[p].used, lost);
		}
	}
	usertp__dat_flush(&o);
	return o.error ? -o.error : 0;
}
