/* SPDX-License-Identifier: MIT */
/*
 * trace-dat.h - writing trace.dat (version 6) files: the one home of the format, compiled into
 * libusertp (the embedded recorder writes one process's snapshot) and into the usertp command
 * (src/tool/dat-merge.c merges the recordings of several processes).
 *
 * Everything here is malloc-free and async-signal-safe: the recorder writes from a fatal-signal
 * handler.
 */
#ifndef USERTP_TRACE_DAT_H
#define USERTP_TRACE_DAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ring-buffer.h"

/*
 * Option ids, the same in versions 6 and 7; in version 7 a section has the id of the option
 * that says where it is (16 to 21, the OPTIONS section 0, a buffer's data 3, strings 15).
 */
enum {
	USERTP__DAT_OPTION_DONE = 0,
	USERTP__DAT_OPTION_DATE = 1,
	USERTP__DAT_OPTION_CPUSTAT = 2,
	USERTP__DAT_OPTION_BUFFER = 3,
	USERTP__DAT_OPTION_TRACECLOCK = 4,
	USERTP__DAT_OPTION_UNAME = 5,
	USERTP__DAT_OPTION_OFFSET = 7,
	USERTP__DAT_OPTION_CPUCOUNT = 8,
	USERTP__DAT_OPTION_VERSION = 9,
	USERTP__DAT_OPTION_TSC2NSEC = 14,
	USERTP__DAT_OPTION_STRINGS = 15,
	USERTP__DAT_OPTION_HEADER_INFO = 16,
	USERTP__DAT_OPTION_FTRACE_EVENTS = 17,
	USERTP__DAT_OPTION_EVENT_FORMATS = 18,
	USERTP__DAT_OPTION_KALLSYMS = 19,
	USERTP__DAT_OPTION_PRINTK = 20,
	USERTP__DAT_OPTION_CMDLINES = 21,
	USERTP__DAT_OPTION_BUFFER_TEXT = 22,
	USERTP__DAT_SECTION_FLYRECORD = 3,
};
/* Version 7: a section's flag for compressed content. */
#define USERTP__DAT_SECTION_COMPRESSED 1

/* One recorded event: its system and its format text. */
struct usertp__dat_event {
	const char *system;
	const char *format;
};

/*
 * The events of one CPU that the file holds and that it does not: what trace-cmd records from
 * the kernel's per_cpu/cpuN/stats in a CPUSTAT option and prints with `report --stat`.  Events
 * fired on the CPU = read + overrun + dropped, exactly.
 */
struct usertp__dat_cpu_stats {
	uint64_t read;	  /* records in the file */
	uint64_t overrun; /* overwritten (overwrite mode: older than the oldest page kept) */
	uint64_t dropped; /* not recorded, or recorded and not in the file (full buffer or disk...) */
};

struct usertp__tsc2nsec;

/* What the file needs besides the pages. */
struct usertp__dat_source {
	const struct usertp__dat_event *events;
	unsigned int nr_events;
	const char *cmdlines; /* "pid comm\n" lines */
	size_t cmdlines_len;
	bool raw_clock;	      /* x86-tsc ticks rather than mono nanoseconds */
	/* the ticks' conversion to mono nanoseconds (tsc2nsec.h), for readers; NULL: none */
	const struct usertp__tsc2nsec *tsc2nsec;
	/* usertp record --date: CLOCK_REALTIME less the file's clock, in us (0: no DATE option) */
	uint64_t date_offset_us;
	/* per CPU, for CPUSTAT options; NULL: none.  Fixed width: rewritable in place. */
	const struct usertp__dat_cpu_stats *cpu_stats;
	/* with kernel events: /proc/kallsyms and tracefs's printk_formats (NULL: none) */
	const char *kallsyms, *printk_formats;
	size_t kallsyms_len, printk_formats_len;
};

/*
 * The CPUSTAT option of @cpu (u16 id, u32 size, the text "CPU: N\nentries: 0\noverrun: ...")
 * into @buf (USERTP__DAT_CPUSTAT_MAX bytes); its length does not depend on the numbers.
 * Return: the length.
 */
#define USERTP__DAT_CPUSTAT_MAX 256
/* tracefs's events/header_page and events/header_event: the ring buffer's formats. */
extern const char usertp__dat_header_page[], usertp__dat_header_event[];

size_t usertp__dat_cpustat_option(unsigned char *buf, unsigned int cpu,
				  const struct usertp__dat_cpu_stats *st);
/*
 * The number after "@key: " at the start of a line of @text (@len bytes): the kernel's
 * per_cpu/cpuN/stats and CPUSTAT options.  Return: false if absent or not a number.
 */
bool usertp__dat_stat_value(const char *text, size_t len, const char *key, uint64_t *out);
/* Parse the text of a CPUSTAT option (ours or the kernel's).  Return: false if it is not one. */
bool usertp__dat_cpustat_parse(const char *text, size_t len, unsigned int *cpu,
			       struct usertp__dat_cpu_stats *st);

