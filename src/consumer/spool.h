/* SPDX-License-Identifier: MIT */
/*
 * spool.h - private to the usertp command: the spool directory of a recording, the one home
 * of its layout.
 *
 * `usertp record -o FILE` keeps what it reads in FILE.spool-XXXXXX/ until it merges it into
 * FILE at the end:
 *
 *	PID-N.cpuC	the pages of source N (process PID) on CPU C, whole ring-buffer pages
 *			in the kernel's format, as read (flushed after each read round)
 *	meta		what the merge needs besides the pages, appended as it is learnt, one
 *			record per write(2), so that a recorder killed at any time leaves a
 *			directory `usertp record --recover` turns into a valid trace.dat:
 *
 *	usertp-spool 1\n			first line
 *	recording cpus=C clock=mono|x86-tsc|tsc2nsec [tsc=T mono=NS boot=ID] [date=US]
 *	          [dat=6|7|7-zstd] output=PATH\n	(tsc2nsec: both clocks at the start, on boot
 *						ID; --date: CLOCK_REALTIME - the clock, in us)
 *	source N pid=PID comm=COMM\n		(forked=M: a child of source M, whose events it has)
 *	event N id=ID system=SYS len=L\n	then the L bytes of the format text
 *	comms N len=L\n				then L bytes of "tid comm" lines (the latest count)
 *	kernel cpus=C\n				the kernel's events are recorded too (-e of
 *						a kernel system), on C CPUs
 *	kernel-event id=ID system=SYS len=L\n	then the L bytes of a kernel event's format
 *	direct N base=B step=S\n		source N's pages are in the direct file
 *	direct		the pages of one source (the first program of the recorder's own user):
 *			those of CPU C from offset B + C * S on (holes between: the file is
 *			sparse), written straight from the program's buffers: with O_DIRECT
 *			where the file system takes it (the disk copies them, not the CPU,
 *			but the write waits for it) while the program's buffer has room to
 *			wait, else buffered (dat-writer.c, spool_direct()).  At the
 *			end, when they can be the file's pages as they are (one program, the
 *			file's ids its own, version 6 uncompressed), the file's header goes in
 *			front of them, the holes are collapsed (fallocate) and the file is
 *			renamed to the output: nothing is read back.  Otherwise they are merged
 *			as any spool.  Used only where the file system collapses ranges.
 *
 * and, with the kernel's events (written when the recording starts, so that --recover of a
 * recorder killed finds them, and so that their room on the disk is taken before the pages'
 * is: at the end they are given back just before the file's header, which holds them, is
 * written):
 *
 *	kernel.cpuC	the kernel's pages on CPU C, as trace_pipe_raw gave them
 *	kernel.kallsyms, kernel.printk_formats, kernel.cmdlines
 *			/proc/kallsyms, printk_formats and saved_cmdlines at the start
 *
 * Reading trusts nothing: a record cut short (the recorder died while writing it) ends the
 * file there; anything malformed is an error naming the line.
 */
#ifndef USERTP_SPOOL_H
#define USERTP_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "dat-merge.h"
#include "tsc2nsec.h"

#define USERTP_SPOOL_META "meta"

/* The path of the spool of source @idx (process @pid) on @cpu. */
int usertp__spool_path(char *buf, size_t size, const char *dir, pid_t pid, unsigned int idx,
		      unsigned int cpu);

/* Writing (errors are the caller's to notice: each returns 0 or a negative errno). */
/*
 * @tsc2nsec_start: with a conversion of ticks to write, both clocks at the start; else NULL.
 * @date_offset_us: --date's offset (0: none).
 */
int usertp__spool_meta_create(const char *dir, unsigned int nr_cpus, bool tsc,
			      const struct usertp__tsc_sample *tsc2nsec_start, uint64_t date_offset_us,
			      unsigned int dat_version, bool dat_compress, const char *output);
int usertp__spool_meta_source(int fd, unsigned int idx, pid_t pid, const char *comm, int forked_from);
int usertp__spool_meta_event(int fd, unsigned int idx, unsigned int id, const char *system,
			    const char *format);
