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

#endif