/* Return: 0, or a negative errno of the first failed write. */
int usertp__trace_dat_write(int fd, const struct usertp__rb_snapshot *snap,
			    const struct usertp__dat_source *src);

/*
 * The pieces, for writers that produce their pages as they go.  Output is buffered; after a
 * failed write nothing more is written, and `written` tells how much of the file is there.
 */
struct usertp__dat_chunker;
struct usertp__dat_out {
	int fd;		  /* -1: only count */
	/* Version 7's compressed CPU data: each flush is one chunk (NULL: written as it is). */
	struct usertp__dat_chunker *chunker;
	int error;	  /* errno of the first failed write, or 0 */
	uint64_t pos;	  /* bytes produced so far */
	uint64_t written; /* of which the file has received */
	uint64_t cpustat_at; /* where the header put its CPUSTAT options (0: none) */
	size_t len;
	unsigned char buf[65536];
};

/*
 * A compressor of chunks: @compress puts @len bytes from @src at @dst (room: @cap) and returns
 * the compressed length, 0 on an error.  What a flush writes: a u32 count of chunks before the
 * first (set in place by the owner, who knows when the data ends), then per chunk a u32
 * compressed size, a u32 raw size (whole pages) and the compressed bytes.  With a chunker, @pos
 * is the file's offset after each flush.
 */
struct usertp__dat_chunker {
	size_t (*compress)(void *ctx, void *dst, size_t cap, const void *src, size_t len);
	void *ctx;
	unsigned char *dst; /* room for the largest chunk compressed, and its 8-byte header */
	size_t cap;
	uint32_t count;	    /* chunks written */
};

/* Start (or restart) producing into @fd, at file offset 0. */
void usertp__dat_out_init(struct usertp__dat_out *o, int fd);
void usertp__dat_put(struct usertp__dat_out *o, const void *data, size_t size);
void usertp__dat_flush(struct usertp__dat_out *o);

/*
 * Everything before the CPU data, page padding excluded: @cpu_offset and @cpu_size give the
 * table of @nr_cpus entries (NULL: zeros, to be rewritten in place later).
 * Return: the file offset of the CPU table (16 bytes per CPU: u64 offset, u64 size).
 */
uint64_t usertp__dat_put_header(struct usertp__dat_out *o, const struct usertp__dat_source *src,
				unsigned int nr_cpus, const uint64_t *cpu_offset,
				const uint64_t *cpu_size);

/*
 * The metadata's parts, the same bytes in versions 6 and 7 (where each is a section): the ring
 * buffer's header formats, the ftrace formats (none), the event systems and their formats,
 * kallsyms, printk formats, the "pid comm" lines.
 */
void usertp__dat_put_header_info(struct usertp__dat_out *o, const struct usertp__dat_source *src);
void usertp__dat_put_ftrace_formats(struct usertp__dat_out *o, const struct usertp__dat_source *src);
void usertp__dat_put_event_formats(struct usertp__dat_out *o, const struct usertp__dat_source *src);
void usertp__dat_put_kallsyms(struct usertp__dat_out *o, const struct usertp__dat_source *src);
void usertp__dat_put_printk(struct usertp__dat_out *o, const struct usertp__dat_source *src);
void usertp__dat_put_cmdlines(struct usertp__dat_out *o, const struct usertp__dat_source *src);
/* The text of tracefs's trace_clock (the clock in brackets) into @buf.  Return: its length. */
/*
 * The trace_clock text of @src's file into @buf: the kernel's list with mono or x86-tsc in
 * brackets, or with a conversion "[tsc2nsec]" (as trace-cmd writes it).  Return: its length.
 */
size_t usertp__dat_trace_clock(char *buf, size_t size, const struct usertp__dat_source *src);
/* The clock's name alone (version 7's BUFFER option). */
const char *usertp__dat_clock_name(const struct usertp__dat_source *src);
/*
 * The options that make the file's times what readers print, in both versions: with a
 * conversion, the TSC2NSEC option (mult, shift, and 0: trace-cmd applies no offset from it)
 * and the OFFSET option (the nanoseconds to add, in text); with a date offset, the DATE
 * option (trace-cmd record --date's: "0x" and the microseconds in hex).
 */
void usertp__dat_put_time_options(struct usertp__dat_out *o, const struct usertp__dat_source *src);

/* Zeros up to the next page boundary: where the CPU data starts. */
void usertp__dat_put_page_padding(struct usertp__dat_out *o);

/* The same page put into @o, from the USERTP__KPAGE_SIZE bytes at @page (left as they are). */
void usertp__dat_put_page(struct usertp__dat_out *o, const unsigned char *page, uint32_t used,
			  uint64_t lost);

#endif
