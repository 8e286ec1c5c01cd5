/* SPDX-License-Identifier: MIT */
/*
 * session.h - private to libusertp-consumer: between the parts of a session, above its core
 * (session-core.h) and its sinks (sinks.h).
 *
 * A session holds its programs as sources: one per process image it records (a program that
 * execs is a new source; so is each forked child, with buffers of its own).  A source's
 * buffers are a region of shared memory the program made for the session (src/lib's
 * remote-session.c) and this library maps: its pages are read where they are written.
 * Complete pages go to the session's sink: in reading mode to per-CPU queues that
 * usertp_session_next() merges (reader.c), in file mode to the spool (dat-writer.c); at the
 * end (the program gone, or the session finishing) the rest is taken from a snapshot.
 *
 * The parts, each calling only those below it:
 *
 *   session.c, session-read.c	the session, running it; the pull API (usertp_session_next())
 *   session-join.c		how programs come and go: attached, run, joining, forked
 *   session-settings.c		settings given to every program at once
 *   session-news.c		what programs say unasked
 *   session-kernel.c		the kernel's events of a session (kernel-rec.c)
 *   session-source.c		one program: its start, its region, what it knows, its pages
 *   session-specs.c		what the specs select; the event names programs told of
 *   reader.c, dat-writer.c	the sinks (sinks.h)
 *   session-core.c		the session's words, its sources' formats (session-core.h)
 */
#ifndef USERTP_CONSUMER_SESSION_H
#define USERTP_CONSUMER_SESSION_H

#include "session-core.h"

/* The events a source records learned so far, by the session's specs. */
bool usertp__session_selects(const struct usertp_session *s, const char *system,
			     const char *name);
/* The session's take_news and await_format (session-core.h). */
void usertp__session_take_news(struct usertp_session *s, struct usertp__source *src);
bool usertp__session_await_format(struct usertp_session *s, struct usertp__source *src,
				  unsigned int id, int wait_ms);
/* Read what is left of every source, then close them (the file's end). */
void usertp__session_drain(struct usertp_session *s);
/*
 * @src is the command usertp_session_run() started and a filter did not fit one of its
 * events (or its start failed): stop it before its main().  Return: whether it was.
 */
bool usertp__ses_command_stop(struct usertp_session *s, const struct usertp__source *src);
/*
 * session-kernel.c: the kernel's events of a session.  Enable (or "!SPEC": disable)
 * @specs, all of them the kernel's; after emptying the kernel's list when @replace.  The
 * instance is made at the first.  Return: 0 or a negative errno (said in s->error).
 */
int usertp__ses_kernel_specs(struct usertp_session *s, const char *const *specs,
			     unsigned int nr_specs, bool replace);
/* The filter of the kernel's events @spec selects.  Return: as usertp_session_set_filter(). */
int usertp__ses_kernel_filter(struct usertp_session *s, const char *spec, const char *filter,
			      char *err, size_t errlen);
/* The session's pid filter and tracing on/off, to the instance.  Return: 0 or -errno. */
int usertp__ses_kernel_settings(struct usertp_session *s);
/*
 * Take the pages the kernel has now: reading, to the reader (s->kernel_took: how many); a
 * file, its full pages into the spool.
 */
void usertp__ses_kernel_read(struct usertp_session *s);
/*
 * A file's kernel part at its end: the last pages, the counts and texts, as the merge's extra
 * source (the instance stays until the session is freed).  Return: 0 or -ENOMEM.
 */
int usertp__ses_kernel_stop(struct usertp_session *s);
/* What the kernel lost so far, all CPUs: dropped and overwritten. */
uint64_t usertp__ses_kernel_dropped(const struct usertp_session *s);
void usertp__ses_kernel_free(struct usertp_session *s);
/*
 * The command usertp_session_run_only() holds: started now (@go), or not at all (it exits
 * 127).  Nothing when none waits.
 */
void usertp__ses_run_release(struct usertp_session *s, bool go);
/* Connect to @src's endpoint if we are not yet; false if it cannot be reached. */
bool usertp__ses_source_query(struct usertp__source *src);

/*
 * --- between the parts of a session: session.c (the session, errors, reading, running),
 * session-source.c (one program), session-join.c (how programs come), session-settings.c
 */

struct usertp__program;

/* Send @req to @src on its session connection and take its answer.  Return: 0 or an errno. */
int usertp__ses_source_call(struct usertp_session *s, struct usertp__source *src,
			    const struct usertp__ctl_msg *req);

/*
 * A program joins (or a traced program's child says it was born).  Another user's (only
 * root's session of every user hears them) is taken at its word only about itself (the pid
 * it gives must be its own, its parent its real one) and is given USERTP__FOREIGN_ANSWER_MS
 * for each answer, as long as such a program waits for us anyway; a user whose peer failed
 * so is kept out for USERTP__FOREIGN_BAN_MS, so that a hostile user holds the session up for
 * 2.5 % at worst.
 */
