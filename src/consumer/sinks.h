/* SPDX-License-Identifier: MIT */
/*
 * sinks.h - private to libusertp-consumer: the two sinks of a session's pages
 * (session-core.h's struct usertp__sink), and what each gives the session besides.
 *
 *   reader.c	  reading mode: per-CPU queues of pages, records in timestamp order, the tep
 *		  handle that knows their formats (the default, made with the session)
 *   dat-writer.c file mode: spools on disk, merged into one trace.dat at the end
 */
#ifndef USERTP_CONSUMER_SINKS_H
#define USERTP_CONSUMER_SINKS_H

#include "session-core.h"

/* reader.c */
/* Make @s a reading session.  Return: 0 or -ENOMEM. */
USERTP__HIDDEN int usertp__reader_new(struct usertp_session *s);
/* The timestamp of the record usertp__reader_give_record() would give now, if there is one. */
USERTP__HIDDEN bool usertp__reader_next_ts(struct usertp_session *s, uint64_t *ts);
/* The record with the smallest timestamp of all streams into @rec, if there is one now. */
USERTP__HIDDEN bool usertp__reader_give_record(struct usertp_session *s, struct usertp_record *rec);
/*
 * The queued page with the smallest timestamp of all streams into @page, if there is one now
 * (valid until the next call).
 */
USERTP__HIDDEN bool usertp__reader_give_page(struct usertp_session *s, struct usertp_page *page);
/* Free the page given last. */
USERTP__HIDDEN void usertp__reader_page_done(void);

/* dat-writer.c */
/*
 * The file, from every source (each read to its end) and the session's extra source: the
 * merge of the spools, with the counts of what was fired.  Return: 0 or a negative errno.
 */
USERTP__HIDDEN int usertp__writer_finish(struct usertp_session *s, struct usertp_dat_summary *sum);

/* dat-writer.c, for session-kernel.c: a file's kernel part. */
/*
 * One more source for the file the session writes at usertp_session_finish(): @x->src, with
 * its events fired and overwritten per CPU, its "pid comm" lines (those of pids the programs
 * named are left out), kallsyms and printk formats.  All kept by the caller until then.
 * usertp record's kernel events, which the kernel records (src/tool/kernel-rec.h).
 */
USERTP__HIDDEN void usertp__session_extra(struct usertp_session *s,
					  const struct usertp__session_extra *x);

/*
 * The spool directory of the session's file (spool.h), after usertp_session_write_dat():
 * where usertp record's kernel pages are spooled (kernel.cpuC), so that --recover finds them.
 * NULL: no file.
 */
USERTP__HIDDEN const char *usertp__session_spool_dir(const struct usertp_session *s);
/*
 * What the spool needs besides the kernel's pages to make them a file again: its CPUs, the
 * formats of its events, and the texts of @x (kallsyms, printk formats, "pid comm" lines),
 * written now.  Return: 0 or a negative errno (said in the session's error).
 */
USERTP__HIDDEN int usertp__session_spool_kernel(struct usertp_session *s, unsigned int nr_cpus,
						const struct usertp__merge_event *events,
						unsigned int nr_events,
						const struct usertp__session_extra *x);
/* The format of one more of the kernel's events, to the spool's meta (for a recovery). */
USERTP__HIDDEN int usertp__writer_kernel_event(struct usertp_session *s,
					       const struct usertp__merge_event *ev);

#endif
