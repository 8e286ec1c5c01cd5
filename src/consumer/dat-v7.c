/* SPDX-License-Identifier: MIT */
/* dat-v7.c - trace.dat version 7 around the merge's pages (dat-v7.h has the layout). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dat-v7.h"
#include "zstd.h"

/* zstd's fastest regular level: the data is the ring buffer's pages, repetitive (7x at 1). */
#define ZSTD_LEVEL 1

struct usertp__dat7 {
	struct usertp__dat_out *o;
	const struct usertp__dat_source *src;
	unsigned int nr_cpus;
	bool compress;
	struct usertp__zstd_cctx *cctx;
	struct usertp__dat_chunker chunker;
	char strings[256]; /* the sections' names, NUL-terminated one after the other */
	uint32_t strings_len;
	uint64_t options_field; /* where the header says where the options are */
	uint64_t options;	/* the options section (before the data) */
	size_t options_len;	/* its content's length, the same at the start and the end */
	const struct usertp__dat_cpu_stats *stats; /* what the CPUSTAT options say */
	uint64_t sections[6];	/* offsets of sections 16..21 */
	uint64_t flyrecord;	/* of the flyrecord section's header */
	uint64_t *cpu_offset, *cpu_size;
	uint32_t *chunks;
	int error;
};

static void put_u16(struct usertp__dat_out *o, uint16_t v) { usertp__dat_put(o, &v, 2); }
static void put_u32(struct usertp__dat_out *o, uint32_t v) { usertp__dat_put(o, &v, 4); }
static void put_u64(struct usertp__dat_out *o, uint64_t v) { usertp__dat_put(o, &v, 8); }

/* The id of @name in the strings section (its offset there). */
static uint32_t string_id(struct usertp__dat7 *w, const char *name)
{
	size_t len = strlen(name) + 1;
	uint32_t id = w->strings_len;

	for (uint32_t at = 0; at < w->strings_len; at += (uint32_t)strlen(w->strings + at) + 1)
		if (!strcmp(w->strings + at, name))
			return at;
	if (w->strings_len + len > sizeof(w->strings))
		return UINT32_MAX; /* (not with the names below) */
	memcpy(w->strings + w->strings_len, name, len);
	w->strings_len += (uint32_t)len;
	return id;
}

static void section_header(struct usertp__dat7 *w, uint16_t id, uint16_t flags, const char *name,
			   uint64_t size)
{
	put_u16(w->o, id);
	put_u16(w->o, flags);
	put_u32(w->o, string_id(w, name));
	put_u64(w->o, size);
}

static size_t chunk_compress(void *ctx, void *dst, size_t cap, const void *src, size_t len)
{
	return usertp__zstd_compress(ctx, dst, cap, src, len);
}

static void put_content(struct usertp__dat7 *w, struct usertp__dat_out *o, uint16_t id);

/*
 * Section @id's content (put_content()), in memory (through a memory file: its size is not
 * known before).
 * Return: the bytes (to free), *size their number; NULL on an error (w->error).
 */
static unsigned char *render(struct usertp__dat7 *w, uint16_t id, size_t *size)
{
	struct usertp__dat_out *tmp = malloc(sizeof(*tmp));
	int fd = memfd_create("usertp-section", MFD_CLOEXEC);
	unsigned char *raw = NULL;

	if (!tmp || fd < 0) {
		w->error = tmp ? errno : ENOMEM;
		goto out;
	}
	usertp__dat_out_init(tmp, fd);
	put_content(w, tmp, id);
	usertp__dat_flush(tmp);
	*size = (size_t)tmp->pos;
	if (tmp->error || !(raw = malloc(*size + 1)) || pread(fd, raw, *size, 0) != (ssize_t)*size) {
		w->error = tmp->error ? tmp->error : raw ? EIO : ENOMEM;
		free(raw);
		raw = NULL;
	}
out:
	free(tmp);
	if (fd >= 0)
		close(fd);
	return raw;
}

