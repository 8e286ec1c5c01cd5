/* SPDX-License-Identifier: MIT */
/*
 * dat-read.c - the trace.dat reader behind usertp report (private/usertp-consumer-private.h declares it).
 *
 * The whole file is mapped (or read) and parsed through cursors that check every length
 * against what is left, so a corrupt or truncated file can only end in an error naming the
 * byte where its content stopped making sense. Event formats, task names and kernel symbols
 * go to libtraceevent.  Ring-buffer pages are walked by the page codec (kernel-page.h) in the
 * file's layout (page size, long size, byte order), every entry checked; the records it gives
 * are what libtraceevent's kbuffer would give for an intact page, so the text is trace-cmd's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace-dat.h"
#include "private/usertp-consumer-private.h"
#include "format-field.h"
#include "kernel-page.h"
#include "zstd.h"
#include "proc.h"

#define MAGIC "\x17\x08\x44tracing"
#define MAGIC_LEN 10
#define MAX_PAGE_SIZE (1U << 20)
#define MAX_CPUS 4096
#define MAX_OPTION_SECTIONS 64
/*
 * Largest decompressed section accepted, and a CPU's chunk (trace-cmd's are 10 pages,
 * usertp's 16): every CPU holds one chunk while the CPUs are merged, so the chunks of all
 * CPUs together stay within CHUNKS_BUDGET (down to MIN_CHUNK each).  A block may not declare
 * more than RATIO times its compressed size (beyond RATIO_FLOOR): what a file of a few
 * kilobytes can make a reader allocate and decompress stays in proportion to it.
 */
#define MAX_DECOMPRESSED (256U << 20)
#define MAX_CHUNK (1U << 20)
#define MIN_CHUNK (128U << 10)
#define CHUNKS_BUDGET (256U << 20)
#define RATIO 1024U
#define RATIO_FLOOR (1U << 20)
/* A field may not end further into a record than this. */
#define MAX_FIELD_END (1U << 20)
/* How far past its start a __data_loc / __rel_loc word can point: 16-bit offset + length. */
#define DYNAMIC_REACH 0x20000
#define NO_SECTION UINT64_MAX
#define TRIAL_AT_SIZE 128
#define TEXT_PADDING 64

/* One CPU's data: its pages, either in the file or in zstd chunks. */
struct cpu_stream {
	int id;
	uint64_t start, end;		/* its bytes in the file, end clipped to the file */
	uint64_t declared_end;		/* where the CPU table says they end */
	uint64_t pos;			/* next page, or next chunk header */
	bool compressed;
	bool chunks_counted;
	uint32_t chunks_left;
	uint8_t *chunk;			/* decompressed chunk */
	size_t chunk_size, chunk_pos;
	uint64_t chunk_off;		/* file offset of the chunk's header */
	uint8_t *page;			/* page being read, then zeroes (see page_room) */
	char where[96];			/* where it is, for a message */
	struct usertp__kpage_iter it;	/* its entries */
	uint64_t lost;			/* before it (USERTP__KPAGE_LOST_UNKNOWN: a number unknown) */
	bool loaded, done, have_rec;
	bool stop;			/* damage met: no page after the current one */
	struct tep_record rec;
	char *damage;
};

struct usertp__dat_input {
	char *name;
	const uint8_t *file;
	size_t file_size;
	void *map;
	uint8_t *owned;
	char err[512];			/* why opening failed */

	int version;
	bool big_endian;
	int long_size;			/* the kernel's, from header_page */
	unsigned int page_size;
	struct usertp__kpage_format page_format;
	bool zstd;
	struct tep_handle *tep;
	struct tep_plugin_list *plugins;

	bool in_usecs;
	bool clock_follows_cpu_table;	/* v6: a TRACECLOCK option was seen */
	long long ts_offset;
	uint32_t tsc_mult, tsc_shift;
	int cpucount_option;
	/* CPUSTAT options: per CPU, the events the file holds, overwritten and dropped */
	struct usertp__dat_cpu_stats *cpustat;
	bool *has_cpustat;
	unsigned int nr_cpustat;
	uint64_t section_offset[USERTP__DAT_OPTION_CMDLINES + 1];

	/* v7: the top instance's BUFFER option */
	bool have_top_buffer;
	uint64_t top_buffer_offset;

	const char *latency_text;
	size_t latency_len;
	uint64_t flyrecord_at;		/* v6: where the "flyrecord" tag starts (0: none) */

	/* In the trial parse's process: where the format being parsed starts (shared memory). */
	char *trial_at;

	int cpus;
	struct cpu_stream *cpu;
	size_t page_room;		/* bytes allocated per page buffer */
};

/* Bytes being parsed, and how to name a position in them in a message. */
struct cursor {
	struct usertp__dat_input *in;
	const uint8_t *data;
	size_t size;
	size_t pos;
	uint64_t file_off;		/* file offset of data[0], when data is the file's */
	uint64_t section_off;		/* else the file offset of the section it was decompressed from */
};

/* ---- messages ---- */

static void describe_pos(const struct cursor *c, size_t at, char *buf, size_t size)
{
	if (c->section_off == NO_SECTION)
		snprintf(buf, size, "byte %llu", (unsigned long long)(c->file_off + at));
	else
		snprintf(buf, size, "byte %zu of the section decompressed from byte %llu", at,
			 (unsigned long long)c->section_off);
}

static bool __attribute__((format(printf, 3, 4)))
fail_at(struct cursor *c, size_t at, const char *fmt, ...)
{
	char pos[96], msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	describe_pos(c, at, pos, sizeof(pos));
	snprintf(c->in->err, sizeof(c->in->err), "%s: %s: %s", c->in->name, pos, msg);
	return false;
}

static bool __attribute__((format(printf, 2, 3))) fail(struct usertp__dat_input *in, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(in->err, sizeof(in->err), "%s: %s", in->name, msg);
	return false;
}