void usertp__ses_accept_one(struct usertp_session *s, int listen_fd);
/* Attach @prog, found and answering, waiting @timeout_ms at most for each of its answers. */
int usertp__ses_attach_found(struct usertp_session *s, const struct usertp__program *prog,
			     int timeout_ms);
/* Our socket, where programs join and forked children announce themselves. */
int usertp__ses_listen_open(struct usertp_session *s);
/*
 * Root's socket in the system directory where another user's program it records joins again
 * should it close its connection (USERTP_CTL_AGAIN_PREFIX; the all.* one, attached to all):
 * made if there is none.  Return: 0 or a negative errno (said).
 */
int usertp__ses_listen_again(struct usertp_session *s);
/*
 * The session's buffer for one message of a program (USERTP_CTL_MAX_MSG), made when first
 * needed: in the heap, not in each thread's static TLS, where it would cost every thread of
 * the process (each of the mount's FUSE workers) a megabyte it touches.  NULL: no memory.
 */
char *usertp__ses_message_buffer(struct usertp_session *s);
/* Keep "sys:event" (@len bytes) among the names the programs told of. */
void usertp__ses_names_add(struct usertp_session *s, const char *line, size_t len);
/*
 * The session's pid filter into @m (a "pids" request, or a "start"): pids= and notrace_pids=
 * when not empty (@pids gets their texts, to free()), event_fork=.  Return: 0 or -ENOMEM.
 */
int usertp__ses_pid_filter_msg(const struct usertp_session *s, struct usertp__ctl_msg *m,
			       char *pids[2]);
/* Read one message of @src's session connection.  False: the session is over. */
bool usertp__ses_session_message(struct usertp_session *s, struct usertp__source *src);
/*
 * Take one message a program sent on its session connection unasked: "events" (new events:
 * their names), "format" (the format of a new event the session records; before any of it
 * can fire) or "exit" (the names of its threads).  Replies ("ok", "error") are the caller's.
 */
void usertp__ses_session_news(struct usertp_session *s, struct usertp__source *src,
			      const struct usertp__ctl_msg *msg);
/*
 * A "start" (@type) or "set" request with the settings of this moment, into @m; *events (to
 * free()) holds the specs it points to, @pids (to free()) the start's pid lists.
 * Return: 0 or -ENOMEM.
 */
int usertp__ses_settings_msg(const struct usertp_session *s, enum usertp__ctl_type type,
			     struct usertp__ctl_msg *m, char **events, char *pids[2]);
/*
 * The names of its threads, while it runs (a program killed cannot say them at its exit):
 * asked without waiting, the reply read by usertp_session_process(), so that a program slow
 * to answer never holds up the reading of the buffers.
 */
void usertp__ses_source_ask_comms(struct usertp__source *src);
/* Take the reply to usertp__ses_source_ask_comms(). */
void usertp__ses_source_comms_reply(struct usertp_session *s, struct usertp__source *src);
/* Ask the names of its threads and wait for them (a record of thread @tid, not named yet). */
void usertp__ses_source_comms_now(struct usertp_session *s, struct usertp__source *src, pid_t tid);
/* Take the complete pages the source's writers left since last time, to the sink. */
void usertp__ses_source_consume(struct usertp_session *s, struct usertp__source *src);
/* The rest: the page being written, or in overwrite mode everything still there. */
void usertp__ses_source_finish(struct usertp_session *s, struct usertp__source *src);
/*
 * Ask through @sock for the events (their ids), the formats of new ones the session records,
 * and the names of the threads.
 */
void usertp__ses_source_learn(struct usertp_session *s, struct usertp__source *src, int sock,
			      int timeout_ms);
/* Map the region @fd of @size bytes and make @src its source.  Return: 0 or a negative errno. */
int usertp__ses_source_map(struct usertp_session *s, struct usertp__source *src, int fd,
			   size_t size);
/* A new source of @s for process @pid (@comm: its name, or NULL). */
struct usertp__source *usertp__ses_source_new(struct usertp_session *s, pid_t pid,
					      const char *comm);
/* The source of @pid that has not ended, or NULL. */
struct usertp__source *usertp__ses_source_of_pid(const struct usertp_session *s, pid_t pid);
/* The source a forked child's parent was (session-source.c), or NULL. */
struct usertp__source *usertp__ses_parent_of(const struct usertp_session *s, pid_t ppid,
					     uint64_t region);
/* Everything it can tell still, at the end (while it runs, events come unasked). */
void usertp__ses_source_refresh(struct usertp_session *s, struct usertp__source *src);
/* Start a session of @src on @sock; the region comes back.  Return: 0 or a negative errno. */
int usertp__ses_source_start(struct usertp_session *s, struct usertp__source *src, int sock,
			     int timeout_ms);
/* The specs as one events= value ("a,!b,c"), allocated. */
char *usertp__ses_specs_text(const struct usertp_session *s);
/* "sys:event" into its parts; false if it is not that. */
bool usertp__ses_split_event(const char *line, char *system, size_t size, const char **name);

#endif