/* The options section's content: its length does not depend on the numbers. */
static void render_options(struct usertp__dat7 *w, struct usertp__dat_out *o)
{
	char clock[96];
	size_t clock_len = usertp__dat_trace_clock(clock, sizeof(clock), w->src);
	const char *clock_name = usertp__dat_clock_name(w->src);

	for (unsigned int i = 0; i < 6; i++) {
		put_u16(o, (uint16_t)(USERTP__DAT_OPTION_HEADER_INFO + i));
		put_u32(o, 8);
		put_u64(o, w->sections[i]);
	}
	put_u16(o, USERTP__DAT_OPTION_TRACECLOCK);
	put_u32(o, (uint32_t)clock_len + 1);
	usertp__dat_put(o, clock, clock_len);
	usertp__dat_put(o, "", 1);
	usertp__dat_put_time_options(o, w->src);
	put_u16(o, USERTP__DAT_OPTION_CPUCOUNT);
	put_u32(o, 4);
	put_u32(o, w->nr_cpus);
	for (unsigned int cpu = 0; w->stats && cpu < w->nr_cpus; cpu++) {
		unsigned char opt[USERTP__DAT_CPUSTAT_MAX];

		usertp__dat_put(o, opt, usertp__dat_cpustat_option(opt, cpu, &w->stats[cpu]));
	}
	put_u16(o, USERTP__DAT_OPTION_BUFFER);
	put_u32(o, 8 + 1 + (uint32_t)strlen(clock_name) + 1 + 4 + 4 + 20 * w->nr_cpus);
	put_u64(o, w->flyrecord);
	usertp__dat_put(o, "", 1); /* the top instance */
	usertp__dat_put(o, clock_name, strlen(clock_name) + 1);
	put_u32(o, USERTP__KPAGE_SIZE);
	put_u32(o, w->nr_cpus);
	for (unsigned int cpu = 0; cpu < w->nr_cpus; cpu++) {
		put_u32(o, cpu);
		put_u64(o, w->cpu_offset[cpu]);
		put_u64(o, w->cpu_size[cpu]);
	}
	put_u16(o, USERTP__DAT_OPTION_DONE);
	put_u32(o, 8);
	put_u64(o, 0); /* no other options section */
}

/* The content of section @id: trace-dat.c's pieces (the same bytes as in version 6), options. */
static void put_content(struct usertp__dat7 *w, struct usertp__dat_out *o, uint16_t id)
{
	switch (id) {
	case USERTP__DAT_OPTION_HEADER_INFO:
		usertp__dat_put_header_info(o, w->src);
		break;
	case USERTP__DAT_OPTION_FTRACE_EVENTS:
		usertp__dat_put_ftrace_formats(o, w->src);
		break;
	case USERTP__DAT_OPTION_EVENT_FORMATS:
		usertp__dat_put_event_formats(o, w->src);
		break;
	case USERTP__DAT_OPTION_KALLSYMS:
		usertp__dat_put_kallsyms(o, w->src);
		break;
	case USERTP__DAT_OPTION_PRINTK:
		usertp__dat_put_printk(o, w->src);
		break;
	case USERTP__DAT_OPTION_CMDLINES:
		usertp__dat_put_cmdlines(o, w->src);
		break;
	case USERTP__DAT_OPTION_DONE:
		render_options(w, o);
		break;
	}
}

/* One metadata section, compressed when the file is. */
static void put_section(struct usertp__dat7 *w, uint16_t id, const char *name)
{
	unsigned char *raw, *packed = NULL;
	size_t size = 0, psize = 0;

	w->sections[id - USERTP__DAT_OPTION_HEADER_INFO] = w->o->pos;
	raw = render(w, id, &size);
	if (!raw)
		return;
	if (w->compress) {
		size_t bound = usertp__zstd_bound(size);

		if (!(packed = malloc(bound + 8)) ||
		    !(psize = usertp__zstd_compress(w->cctx, packed + 8, bound, raw, size))) {
			w->error = packed ? EIO : ENOMEM;
			goto out;
		}
		memcpy(packed, &(uint32_t){ (uint32_t)psize }, 4);
		memcpy(packed + 4, &(uint32_t){ (uint32_t)size }, 4);
		section_header(w, id, USERTP__DAT_SECTION_COMPRESSED, name, 8 + psize);
		usertp__dat_put(w->o, packed, 8 + psize);
	} else {
		section_header(w, id, 0, name, size);
		usertp__dat_put(w->o, raw, size);
	}
out:
	free(packed);
	free(raw);
}