/* Records the first damage of a CPU's data; the CPU's reading stops after the current page. */
static void __attribute__((format(printf, 3, 4)))
damage(struct usertp__dat_input *in, struct cpu_stream *s, const char *fmt, ...)
{
	char msg[320];
	va_list ap;
	int n;

	if (s->damage)
		return;
	n = snprintf(msg, sizeof(msg), "%s: ", in->name);
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - n, fmt, ap);
	va_end(ap);
	s->damage = strdup(msg);
	if (!s->damage)
		s->damage = (char *)"out of memory";
}

/* ---- numbers and cursors ---- */

static uint64_t get_num(const struct usertp__dat_input *in, const void *p, unsigned int n)
{
	const uint8_t *b = p;
	uint64_t v = 0;

	for (unsigned int i = 0; i < n; i++)
		v |= (uint64_t)b[in->big_endian ? n - 1 - i : i] << (8 * i);
	return v;
}

static struct cursor file_cursor(struct usertp__dat_input *in, size_t pos)
{
	return (struct cursor){ .in = in, .data = in->file, .size = in->file_size, .pos = pos,
				.file_off = 0, .section_off = NO_SECTION };
}

static bool take(struct cursor *c, uint64_t n, const uint8_t **p, const char *what)
{
	*p = NULL;
	if (n > c->size - c->pos)
		return fail_at(c, c->pos, "%s: %llu bytes needed, only %zu left", what,
			       (unsigned long long)n, c->size - c->pos);
	*p = c->data + c->pos;
	c->pos += n;
	return true;
}

static bool read_num(struct cursor *c, unsigned int n, uint64_t *v, const char *what)
{
	const uint8_t *p;

	if (!take(c, n, &p, what))
		return false;
	*v = get_num(c->in, p, n);
	return true;
}

static bool read_str(struct cursor *c, const char **s, const char *what)
{
	const uint8_t *end = memchr(c->data + c->pos, 0, c->size - c->pos);

	if (!end)
		return fail_at(c, c->pos, "%s: no terminating NUL", what);
	*s = (const char *)c->data + c->pos;
	c->pos = end - c->data + 1;
	return true;
}

/*
 * A length of width bytes, then that many bytes of text, copied with NULs after it: some of
 * libtraceevent's text parsers (printk formats) look a few bytes past a line's end.
 */
static bool read_sized_text(struct cursor *c, unsigned int width, char **text, size_t *len,
			    const char *what)
{
	const uint8_t *p;
	uint64_t n;

	if (!read_num(c, width, &n, what) || !take(c, n, &p, what))
		return false;
	*text = calloc(1, n + TEXT_PADDING);
	if (!*text)
		return fail_at(c, c->pos, "%s: out of memory", what);
	memcpy(*text, p, n);
	if (len)
		*len = n;
	return true;
}

/* u32 compressed size, u32 raw size, then the compressed bytes: into a new buffer. */
static bool decompress_block(struct cursor *c, uint64_t limit, uint64_t max, uint8_t **out,
			     size_t *out_size, const char *what)
{
	uint64_t csize, usize, frame_size;
	const uint8_t *src;
	size_t start = c->pos;

	if (!usertp__zstd_available())
		return fail_at(c, start, "%s is zstd-compressed, and libzstd.so.1 could not be loaded",
			       what);
	if (!read_num(c, 4, &csize, what) || !read_num(c, 4, &usize, what))
		return false;
	if (csize + 8 > limit)
		return fail_at(c, start, "%s: compressed size %llu runs past its end", what,
			       (unsigned long long)csize);
	if (usize > max)
		return fail_at(c, start, "%s: decompressed size %llu is too large (at most %llu)",
			       what, (unsigned long long)usize, (unsigned long long)max);
	if (usize > RATIO_FLOOR && usize / RATIO > csize)
		return fail_at(c, start, "%s: %llu bytes declared of %llu compressed: more than "
			       "%u times", what, (unsigned long long)usize,
			       (unsigned long long)csize, RATIO);
	if (!take(c, csize, &src, what))
		return false;
	switch (usertp__zstd_frame_size(src, csize, &frame_size)) {
	case -1:
		return fail_at(c, start, "%s: not zstd data", what);
	case 1:
		if (frame_size != usize)
			return fail_at(c, start, "%s: %llu bytes declared, the zstd frame holds "
				       "%llu", what, (unsigned long long)usize,
				       (unsigned long long)frame_size);
		break;
	}
	*out = malloc(usize ? usize : 1);
	if (!*out)
		return fail_at(c, start, "%s: out of memory", what);
	if (!usertp__zstd_decompress(*out, usize, src, csize)) {
		free(*out);
		*out = NULL;
		return fail_at(c, start, "%s: the zstd data does not decompress to its %llu bytes",
			       what, (unsigned long long)usize);
	}
	*out_size = usize;
	return true;
}

/*
 * A version 7 section: its 16-byte header (id, flags, string id, size) at off, then its data,
 * decompressed into *buf (to free) when flagged. The cursor covers the data.
 */
static bool open_section(struct usertp__dat_input *in, uint64_t off, unsigned int id, struct cursor *sc,
			 uint8_t **buf, const char *what)
{
	struct cursor c = file_cursor(in, 0);
	uint64_t sid, flags, desc, size;
	size_t data_size;

	*buf = NULL;
	if (off > in->file_size)
		return fail_at(&c, off, "%s section: past the end of the file (%zu bytes)", what,
			       in->file_size);
	c.pos = off;
	if (!read_num(&c, 2, &sid, what) || !read_num(&c, 2, &flags, what) ||
	    !read_num(&c, 4, &desc, what) || !read_num(&c, 8, &size, what))
		return false;
	if (sid != id)
		return fail_at(&c, off, "%s: section id %llu, expected %u", what,
			       (unsigned long long)sid, id);
	if (size > c.size - c.pos)
		return fail_at(&c, off, "%s: section of %llu bytes runs past the end of the file",
			       what, (unsigned long long)size);
	if (!(flags & 1)) {
		*sc = (struct cursor){ .in = in, .data = in->file + c.pos, .size = size,
				       .file_off = c.pos, .section_off = NO_SECTION };
		return true;
	}
	if (!in->zstd)
		return fail_at(&c, off, "%s: section flagged compressed in an uncompressed file", what);
	if (!decompress_block(&c, size, MAX_DECOMPRESSED, buf, &data_size, what))
		return false;
	*sc = (struct cursor){ .in = in, .data = *buf, .size = data_size, .section_off = off };
	return true;
}