int usertp__spool_meta_comms(int fd, unsigned int idx, const char *comms);
/* usertp_printk()'s lines (printk_formats, then kallsyms lines) source @idx told of. */
int usertp__spool_meta_printk(int fd, unsigned int idx, const char *formats, size_t formats_len,
			      const char *sites, size_t sites_len);
/* The file before was written (usertp_session_rotate()): @output is the one being written. */
int usertp__spool_meta_rotated(int fd, const char *output);
int usertp__spool_meta_kernel(int fd, unsigned int nr_cpus);
int usertp__spool_meta_kernel_event(int fd, unsigned int id, const char *system,
				   const char *format);

/*
 * The direct file of spool @dir, made for @nr_cpus CPUs where the file system can hold and
 * collapse its regions (*@d filled: its descriptors as @mode asks, where the file system
 * takes O_DIRECT, and the regions' base and step).  Return: 0, or a negative errno (no
 * direct file: the spools are files).
 */
#define USERTP_SPOOL_DIRECT "direct"
enum usertp__spool_direct_mode {
	USERTP_SPOOL_DIRECT_MIXED,    /* fd buffered, odirect_fd too: each write chooses */
	USERTP_SPOOL_DIRECT_BUFFERED, /* fd buffered alone */
	USERTP_SPOOL_DIRECT_ODIRECT,  /* fd with O_DIRECT (odirect set) alone */
};
struct usertp__spool_direct {
	int fd;
	bool odirect;
	int odirect_fd; /* the same file with O_DIRECT, for the writes that can wait (-1: none) */
	uint64_t base, step;
};
int usertp__spool_direct_open(const char *dir, unsigned int nr_cpus,
			      enum usertp__spool_direct_mode mode, struct usertp__spool_direct *d);
int usertp__spool_meta_direct(int fd, unsigned int idx, uint64_t base, uint64_t step);
/*
 * Where the data of the region at @start (at most @step long) of @fd ends: the first hole
 * after its first data.
 */
uint64_t usertp__spool_region_end(int fd, uint64_t start, uint64_t step);

/* The kernel's files in the spool @dir: its pages on @cpu, and its texts. */
int usertp__spool_kernel_path(char *buf, size_t size, const char *dir, unsigned int cpu);
#define USERTP_SPOOL_KERNEL_KALLSYMS "kernel.kallsyms"
#define USERTP_SPOOL_KERNEL_PRINTK "kernel.printk_formats"
#define USERTP_SPOOL_KERNEL_CMDLINES "kernel.cmdlines"

/* Reading. */
struct usertp__spool_source {
	pid_t pid;
	char comm[17];
	int forked_from; /* -1, or the index of the parent */
	struct usertp__merge_event *events;
	unsigned int nr_events;
	char *comms;
	char *printk; /* its usertp_printk() lines, all its "printk" records' */
};

struct usertp__spool_meta {
	unsigned int nr_cpus;
	bool tsc;
	bool tsc2nsec;		/* with tsc_start, on boot boot_id */
	struct usertp__tsc_sample tsc_start;
	char boot_id[40];
	uint64_t date_offset_us; /* --date: the DATE option's microseconds (0: none) */
	unsigned int dat_version; /* of the file (6 if the line does not say) */
	bool dat_compress;
	char output[4096];
	struct usertp__spool_source *sources;
	unsigned int nr_sources;
	unsigned int kernel_cpus; /* 0: no kernel events */
	struct usertp__merge_event *kernel_events;
	unsigned int nr_kernel_events;
	int direct_source; /* the source whose pages are in the direct file (-1: none) */
	uint64_t direct_base, direct_step;
};

/* Return: 0, or a negative errno with the reason in @err. */
int usertp__spool_meta_read(const char *dir, struct usertp__spool_meta *meta, char *err,
			   size_t errlen);
void usertp__spool_meta_free(struct usertp__spool_meta *meta);

#endif
