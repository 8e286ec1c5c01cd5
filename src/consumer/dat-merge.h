/* SPDX-License-Identifier: MIT */
/*
 * dat-merge.h - private to the usertp command: one trace.dat (version 6) file from the
 * recordings of several processes.
 *
 * `usertp record` drains each traced process's per-CPU ring buffers into spool files: per
 * process (a source) and per CPU, whole pages of USERTP__KPAGE_SIZE bytes in the kernel's
 * sub-buffer format (u64 timestamp, u64 commit, entries).  usertp__merge_write() turns them into
 * one file:
 *
 *   - the events of all sources, merged per CPU in timestamp order (equal timestamps keep the
 *     order of the sources), copied into new pages; a source's page whose records nothing
 *     else goes between goes to the file as it is (the programs' writer lays records out as
 *     the kernel does), only their ids rewritten;
 *   - one event id space: events with the same system, name and format text share one id,
 *     records get that id as common_type, and each format text carries it in its "ID:" line;
 *   - events a source lost (commit bit 31, with bit 30 their count stored after the entries)
 *     marked where they happened: the page holding the source's next event is flagged, so that
 *     readers print "[N EVENTS DROPPED]" before it;
 *   - the sources' saved cmdlines, the trace clock option (mono, or x86-tsc), in->nr_cpus CPUs.
 *
 * Spool pages are not trusted: a malformed one is skipped with a warning on stderr (and marked
 * as lost events of unknown number); records whose id their source did not declare are left
 * out and counted.  Memory stays bounded: 256 KiB read ahead per source, one output page.
 *
 * The header (with a CPU table of zeros) is written first, then each CPU's pages; the table
 * entry of a CPU is rewritten in place (pwrite) as soon as its pages are all written, so the
 * file is valid at every CPU boundary.  A failed write (a full disk...) stops the merge: the
 * table then describes the whole pages already written, the file is cut after them, and the
 * error is returned.
 */
#ifndef USERTP_DAT_MERGE_H
#define USERTP_DAT_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "private/usertp-consumer-private.h"

/* One event type of one source. */
struct usertp__merge_event {
	unsigned int id;    /* its common_type in that source's records */
	const char *system;
	const char *format; /* the tracefs "format" text: "name: NAME\nID: N\n..." */
};

/* One traced process. */
struct usertp__merge_source {
	const char *name; /* for warnings, e.g. "worker-pool[4242]"; NULL: "source N" */
	const struct usertp__merge_event *events;
	unsigned int nr_events;
	unsigned int nr_cpus; /* entries of cpu_fd; at most the input's nr_cpus */
	const int *cpu_fd;    /* per CPU: a file of whole pages, read with pread from offset 0
			       * (read() if it is a pipe); -1 or an empty file: no data */
	/* per CPU, where the pages are in cpu_fd, and how many bytes (NULL: the whole file) */
	const uint64_t *cpu_base, *cpu_len;
	/* for an adopted source (below): per CPU, its records and the losses its pages mark */
	const uint64_t *cpu_events, *cpu_lost;
};

struct usertp__merge_input {
	const struct usertp__merge_source *sources;
	unsigned int nr_sources;
	unsigned int nr_cpus; /* of the machine: the file's CPU count (1..USERTP_MERGE_MAX_CPUS) */
	const char *cmdlines; /* "pid comm\n" lines of all sources */
	size_t cmdlines_len;
	/* with kernel events: /proc/kallsyms and printk_formats, as trace-cmd includes them */
	const char *kallsyms, *printk_formats;
	size_t kallsyms_len, printk_formats_len; /* (each below 4 GiB) */
	bool raw_clock;	      /* x86-tsc ticks instead of mono nanoseconds */
	/* the ticks' conversion to mono nanoseconds (tsc2nsec.h) the file says; NULL: none */
	const struct usertp__tsc2nsec *tsc2nsec;
	uint64_t date_offset_us; /* the DATE option's (trace-dat.h); 0: none */
	bool release_spools;  /* punch the spools' pages out as they are read: on a full disk
			       * the file can then take the space they held (the spools are
			       * used up) */
	/*
	 * Per CPU (nr_cpus entries; NULL: the file says nothing of them): events fired, and of
	 * those overwritten.  The file's CPUSTAT options then give, per CPU, the records it
	 * holds, the overwritten, and as dropped all the others (dropped by the buffers, left
	 * out, cut by a full disk): the three add up to the events fired.
	 */
	const uint64_t *fired, *overrun;
	/* the file's format: version 6 (0 too) or 7; compressed (version 7 only): zstd */
	unsigned int file_version;
	bool compress;
	/*
	 * Source adopt - 1 (0: none) has its pages in the output file itself (its cpu_fd), at
	 * cpu_base, past all the merge writes.  If it is the only source with pages, its ids are
	 * the file's and the file is version 6 uncompressed, its pages become the file's where
	 * they are: each CPU's are moved down behind what is before them (fallocate's collapse:
	 * no byte is read or written) and the file is cut after the last.  Otherwise nothing is
	 * written and -EXDEV returned (merge into another file).
	 */
	unsigned int adopt;
};

/* What went into the file (about 64 KiB: keep it off small stacks). */
struct usertp__merge_stats {
	uint64_t events[USERTP_MERGE_MAX_CPUS]; /* records in the file, per CPU */
	uint64_t lost[USERTP_MERGE_MAX_CPUS];	/* events lost by the sources, by the counts
						 * marked in the file's pages, per CPU */
	uint64_t file_lost[USERTP_MERGE_MAX_CPUS]; /* with in->fired: fired - events, per CPU,
						    * as the file's CPUSTAT says */
	uint64_t pages;	    /* pages of CPU data in the file */
	uint64_t size;	    /* bytes of the file */
	uint64_t dropped;   /* records left out: no id, or one their source did not declare */
	uint64_t bad_pages; /* spool pages skipped: malformed, cut short or unreadable */
};

/**
 * usertp__merge_write() - write the trace.dat file merged from @in to @out_fd.
 * @out_fd: an empty regular file open for writing, at offset 0 (it is rewritten with pwrite
 *	    and cut with ftruncate)
 * @stats: filled in, also on failure (then it describes what the file kept); may be NULL
 * @err: on failure, a message of at most @errlen bytes, such as
 *	 "write: No space left on device at offset 123456; kept 30 whole pages (126976 bytes)"
 *
 * Return: 0, or a negative errno: -EINVAL for input that cannot be written (no CPUs, too many,
 * a source with more CPUs than the file), -EXDEV (in->adopt, not adoptable), -ENOMEM, or the
 * error of a failed write.
 */
int usertp__merge_write(int out_fd, const struct usertp__merge_input *in,
		       struct usertp__merge_stats *stats, char *err, size_t errlen);

#endif /* USERTP_DAT_MERGE_H */