/* ---- metadata ---- */

/*
 * trace-cmd's rule (trace-input.c, extract_trace_clock()): times are secs.usecs unless a clock
 * named in the file (the TRACECLOCK option's text, then v6's text after the CPU table) is none
 * of these, and no TSC2NSEC option came before it.  A name only ever turns usecs off: a file
 * whose option says x86-tsc and whose later text says local (trace-cmd listen writes its own
 * machine's clock there) prints ticks.
 */
static void parse_trace_clock(struct usertp__dat_input *in, char *text)
{
	char *save = NULL, *word, *name;

	for (word = strtok_r(text, " \n", &save); word; word = strtok_r(NULL, " \n", &save)) {
		if (*word != '[')
			continue;
		name = word + 1;
		name[strcspn(name, "]")] = 0;
		if (in->tsc_mult)
			return;
		if (strcmp(name, "local") && strcmp(name, "global") && strcmp(name, "uptime") &&
		    strcmp(name, "perf") && strncmp(name, "mono", 4) && strcmp(name, "tsc2nsec") &&
		    strcmp(name, "tai"))
			in->in_usecs = false;
		return;
	}
}

static bool parse_header_info(struct cursor *c)
{
	struct usertp__dat_input *in = c->in;
	const uint8_t *tag;
	char *text;
	size_t len = 0;
	int ret;

	if (!take(c, 12, &tag, "header_page") || memcmp(tag, "header_page", 12))
		return fail_at(c, c->pos - 12, "\"header_page\" expected");
	if (!read_sized_text(c, 8, &text, &len, "header_page"))
		return false;
	if (!len) {
		free(text);
		return fail_at(c, c->pos, "header_page is empty (the pre-2.6.31 ring buffer format "
			       "is not supported)");
	}
	ret = tep_parse_header_page(in->tep, text, len, in->long_size);
	free(text);
	if (ret < 0 || tep_is_old_format(in->tep))
		return fail_at(c, c->pos - len, "header_page cannot be parsed");
	if (tep_get_header_timestamp_size(in->tep) != 8)
		return fail_at(c, c->pos - len, "header_page: the timestamp is not 8 bytes");
	/* The size of commit is the kernel's long, whatever the file header says. */
	in->long_size = tep_get_header_page_size(in->tep);
	if (in->long_size != 4 && in->long_size != 8)
		return fail_at(c, c->pos - len, "header_page: commit of %d bytes", in->long_size);
	if (!take(c, 13, &tag, "header_event") || memcmp(tag, "header_event", 13))
		return fail_at(c, c->pos - 13, "\"header_event\" expected");
	if (!read_sized_text(c, 8, &text, NULL, "header_event"))
		return false;
	free(text);
	return true;
}

/*
 * A format text; one libtraceevent cannot parse is skipped, as trace-cmd skips it, and so is
 * one that does not pass usertp__format_check() (its events then print as unknown ones).
 */
static bool parse_format(struct cursor *c, const char *system)
{
	char *text, why[160];
	size_t len = 0;

	if (c->in->trial_at)
		describe_pos(c, c->pos, c->in->trial_at, TRIAL_AT_SIZE);
	if (!read_sized_text(c, 8, &text, &len, "event format"))
		return false;
	if (usertp__format_check(text, len, why, sizeof(why)))
		tep_parse_event(c->in->tep, text, len, system);
	free(text);
	return true;
}

static bool parse_ftrace_formats(struct cursor *c)
{
	uint64_t count;

	if (!read_num(c, 4, &count, "ftrace format count"))
		return false;
	for (uint64_t i = 0; i < count; i++)
		if (!parse_format(c, "ftrace"))
			return false;
	return true;
}

static bool parse_event_formats(struct cursor *c)
{
	uint64_t systems, count;
	const char *system = NULL;

	if (!read_num(c, 4, &systems, "event system count"))
		return false;
	for (uint64_t i = 0; i < systems; i++) {
		if (!read_str(c, &system, "event system name") ||
		    !read_num(c, 4, &count, "event count"))
			return false;
		for (uint64_t j = 0; j < count; j++)
			if (!parse_format(c, system))
				return false;
	}
	return true;
}

/* kallsyms, printk formats and saved cmdlines: a sized text for a libtraceevent parser. */
static bool parse_text_block(struct cursor *c, unsigned int width, const char *what,
			     int (*parse)(struct tep_handle *tep, const char *text))
{
	char *text;
	size_t len = 0;

	if (!read_sized_text(c, width, &text, &len, what))
		return false;
	if (len && !c->in->trial_at)
		parse(c->in->tep, text);
	free(text);
	return true;
}

static bool parse_kallsyms(struct cursor *c)
{
	return parse_text_block(c, 4, "kallsyms", tep_parse_kallsyms);
}

/*
 * printk_formats lines are "0xADDR : \"format\"". libtraceevent 1.7.1 reads before or after a
 * format shorter than that, so only lines with one get to it.
 */
static int parse_printk_lines(struct tep_handle *tep, const char *text)
{
	char *kept = malloc(strlen(text) + 1), *out = kept;
	const char *line, *end, *colon;
	int ret;

	if (!kept)
		return -1;
	for (line = text; *line; line = *end ? end + 1 : end) {
		end = line + strcspn(line, "\n");
		colon = memchr(line, ':', end - line);
		if (!colon || end - colon < 5 || colon[1] != ' ')
			continue;
		memcpy(out, line, end - line);
		out += end - line;
		*out++ = '\n';
	}
	*out = 0;
	ret = tep_parse_printk_formats(tep, kept);
	free(kept);
	return ret;
}

static bool parse_printk(struct cursor *c)
{
	return parse_text_block(c, 4, "printk formats", parse_printk_lines);
}

