/* SPDX-License-Identifier: MIT */
/*
 * dat-read.h - reads trace.dat files (version 6, and version 7 uncompressed or zstd) as
 * trace-cmd writes them for the kernel and as usertp writes them. Every length and offset of
 * the file is checked: a damaged file gives its events up to the damage, then an error that
 * names the byte offset; it never makes the reader read outside the file or loop.
 */
#ifndef USERTP_DAT_READ_H
#define USERTP_DAT_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event-parse.h>

struct dat_input;

/* Opens a file ("-" is stdin). NULL on failure, with the reason (naming the file and the
 * byte offset where it applies) in err. */
struct dat_input *dat_open(const char *path, char *err, size_t err_size);
/* The same for a file already in memory (the fuzz target); data must outlive the input. */
struct dat_input *dat_open_mem(const char *name, const void *data, size_t size,
			       char *err, size_t err_size);
void dat_close(struct dat_input *in);

const char *dat_name(const struct dat_input *in);
struct tep_handle *dat_tep(const struct dat_input *in);
/* CPUs with a data table entry (their data is read by index, 0 .. dat_cpus() - 1). */
int dat_cpus(const struct dat_input *in);
/* The CPU count trace-cmd prints ("cpus=N"): the machine's, also those without data. */
int dat_cpus_shown(const struct dat_input *in);
/* The number of the CPU at @index. */
int dat_cpu_id(const struct dat_input *in, int index);
/* Whether timestamps are nanoseconds shown as secs.usecs (trace-cmd's rule on clock names). */
bool dat_time_in_usecs(const struct dat_input *in);
/* A latency-format file: plain text instead of ring-buffer pages (NULL otherwise). */
const char *dat_latency_text(const struct dat_input *in, size_t *len);

/*
 * The next record of the CPU at index cpu (0 .. dat_cpus() - 1), not consumed: NULL once the
 * CPU's data ends, or reaches damage (then dat_damage() tells where). record->cpu is the
 * CPU's number, record->missed_events the events lost before it (-1: an unknown number).
 */
struct tep_record *dat_peek(struct dat_input *in, int cpu);
void dat_consume(struct dat_input *in, int cpu);

/*
 * The CPUSTAT option of @cpu (the events the file holds of it, and those its ring buffer
 * overwrote or dropped), as the kernel's per_cpu stats or usertp record wrote it.
 * Return: false when the file has none for that CPU.
 */
struct usertp__dat_cpu_stats;
bool dat_cpu_stats(const struct dat_input *in, int cpu, struct usertp__dat_cpu_stats *st);

/* Damage met while reading the CPU data so far, one message per damaged CPU, or NULL. */
const char *dat_damage(const struct dat_input *in, int cpu);

/* usertp report over one file held in memory, output discarded: the fuzz target's entry
 * (defined in report.c). Always returns 0; what it must never do is crash or hang. */
int usertp_report_fuzz_one(const uint8_t *data, size_t size);

#endif /* USERTP_DAT_READ_H */