struct usertp__dat7 *usertp__dat7_begin(struct usertp__dat_out *o,
					const struct usertp__dat_source *src,
					unsigned int nr_cpus, bool compress, const char **err)
{
	static const unsigned char magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g',
					       '7', 0, 0 /* little endian */, 8 /* long */ };
	struct usertp__dat7 *w = calloc(1, sizeof(*w));
	unsigned char *options;
	const char *name = compress ? "zstd" : "none";
	const char *version = compress ? usertp__zstd_version() : "";

	*err = "out of memory";
	if (!w)
		return NULL;
	w->o = o;
	w->src = src;
	w->nr_cpus = nr_cpus;
	w->compress = compress;
	w->cpu_offset = calloc(nr_cpus, sizeof(*w->cpu_offset));
	w->cpu_size = calloc(nr_cpus, sizeof(*w->cpu_size));
	w->chunks = calloc(nr_cpus, sizeof(*w->chunks));
	if (compress) {
		size_t chunk = sizeof(o->buf);

		w->cctx = usertp__zstd_cctx_new(ZSTD_LEVEL);
		w->chunker.cap = usertp__zstd_bound(chunk) + 8;
		w->chunker.dst = w->cctx ? malloc(w->chunker.cap) : NULL;
		w->chunker.compress = chunk_compress;
		w->chunker.ctx = w->cctx;
		if (!w->cctx && !usertp__zstd_available())
			*err = "zstd compression: libzstd.so.1 could not be loaded";
	}
	if (!w->cpu_offset || !w->cpu_size || !w->chunks || (compress && !w->chunker.dst)) {
		usertp__dat7_free(w);
		return NULL;
	}
	*err = NULL;
	w->stats = src->cpu_stats; /* (zeros: the final counts go in at the end) */
	usertp__dat_put(o, magic, sizeof(magic));
	put_u32(o, USERTP__KPAGE_SIZE);
	usertp__dat_put(o, name, strlen(name) + 1);
	usertp__dat_put(o, version, strlen(version) + 1);
	w->options_field = o->pos;
	put_u64(o, 0);
	put_section(w, USERTP__DAT_OPTION_HEADER_INFO, "headers");
	put_section(w, USERTP__DAT_OPTION_FTRACE_EVENTS, "ftrace events");
	put_section(w, USERTP__DAT_OPTION_EVENT_FORMATS, "events format");
	put_section(w, USERTP__DAT_OPTION_KALLSYMS, "kallsyms");
	put_section(w, USERTP__DAT_OPTION_PRINTK, "printk");
	put_section(w, USERTP__DAT_OPTION_CMDLINES, "command lines");
	/*
	 * The options before the data, with zeros where the data's places and counts go: they
	 * are set in place at the end (the same length), so that a disk that fills up with
	 * events still has the file's options.
	 */
	string_id(w, "options");
	string_id(w, "buffer flyrecord ");
	string_id(w, "strings");
	section_header(w, USERTP__DAT_OPTION_STRINGS, 0, "strings", w->strings_len);
	usertp__dat_put(o, w->strings, w->strings_len);
	w->options = o->pos;
	options = render(w, USERTP__DAT_OPTION_DONE, &w->options_len);
	if (options) {
		section_header(w, USERTP__DAT_OPTION_DONE, 0, "options", w->options_len);
		usertp__dat_put(o, options, w->options_len);
		free(options);
	}
	if (w->error && !o->error)
		o->error = w->error; /* (the merge stops at the first error of @o) */
	w->flyrecord = o->pos;
	section_header(w, USERTP__DAT_SECTION_FLYRECORD,
		       compress ? USERTP__DAT_SECTION_COMPRESSED : 0, "buffer flyrecord ", 0);
	return w;
}

void usertp__dat7_cpu_begin(struct usertp__dat7 *w, unsigned int cpu)
{
	usertp__dat_put_page_padding(w->o);
	/* The buffer empty: it then fills with whole pages (and a chunk holds pages only). */
	usertp__dat_flush(w->o);
	w->cpu_offset[cpu] = w->o->pos;
	if (!w->compress)
		return;
	w->chunker.count = 0;
	w->o->chunker = &w->chunker;
}

void usertp__dat7_cpu_end(struct usertp__dat7 *w, unsigned int cpu, uint64_t end)
{
	if (w->compress) {
		usertp__dat_flush(w->o);
		w->o->chunker = NULL;
		w->chunks[cpu] = w->chunker.count;
	}
	w->cpu_size[cpu] = end > w->cpu_offset[cpu] ? end - w->cpu_offset[cpu] : 0;
	if (!w->cpu_size[cpu])
		w->chunks[cpu] = 0;
}

static int set_at(int fd, uint64_t at, const void *v, size_t size)
{
	ssize_t n = pwrite(fd, v, size, (off_t)at);

	return n == (ssize_t)size ? 0 : n < 0 ? -errno : -EIO;
}

int usertp__dat7_finish(struct usertp__dat7 *w, uint64_t end,
			const struct usertp__dat_cpu_stats *cpu_stats)
{
	int fd = w->o->fd, ret;
	uint64_t fly_size = end - (w->flyrecord + 16); /* from after its size field */
	unsigned char *options;
	size_t len = 0;

	if (w->src->cpu_stats && cpu_stats)
		w->stats = cpu_stats;
	options = render(w, USERTP__DAT_OPTION_DONE, &len);
	if (!options)
		return -(w->error ? w->error : ENOMEM);
	ret = len == w->options_len ? set_at(fd, w->options + 16, options, len) : -EIO;
	free(options);
	if (!ret)
		ret = set_at(fd, w->options_field, &w->options, 8);
	if (!ret)
		ret = set_at(fd, w->flyrecord + 8, &fly_size, 8);
	for (unsigned int cpu = 0; !ret && cpu < w->nr_cpus; cpu++)
		if (w->compress && w->chunks[cpu])
			ret = set_at(fd, w->cpu_offset[cpu], &w->chunks[cpu], 4);
	return ret;
}

void usertp__dat7_free(struct usertp__dat7 *w)
{
	if (!w)
		return;
	usertp__zstd_cctx_free(w->cctx);
	free(w->chunker.dst);
	free(w->cpu_offset);
	free(w->cpu_size);
	free(w->chunks);
	free(w);
}