static bool parse_cmdlines(struct cursor *c)
{
	return parse_text_block(c, 8, "saved cmdlines", tep_parse_saved_cmdlines);
}

static void add_cpu(struct usertp__dat_input *in, int index, uint64_t id, uint64_t off, uint64_t size)
{
	struct cpu_stream *s = &in->cpu[index];

	s->id = (int)id;
	s->start = off;
	s->declared_end = size > UINT64_MAX - off ? UINT64_MAX : off + size;
}

/*
 * Once the data's form is known: where each CPU's bytes end in the file. A compressed CPU's
 * size leaves out the chunk count before its chunks in trace-cmd 3.1's files, and counts it
 * in those of trace-cmd 3.2 on (and usertp's): its chunks may run 4 bytes past it (they are
 * found by their count and sizes), and the file may end there.
 */
static void clip_cpus(struct usertp__dat_input *in, bool compressed)
{
	for (int i = 0; i < in->cpus; i++) {
		struct cpu_stream *s = &in->cpu[i];
		uint64_t reach = s->declared_end;

		s->compressed = compressed;
		if (compressed && s->declared_end > s->start && s->declared_end < UINT64_MAX - 4)
			reach += 4;
		s->end = reach < in->file_size ? reach : in->file_size;
		if (s->start > s->end)
			s->start = s->end;
		s->pos = s->start;
		if (s->declared_end > in->file_size)
			damage(in, s, "CPU %d: the file ends at byte %zu, inside this CPU's data "
			       "(bytes %llu to %llu)", s->id, in->file_size,
			       (unsigned long long)s->start, (unsigned long long)s->declared_end);
	}
}

static bool alloc_cpus(struct cursor *c, uint64_t cpus)
{
	struct usertp__dat_input *in = c->in;

	if (cpus > MAX_CPUS)
		return fail_at(c, c->pos, "%llu CPUs: more than %d", (unsigned long long)cpus, MAX_CPUS);
	in->cpus = (int)cpus;
	in->cpu = calloc(cpus ? cpus : 1, sizeof(*in->cpu));
	if (!in->cpu)
		return fail(in, "out of memory");
	return true;
}

/* v7 BUFFER option of the top instance: offset, name, clock, page size, CPUs. */
static bool parse_buffer_option(struct cursor *c)
{
	struct usertp__dat_input *in = c->in;
	uint64_t off, page_size, cpus, id, cpu_off, cpu_size;
	const char *name = NULL, *clock = NULL;

	if (!read_num(c, 8, &off, "BUFFER option") || !read_str(c, &name, "BUFFER option name"))
		return false;
	if (*name)		/* other instances are not shown */
		return true;
	if (in->have_top_buffer)
		return fail_at(c, c->pos, "a second BUFFER option for the top instance");
	if (!read_str(c, &clock, "BUFFER option clock") ||
	    !read_num(c, 4, &page_size, "BUFFER option page size") ||
	    !read_num(c, 4, &cpus, "BUFFER option CPU count"))
		return false;
	if (page_size != in->page_size)
		return fail_at(c, c->pos, "BUFFER option: page size %llu, the file's is %u",
			       (unsigned long long)page_size, in->page_size);
	if (!alloc_cpus(c, cpus))
		return false;
	for (uint64_t i = 0; i < cpus; i++) {
		if (!read_num(c, 4, &id, "BUFFER option CPU") ||
		    !read_num(c, 8, &cpu_off, "BUFFER option CPU offset") ||
		    !read_num(c, 8, &cpu_size, "BUFFER option CPU size"))
			return false;
		add_cpu(in, (int)i, id, cpu_off, cpu_size);
	}
	in->have_top_buffer = true;
	in->top_buffer_offset = off;
	return true;
}

/* A CPUSTAT option's counts (text that is not one is ignored).  False: out of memory. */
static bool keep_cpustat(struct usertp__dat_input *in, const char *text, uint64_t size)
{
	struct usertp__dat_cpu_stats st;
	unsigned int cpu;

	if (!usertp__dat_cpustat_parse(text, (size_t)size, &cpu, &st) || cpu >= 65536)
		return true;
	if (cpu >= in->nr_cpustat) {
		unsigned int n = cpu + 1;
		struct usertp__dat_cpu_stats *s = realloc(in->cpustat, n * sizeof(*s));
		bool *h = s ? realloc(in->has_cpustat, n * sizeof(*h)) : NULL;

		if (s)
			in->cpustat = s;
		if (!h)
			return false;
		in->has_cpustat = h;
		memset(h + in->nr_cpustat, 0, (n - in->nr_cpustat) * sizeof(*h));
		in->nr_cpustat = n;
	}
	in->cpustat[cpu] = st;
	in->has_cpustat[cpu] = true;
	return true;
}

bool usertp__dat_read_v6_layout(const struct usertp__dat_input *in, uint64_t *head_len,
				unsigned int *page_size)
{
	if (in->version != 6 || !in->flyrecord_at)
		return false;
	*head_len = in->flyrecord_at;
	*page_size = in->page_size;
	return true;
}

void usertp__dat_read_cpu_bytes(const struct usertp__dat_input *in, int index, uint64_t *offset,
				uint64_t *size)
{
	*offset = in->cpu[index].start;
	*size = in->cpu[index].end - in->cpu[index].start;
}

bool usertp__dat_read_cpu_stats(const struct usertp__dat_input *in, int cpu, struct usertp__dat_cpu_stats *st)
{
	if (cpu < 0 || (unsigned int)cpu >= in->nr_cpustat || !in->has_cpustat[cpu])
		return false;
	*st = in->cpustat[cpu];
	return true;
}

