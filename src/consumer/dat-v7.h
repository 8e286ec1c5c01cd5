/* SPDX-License-Identifier: MIT */
/*
 * dat-v7.h - trace.dat version 7, what trace-cmd 3 writes by default, for the merge
 * (dat-merge.c): the layout around the pages that trace-dat.c's pieces fill.
 *
 *	header		magic, "7", endianness, long size, page size, the compression's name and
 *			version ("zstd" "1.5.4", or "none" ""), the offset of the OPTIONS section
 *	sections	16 header formats, 17 ftrace formats, 18 event formats, 19 kallsyms,
 *			20 printk formats, 21 cmdlines: each a 16-byte header (id, flags, name,
 *			size) and its content (compressed: u32 size, u32 raw size, zstd bytes)
 *	strings		section 15: the sections' names
 *	options		section 0: where the sections are, the clock, the CPU count, per CPU its
 *			CPUSTAT, the BUFFER option (each CPU's offset and size), DONE
 *	flyrecord	section 3: per CPU, from a page boundary, its pages (compressed: a u32
 *			count of chunks, then chunks of up to 16 pages, trace-dat.h's chunker)
 *
 * The options come before the data with zeros for what only the end knows, and are set in
 * place then (pwrite; every number has a fixed width), with the header's offset of them, the
 * flyrecord section's size and each CPU's count of chunks: a disk that fills up while the
 * events are written leaves a valid file of the whole pages (chunks) that fitted.
 */
#ifndef USERTP_DAT_V7_H
#define USERTP_DAT_V7_H

#include <stdbool.h>
#include <stdint.h>

#include "trace-dat.h"

struct usertp__dat7;

/*
 * Start a version 7 file in @o (whose fd is at offset 0): the header, the metadata sections,
 * the options, the flyrecord section's header.  @src->cpu_stats: CPUSTAT options (their final
 * counts given to usertp__dat7_finish()), or NULL.  @compress: zstd (libzstd loaded).
 * Return: NULL when out of memory or libzstd is missing (*err says which).
 */
struct usertp__dat7 *usertp__dat7_begin(struct usertp__dat_out *o,
					const struct usertp__dat_source *src,
					unsigned int nr_cpus, bool compress, const char **err);
/* CPU @cpu's pages follow (from a page boundary), until usertp__dat7_cpu_end(). */
void usertp__dat7_cpu_begin(struct usertp__dat7 *w, unsigned int cpu);
/*
 * CPU @cpu's pages are done: its data ends at @end (the file's offset; less than what was
 * written when a write failed and the owner cut a partial chunk or page off).
 */
void usertp__dat7_cpu_end(struct usertp__dat7 *w, unsigned int cpu, uint64_t end);
/*
 * The data ends at @end: the options set in place (@cpu_stats: the CPUSTAT options' final
 * counts, per CPU), and the sizes and counts.  Nothing is appended.
 * Return: 0, or a negative errno.
 */
int usertp__dat7_finish(struct usertp__dat7 *w, uint64_t end,
			const struct usertp__dat_cpu_stats *cpu_stats);
void usertp__dat7_free(struct usertp__dat7 *w);

#endif /* USERTP_DAT_V7_H */
