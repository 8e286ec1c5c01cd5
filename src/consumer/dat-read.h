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

struct usertp__dat_input;

/* Opens a file ("-" is stdin). NULL on failure, with the reason (naming the file and the
 * byte offset where it applies) in err. */
struct usertp__dat_input *usertp__dat_read_open(const char *path, char *err, size_t err_size);
/* The same for a file already in memory (the fuzz target); data must outlive the input. */
struct usertp__dat_input *usertp__dat_read_open_mem(const char *name, const void *data, size_t size,
			       char *err, size_t err_size);
void usertp__dat_read_close(struct usertp__dat_input *in);

const char *usertp__dat_read_name(const struct usertp__dat_input *in);
struct tep_handle *usertp__dat_read_tep(const struct usertp__dat_input *in);
/* CPUs with a data table entry (their data is read by index, 0 .. usertp__dat_read_cpus() - 1). */
int usertp__dat_read_cpus(const struct usertp__dat_input *in);
/* The CPU count trace-cmd prints ("cpus=N"): the machine's, also those without data. */
int usertp__dat_read_cpus_shown(const struct usertp__dat_input *in);
/* The number of the CPU at @index. */
int usertp__dat_read_cpu_id(const struct usertp__dat_input *in, int index);
/* Whether timestamps are nanoseconds shown as secs.usecs (trace-cmd's rule on clock names). */
bool usertp__dat_read_time_in_usecs(const struct usertp__dat_input *in);
/* A latency-format file: plain text instead of ring-buffer pages (NULL otherwise). */
const char *usertp__dat_read_latency_text(const struct usertp__dat_input *in, size_t *len);

/*
 * The next record of the CPU at index cpu (0 .. usertp__dat_read_cpus() - 1), not consumed: NULL once the
 * CPU's data ends, or reaches damage (then usertp__dat_read_damage() tells where). record->cpu is the
 * CPU's number, record->missed_events the events lost before it (-1: an unknown number).
 */
struct tep_record *usertp__dat_read_peek(struct usertp__dat_input *in, int cpu);
void usertp__dat_read_consume(struct usertp__dat_input *in, int cpu);

/*
 * The CPUSTAT option of @cpu (the events the file holds of it, and those its ring buffer
 * overwrote or dropped), as the kernel's per_cpu stats or usertp record wrote it.
 * Return: false when the file has none for that CPU.
 */
struct usertp__dat_cpu_stats;
bool usertp__dat_read_cpu_stats(const struct usertp__dat_input *in, int cpu, struct usertp__dat_cpu_stats *st);

/* Damage met while reading the CPU data so far, one message per damaged CPU, or NULL. */
const char *usertp__dat_read_damage(const struct usertp__dat_input *in, int cpu);

/* usertp report over one file held in memory, output discarded: the fuzz target's entry
 * (defined in report.c). Always returns 0; what it must never do is crash or hang. */
int usertp_report_fuzz_one(const uint8_t *data, size_t size);

#endif /* USERTP_DAT_READ_H */