/* Options up to DONE; for v7, *next receives the offset of the next options section. */
static bool parse_options(struct cursor *c, uint64_t *next)
{
	struct usertp__dat_input *in = c->in;
	uint64_t id, size;
	const uint8_t *data;
	char *text;

	*next = 0;
	for (;;) {
		if (!read_num(c, 2, &id, "option id"))
			return false;
		if (id == USERTP__DAT_OPTION_DONE && in->version < 7)
			return true;
		if (!read_num(c, 4, &size, "option size") || !take(c, size, &data, "option"))
			return false;
		struct cursor oc = *c;

		oc.pos -= size;
		oc.size = oc.pos + size;
		switch (id) {
		case USERTP__DAT_OPTION_DONE:
			if (size < 8)
				return fail_at(c, c->pos - size, "DONE option of %llu bytes",
					       (unsigned long long)size);
			*next = get_num(in, data, 8);
			return true;
		case USERTP__DAT_OPTION_DATE:
		case USERTP__DAT_OPTION_OFFSET:
		case USERTP__DAT_OPTION_TRACECLOCK:
			text = strndup((const char *)data, size);
			if (!text)
				return fail(in, "out of memory");
			if (id == USERTP__DAT_OPTION_TRACECLOCK) {
				in->clock_follows_cpu_table = true;
				parse_trace_clock(in, text);
			} else {
				/* DATE is in microseconds, OFFSET in the clock's units */
				in->ts_offset += strtoll(text, NULL, 0) * (id == USERTP__DAT_OPTION_DATE ? 1000 : 1);
			}
			free(text);
			break;
		case USERTP__DAT_OPTION_CPUSTAT:
			if (!keep_cpustat(in, (const char *)data, size))
				return fail(in, "out of memory");
			break;
		case USERTP__DAT_OPTION_CPUCOUNT:
			if (size >= 4)
				in->cpucount_option = (int)get_num(in, data, 4);
			break;
		case USERTP__DAT_OPTION_TSC2NSEC:
			if (size >= 16) {
				in->tsc_mult = get_num(in, data, 4);
				in->tsc_shift = get_num(in, data + 4, 4);
				in->in_usecs = true; /* (as trace-cmd: nanoseconds now) */
				/* (the kernel's is below 32; a 128-bit product allows 63) */
				if (in->tsc_shift > 63)
					return fail_at(c, c->pos - size, "TSC2NSEC: a shift of %u",
						       in->tsc_shift);
			}
			break;
		case USERTP__DAT_OPTION_BUFFER:
			if (in->version >= 7 && !parse_buffer_option(&oc))
				return false;
			break;
		case USERTP__DAT_OPTION_BUFFER_TEXT:
			if (in->version >= 7 && size > 8 && !data[8])
				return fail_at(c, c->pos - size, "latency-format data in a version 7 "
					       "file is not supported");
			break;
		case USERTP__DAT_OPTION_HEADER_INFO ... USERTP__DAT_OPTION_CMDLINES:
			if (in->version >= 7 && size >= 8)
				in->section_offset[id] = get_num(in, data, 8);
			break;
		default:
			break;
		}
	}
}

static bool parse_v6(struct usertp__dat_input *in, struct cursor *c)
{
	uint64_t cpus, off, size, next;
	const uint8_t *tag;
	char *text;

	if (!parse_header_info(c) || !parse_ftrace_formats(c) || !parse_event_formats(c) ||
	    !parse_kallsyms(c) || !parse_printk(c) || !parse_cmdlines(c) ||
	    !read_num(c, 4, &cpus, "CPU count") || !take(c, 10, &tag, "options or data tag"))
		return false;
	if (!memcmp(tag, "options  ", 10)) {
		if (!parse_options(c, &next) || !take(c, 10, &tag, "data tag"))
			return false;
	}
	if (!memcmp(tag, "latency  ", 10)) {
		in->latency_text = (const char *)c->data + c->pos;
		in->latency_len = c->size - c->pos;
		return alloc_cpus(c, cpus);
	}
	if (memcmp(tag, "flyrecord", 10))
		return fail_at(c, c->pos - 10, "neither \"flyrecord\" nor \"latency\" data");
	in->flyrecord_at = c->pos - 10;
	/* A CPUCOUNT option overrides the count, as trace-cmd reads it. */
	if (in->cpucount_option > 0)
		cpus = in->cpucount_option;
	if (!alloc_cpus(c, cpus))
		return false;
	for (int i = 0; i < in->cpus; i++) {
		if (!read_num(c, 8, &off, "CPU data offset") || !read_num(c, 8, &size, "CPU data size"))
			return false;
		add_cpu(in, i, i, off, size);
	}
	clip_cpus(in, false);
	if (in->clock_follows_cpu_table) {
		if (!read_sized_text(c, 8, &text, NULL, "trace clock"))
			return false;
		parse_trace_clock(in, text);
		free(text);
	}
	return true;
}

static bool parse_v7_section(struct usertp__dat_input *in, unsigned int id, const char *what,
			     bool (*parse)(struct cursor *c))
{
	struct cursor c;
	uint8_t *buf;
	bool ok;

	if (!in->section_offset[id])
		return true;
	if (!open_section(in, in->section_offset[id], id, &c, &buf, what))
		return false;
	ok = parse(&c);
	free(buf);
	return ok;
}

static bool parse_v7(struct usertp__dat_input *in, struct cursor *c)
{
	uint64_t options, next;
	const char *name = NULL, *version = NULL;
	struct cursor sc;
	uint64_t sid, flags;
	uint8_t *buf;
	bool ok;

	if (!read_str(c, &name, "compression name") || !read_str(c, &version, "compression version"))
		return false;
	if (!strcmp(name, "zstd"))
		in->zstd = true;
	else if (strcmp(name, "none"))
		return fail_at(c, c->pos, "compressed with \"%.32s\": only zstd is supported", name);
	if (!read_num(c, 8, &options, "options offset"))
		return false;
	for (int n = 0; options; n++) {
		if (n == MAX_OPTION_SECTIONS)
			return fail(in, "more than %d options sections (a loop?)", MAX_OPTION_SECTIONS);
		if (!open_section(in, options, USERTP__DAT_OPTION_DONE, &sc, &buf, "options"))
			return false;
		ok = parse_options(&sc, &next);
		free(buf);
		if (!ok)
			return false;
		options = next;
	}
	if (!in->section_offset[USERTP__DAT_OPTION_HEADER_INFO])
		return fail(in, "no header_page section");
	if (!parse_v7_section(in, USERTP__DAT_OPTION_HEADER_INFO, "header_page", parse_header_info) ||
	    !parse_v7_section(in, USERTP__DAT_OPTION_FTRACE_EVENTS, "ftrace formats", parse_ftrace_formats) ||
	    !parse_v7_section(in, USERTP__DAT_OPTION_EVENT_FORMATS, "event formats", parse_event_formats) ||
	    !parse_v7_section(in, USERTP__DAT_OPTION_KALLSYMS, "kallsyms", parse_kallsyms) ||
	    !parse_v7_section(in, USERTP__DAT_OPTION_PRINTK, "printk formats", parse_printk) ||
	    !parse_v7_section(in, USERTP__DAT_OPTION_CMDLINES, "saved cmdlines", parse_cmdlines))
		return false;
	if (!in->have_top_buffer)
		return fail(in, "no flyrecord data for the top instance");
	/* The data's section header says whether its chunks are compressed. */
	sc = file_cursor(in, 0);
	if (in->top_buffer_offset > in->file_size)
		return fail_at(&sc, in->top_buffer_offset, "flyrecord section: past the end of the "
			       "file (%zu bytes)", in->file_size);
	sc.pos = in->top_buffer_offset;
	if (!read_num(&sc, 2, &sid, "flyrecord section") || !read_num(&sc, 2, &flags, "flyrecord section"))
		return false;
	if (sid != USERTP__DAT_SECTION_FLYRECORD)
		return fail_at(&sc, sc.pos - 4, "flyrecord section id %llu", (unsigned long long)sid);
	if ((flags & 1) && !in->zstd)
		return fail_at(&sc, sc.pos - 4, "flyrecord section flagged compressed in an "
			       "uncompressed file");
	clip_cpus(in, flags & 1);
	return true;
}

/* Room for a page plus whatever a record at its end could make libtraceevent read. */
static bool size_page_room(struct usertp__dat_input *in)
{
	struct tep_event **events = tep_list_events(in->tep, TEP_EVENT_SORT_ID);
	unsigned long long max_end = 0, end;

	for (int i = 0; events && events[i]; i++) {
		struct tep_format_field *lists[2] = { events[i]->format.common_fields,
						      events[i]->format.fields };

		for (int l = 0; l < 2; l++)
			for (struct tep_format_field *f = lists[l]; f; f = f->next) {
				end = (unsigned long long)(unsigned int)f->offset + (unsigned int)f->size;
				if (end > MAX_FIELD_END)
					return fail(in, "the format of %s:%s puts field %s at byte %d: "
						    "beyond any record", events[i]->system,
						    events[i]->name, f->name, f->offset);
				if (end > max_end)
					max_end = end;
			}
	}
	in->page_room = in->page_size + max_end + DYNAMIC_REACH + 64;
	in->page_format = (struct usertp__kpage_format){ .page_size = in->page_size,
							 .long_size = (uint8_t)in->long_size,
							 .big_endian = in->big_endian };
	return true;
}

/* Everything after the page size: formats and the rest into libtraceevent, the CPU table. */
static bool parse_metadata(struct usertp__dat_input *in, struct cursor c)
{
	in->tep = tep_alloc();
	if (!in->tep)
		return fail(in, "out of memory");
	in->plugins = tep_load_plugins(in->tep);
	tep_set_file_bigendian(in->tep, in->big_endian ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(in->tep, __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ?
				TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_long_size(in->tep, in->long_size);
	in->in_usecs = true;

	if (!(in->version >= 7 ? parse_v7(in, &c) : parse_v6(in, &c)) || !size_page_room(in))
		return false;
	tep_set_cpus(in->tep, in->cpus);
	return true;
}

/*
 * libtraceevent 1.7.1's format parser dereferences NULL on some malformed format texts. The
 * formats are parsed first in a child process, which names the format it was parsing if it
 * dies, so that a hostile file gives an error rather than a crash.
 */
static bool trial_parse(struct usertp__dat_input *in, struct cursor c)
{
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	char *at = mmap(NULL, TRIAL_AT_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			-1, 0);
	int status = 0;
	pid_t pid, waited = -1;

	if (at == MAP_FAILED)
		return fail(in, "mmap: %s", strerror(errno));
	strcpy(at, "the file's metadata");
	pid = fork();
	if (pid == 0) {
		/* die quietly: no sanitizer or fuzzer report for a crash in the library */
		for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
			signal(fatal[i], SIG_DFL);
		in->trial_at = at;
		usertp__child_exit(parse_metadata(in, c) ? 0 : 2);
	}
	while (pid > 0 && (waited = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		; /* (a signal meanwhile: wait again, or the child is left a zombie) */
	if (pid < 0 || waited != pid) {
		munmap(at, TRIAL_AT_SIZE);
		return fail(in, "fork: %s", strerror(errno));
	}
	if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 2)) {
		fail(in, "%s: libtraceevent crashes parsing the event format there", at);
		munmap(at, TRIAL_AT_SIZE);
		return false;
	}
	munmap(at, TRIAL_AT_SIZE);
	return true;
}

static bool parse_file(struct usertp__dat_input *in)
{
	struct cursor c = file_cursor(in, 0);
	const uint8_t *p;
	const char *version = NULL;
	uint64_t page_size;
	char *end;
	long v;

	if (!take(&c, MAGIC_LEN, &p, "file header") || memcmp(p, MAGIC, MAGIC_LEN))
		return fail(in, "not a trace.dat file");
	if (!read_str(&c, &version, "version"))
		return false;
	v = strtol(version, &end, 10);
	if (end == version || (v != 6 && v != 7))
		return fail_at(&c, MAGIC_LEN, "file version \"%.16s\": only 6 and 7 are supported",
			       version);
	in->version = (int)v;
	if (!take(&c, 2, &p, "file header"))
		return false;
	if (p[0] > 1 || (p[1] != 4 && p[1] != 8))
		return fail_at(&c, c.pos - 2, "bad endianness (%u) or long size (%u)", p[0], p[1]);
	in->big_endian = p[0];
	in->long_size = p[1];
	if (!read_num(&c, 4, &page_size, "page size"))
		return false;
	if (page_size < 64 || page_size > MAX_PAGE_SIZE || (page_size & (page_size - 1)))
		return fail_at(&c, c.pos - 4, "page size %llu", (unsigned long long)page_size);
	in->page_size = (unsigned int)page_size;

	return trial_parse(in, c) && parse_metadata(in, c);
}

/* ---- pages ---- */

/*
 * Reads the commit word of the page in s->page (avail bytes of it came from the file) and
 * starts the walk of its entries.  A commit past the page stops the CPU there; a page the file
 * ends in is walked as far as its data goes.
 */
static void start_page(struct usertp__dat_input *in, struct cpu_stream *s, size_t avail)
{
	unsigned int hdr = 8 + in->long_size;
	uint32_t used;

	if (avail < in->page_size)
		s->stop = true;		/* the file ends in this page */
	if (!usertp__kpage_header_as(&in->page_format, s->page, &used, &s->lost)) {
		damage(in, s, "CPU %d: page at %s: commit %llu does not fit in a %u-byte page",
		       s->id, s->where,
		       (unsigned long long)(get_num(in, s->page + 8, in->long_size) &
					    USERTP__KPAGE_COMMIT_MASK), in->page_size);
		s->stop = true;
		used = 0;
	} else if (hdr + used > avail) {
		damage(in, s, "CPU %d: page at %s: the data ends %llu bytes into the page, "
		       "which commits %llu", s->id, s->where, (unsigned long long)avail,
		       (unsigned long long)(hdr + used));
		used = (uint32_t)(avail - hdr);
	}
	usertp__kpage_iter_init_as(&s->it, &in->page_format, s->page, used);
}

/* The largest chunk a CPU of this file may hold (see MAX_CHUNK). */
static uint64_t chunk_max(const struct usertp__dat_input *in)
{
	uint64_t share = CHUNKS_BUDGET / (in->cpus > 0 ? (unsigned int)in->cpus : 1U);

	return share > MAX_CHUNK ? MAX_CHUNK : share < MIN_CHUNK ? MIN_CHUNK : share;
}

/* The next chunk of a compressed CPU: u32 compressed size, u32 raw size (whole pages), data. */
static bool load_chunk(struct usertp__dat_input *in, struct cpu_stream *s)
{
	struct cursor c = file_cursor(in, s->pos);
	uint64_t count;
	size_t size;

	c.size = s->end;
	if (!s->chunks_counted) {
		/* An empty CPU has no count of chunks (a size of 0, as trace-cmd writes it too). */
		if (s->declared_end <= s->start)
			return false;
		if (!read_num(&c, 4, &count, "chunk count")) {
			damage(in, s, "CPU %d: %s", s->id, in->err + strlen(in->name) + 2);
			return false;
		}
		s->chunks_counted = true;
		s->chunks_left = count;
	}
	if (!s->chunks_left)
		return false;
	s->chunk_off = c.pos;
	free(s->chunk);
	s->chunk = NULL;
	if (!decompress_block(&c, s->end - c.pos, chunk_max(in), &s->chunk, &size, "chunk")) {
		damage(in, s, "CPU %d: %s", s->id, in->err + strlen(in->name) + 2);
		return false;
	}
	if (!size || size % in->page_size) {
		damage(in, s, "CPU %d: chunk at byte %llu: %zu bytes, not whole pages", s->id,
		       (unsigned long long)s->chunk_off, size);
		return false;
	}
	s->chunks_left--;
	s->pos = c.pos;
	s->chunk_size = size;
	s->chunk_pos = 0;
	return true;
}

/* Loads the CPU's next page; false at the end of its data or after damage. */
static bool next_page(struct usertp__dat_input *in, struct cpu_stream *s)
{
	size_t avail;

	if (s->stop)
		return false;
	if (!s->page) {
		s->page = calloc(1, in->page_room);
		if (!s->page) {
			damage(in, s, "CPU %d: out of memory", s->id);
			return false;
		}
	}
	if (s->compressed) {
		if (s->chunk_pos >= s->chunk_size && !load_chunk(in, s))
			return false;
		avail = in->page_size;
		memcpy(s->page, s->chunk + s->chunk_pos, avail);
		snprintf(s->where, sizeof(s->where), "byte %zu of the chunk at byte %llu", s->chunk_pos,
			 (unsigned long long)s->chunk_off);
		s->chunk_pos += avail;
	} else {
		if (s->pos >= s->end)
			return false;
		avail = s->end - s->pos < in->page_size ? s->end - s->pos : in->page_size;
		memcpy(s->page, in->file + s->pos, avail);
		memset(s->page + avail, 0, in->page_size - avail);
		snprintf(s->where, sizeof(s->where), "byte %llu", (unsigned long long)s->pos);
		s->pos += in->page_size;
	}
	if (avail < (in->long_size == 8 ? 16U : 12U)) {
		damage(in, s, "CPU %d: page at %s: the data ends inside its header", s->id, s->where);
		return false;
	}
	start_page(in, s, avail);
	return true;
}

static unsigned long long timestamp(const struct usertp__dat_input *in, unsigned long long ts)
{
	if (in->tsc_mult)
		ts = (unsigned long long)(((unsigned __int128)ts * in->tsc_mult) >> in->tsc_shift);
	return ts + in->ts_offset;
}

/*
 * The record @e of CPU stream @s as libtraceevent's kbuffer gives it, which trace-cmd reads
 * with: a size of whole words, the entry's own header counted in record_size, and the losses
 * before the page on a record that begins the page's entries (a time extend first hides them).
 */
static void take_record(struct usertp__dat_input *in, struct cpu_stream *s,
			const struct usertp__kpage_entry *e)
{
	memset(&s->rec, 0, sizeof(s->rec));
	s->rec.ts = timestamp(in, e->ts);
	s->rec.cpu = s->id;
	s->rec.data = (void *)e->data;
	s->rec.size = (int)((e->size + 3) & ~3u);
	s->rec.record_size = (int)(s->it.off - e->off);
	if (e->off == 0)
		s->rec.missed_events = s->lost == USERTP__KPAGE_LOST_UNKNOWN ? -1 : (int)s->lost;
	s->rec.ref_count = 1;
	s->have_rec = true;
}

struct tep_record *usertp__dat_read_peek(struct usertp__dat_input *in, int cpu)
{
	struct cpu_stream *s = &in->cpu[cpu];
	struct usertp__kpage_entry e;
	int ret;

	if (s->have_rec)
		return &s->rec;
	while (!s->done) {
		if (s->loaded) {
			ret = usertp__kpage_iter_next(&s->it, &e);
			if (ret == 1) {
				take_record(in, s, &e);
				return &s->rec;
			}
			if (ret < 0) {
				damage(in, s, "CPU %d: page at %s: the entry at page offset %u has a "
				       "bad length", s->id, s->where, 8 + in->long_size + s->it.off);
				s->stop = true;
			}
		}
		if (next_page(in, s))
			s->loaded = true;
		else
			s->done = true;
	}
	return NULL;
}

void usertp__dat_read_consume(struct usertp__dat_input *in, int cpu)
{
	in->cpu[cpu].have_rec = false;
}

/* ---- opening ---- */

static struct usertp__dat_input *new_input(const char *name, char *err, size_t err_size)
{
	struct usertp__dat_input *in = calloc(1, sizeof(*in));

	if (!in || !(in->name = strdup(name))) {
		snprintf(err, err_size, "%s: out of memory", name);
		free(in);
		return NULL;
	}
	return in;
}

/* Gives the reason to the caller and frees the input. */
static struct usertp__dat_input *open_failed(struct usertp__dat_input *in, char *err, size_t err_size)
{
	snprintf(err, err_size, "%s", in->err);
	usertp__dat_read_close(in);
	return NULL;
}

static struct usertp__dat_input *finish_open(struct usertp__dat_input *in, char *err, size_t err_size)
{
	if (!in->file_size)
		fail(in, "empty file");
	else if (parse_file(in))
		return in;
	return open_failed(in, err, err_size);
}

struct usertp__dat_input *usertp__dat_read_open_mem(const char *name, const void *data, size_t size,
			       char *err, size_t err_size)
{
	struct usertp__dat_input *in = new_input(name, err, err_size);

	if (!in)
		return NULL;
	in->file = data;
	in->file_size = size;
	return finish_open(in, err, err_size);
}

/* Reads a pipe or other unmappable file to its end. */
static bool slurp(struct usertp__dat_input *in, int fd)
{
	size_t cap = 1 << 16;
	ssize_t n;
	uint8_t *p;

	in->owned = malloc(cap);
	if (!in->owned)
		return fail(in, "out of memory");
	for (;;) {
		if (in->file_size == cap) {
			p = realloc(in->owned, cap * 2);
			if (!p)
				return fail(in, "out of memory");
			in->owned = p;
			cap *= 2;
		}
		n = read(fd, in->owned + in->file_size, cap - in->file_size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail(in, "read: %s", strerror(errno));
		if (!n)
			break;
		in->file_size += n;
	}
	in->file = in->owned;
	return true;
}

struct usertp__dat_input *usertp__dat_read_open(const char *path, char *err, size_t err_size)
{
	struct usertp__dat_input *in = new_input(path, err, err_size);
	struct stat st;
	bool ok;
	int fd;

	if (!in)
		return NULL;
	fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : dup(0);
	if (fd < 0 || fstat(fd, &st) < 0) {
		fail(in, "%s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return open_failed(in, err, err_size);
	}
	if (S_ISREG(st.st_mode) && st.st_size > 0) {
		in->map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		ok = in->map != MAP_FAILED;
		if (ok) {
			in->file = in->map;
			in->file_size = st.st_size;
		} else {
			in->map = NULL;
			ok = slurp(in, fd);
		}
	} else {
		ok = slurp(in, fd);
	}
	close(fd);
	if (!ok)
		return open_failed(in, err, err_size);
	return finish_open(in, err, err_size);
}

void usertp__dat_read_close(struct usertp__dat_input *in)
{
	if (!in)
		return;
	for (int i = 0; in->cpu && i < in->cpus; i++) {
		free(in->cpu[i].page);
		free(in->cpu[i].chunk);
		free(in->cpu[i].damage);
	}
	free(in->cpu);
	if (in->tep) {
		tep_unload_plugins(in->plugins, in->tep);
		tep_free(in->tep);
	}
	if (in->map)
		munmap(in->map, in->file_size);
	free(in->owned);
	free(in->name);
	free(in->cpustat);
	free(in->has_cpustat);
	free(in);
}

const char *usertp__dat_read_name(const struct usertp__dat_input *in)
{
	return in->name;
}

struct tep_handle *usertp__dat_read_tep(const struct usertp__dat_input *in)
{
	return in->tep;
}

int usertp__dat_read_cpus(const struct usertp__dat_input *in)
{
	return in->cpus;
}

int usertp__dat_read_cpus_shown(const struct usertp__dat_input *in)
{
	/* v7 lists only the CPUs with data; its CPUCOUNT option has them all, as trace-cmd shows. */
	return in->cpucount_option > in->cpus ? in->cpucount_option : in->cpus;
}

int usertp__dat_read_cpu_id(const struct usertp__dat_input *in, int index)
{
	return in->cpu[index].id;
}

bool usertp__dat_read_time_in_usecs(const struct usertp__dat_input *in)
{
	return in->in_usecs;
}

const char *usertp__dat_read_latency_text(const struct usertp__dat_input *in, size_t *len)
{
	*len = in->latency_len;
	return in->latency_text;
}

const char *usertp__dat_read_damage(const struct usertp__dat_input *in, int cpu)
{
	return in->cpu[cpu].damage;
}
