/* SPDX-License-Identifier: MIT */
/*
 * session.h - private to libusertp-consumer: what a session is made of, shared by
 * session.c (targets, settings, the programs' messages, reading their buffers), reader.c
 * (records in timestamp order, the tep handle) and dat-writer.c (the trace.dat file).
 *
 * A session holds its programs as sources: one per process image it records (a program that
 * execs is a new source; so is each forked child, with buffers of its own).  A source's
 * buffers are a region of shared memory the program made for the session (src/lib/session.c)
 * and this library maps: its pages are read where they are written.  Complete pages go, in
 * reading mode, to per-CPU queues that usertp_session_next() merges, and in file mode to the
 * spool (dat-writer.c); at the end (the program gone, or the session finishing) the rest is
 * taken from a snapshot.
 */
#ifndef USERTP_CONSUMER_SESSION_H
#define USERTP_CONSUMER_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <usertp/consumer.h>

#include "ctl-proto.h"

#include "dat-merge.h"
#include "private/usertp-consumer-private.h"
#include "pid-list.h"
#include "ring-buffer.h"

#define USERTP__CALL_TIMEOUT_MS 5000
/*
 * Another user's program in root's session of every user: each of its answers is waited for
 * USERTP__FOREIGN_ANSWER_MS (client.h); a user whose program failed to join or be attached
 * so, or lied, is kept out for USERTP__FOREIGN_BAN_MS.  At most USERTP__FOREIGN_BANS users.
 */
#define USERTP__FOREIGN_BAN_MS 10000
#define USERTP__FOREIGN_BANS 16
#define USERTP__MAX_REGION (1ull << 44) /* a program's buffers: 4096 CPUs x 4 GiB */

struct usertp__stream; /* reader.c */
struct usertp__spool;  /* dat-writer.c */

/* One traced process image. */
struct usertp__source {
	pid_t pid;
	char comm[17];
	char name[48];	     /* "comm[pid]", for messages */
	int session;	     /* its session connection: closed by it when it ends */
	int query;	     /* a connection to its endpoint, for ids, formats, thread names */
	bool comms_asked;    /* a "comms" request is out on query: the reply is read later */
	bool ended;	     /* read to the end */
	bool foreign;	     /* another user's program (in root's session of every user) */
	unsigned int unanswered; /* requests whose replies did not come in time: not waited for */
	unsigned int index;  /* in the session's list (and the spool's names) */
	void *map;
	size_t size;
	struct usertp__rb_view *view;
	struct usertp_cpu_stats *stats; /* per CPU of view */
	struct usertp__merge_event *events; /* the formats of the events it records */
	unsigned int nr_events;
	char *comms;	     /* "tid comm" lines */
	struct usertp__source *forked_from; /* the parent whose image it runs (until it execs) */
	struct usertp__spool *spools;	    /* file mode: per CPU */
	unsigned int nr_spools;
	struct usertp__stream *streams;	    /* reading mode: per CPU */
	uint16_t *ids;			    /* reading mode: session id by the source's id */
	unsigned int nr_ids;
};

struct usertp__reader;
struct usertp__writer;

struct usertp_session {
	/* settings */
	unsigned long kb;
	bool overwrite, tsc, tracing;
	unsigned int dat_version; /* of the trace.dat (usertp_session_set_dat_format()) */
	bool dat_compress;
	bool output_nofollow; /* the output is not opened through a symbolic link (--recover) */
	char **specs;
	unsigned int nr_specs;
	struct usertp__session_filter {
		char *events, *text;
	} *filters;		/* as set, in order */
	unsigned int nr_filters;
	struct usertp__pid_list trace_pids, notrace_pids; /* set_event_pid, ..._notrace_pid */
	bool event_fork;
	int remote_err;		/* the errno of the last error reply of a program */
	char *message;		/* message_buffer(): one message of a program */

	/* targets */
	bool all, ran;	      /* attached to all; a command was run */
	pid_t run_pid;	      /* the command usertp_session_run() started */
	bool run_stopped;     /* it was stopped before its main(): a filter did not fit */
	char sock_path[108];  /* our socket */
	char all_path[4096];  /* while attached to all: the all.* link to it (ctl-proto.h) */
	char every_path[108]; /* root's, attached to all: its all.* socket for every user's */
	int listen_fd, every_fd, wake_fd, epoll_fd;
	struct {
		uid_t uid;
		long long until_ms;
	} bans[USERTP__FOREIGN_BANS]; /* users kept out of every_fd for now (accept_one()) */
	struct usertp__source **sources;
	unsigned int nr_sources;
	unsigned int nr_cpus; /* the most CPUs of any source's buffers (at least the machine's) */
	unsigned int untraced; /* programs that joined and could not be recorded */
	unsigned int refused;  /* "refused" news: events not recorded, their filter refused */
	struct {
		char *text; /* every event name the programs told of: "sys:event" lines */
		size_t len, cap;
	} names;

	/* what went wrong, and where the session says what happens */
	char error[512];
	void (*log)(const char *line, void *arg);
	void *log_arg;

	/* per CPU, summed over the sources: events read, dropped, overwritten */
	uint64_t events;
	uint64_t *read, *dropped, *overrun; /* USERTP_MERGE_MAX_CPUS entries */

	struct usertp__reader *reader; /* reading mode */
	struct usertp__writer *dat;       /* file mode */

	/* another source of the file: usertp record's kernel events (usertp__session_extra()) */
	struct usertp__session_extra extra;

	/* for usertp mount (usertp__session_mount_mode()) */
	bool specs_unchecked;
	void (*on_comm)(pid_t tid, const char *comm, void *arg);
	void *on_comm_arg;
};

/* session.c */
USERTP__HIDDEN int usertp__session_fail(struct usertp_session *s, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
USERTP__HIDDEN void usertp__session_log(struct usertp_session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The events a source records learned so far, by the session's specs. */
USERTP__HIDDEN bool usertp__session_selects(const struct usertp_session *s, const char *system,
					    const char *name);

/*
 * A record of @src has an id it has not described yet: its "format" news is on the way
 * (sent before the event could fire, but by another thread).  Take @src's messages until it
 * comes, for at most @wait_ms.  Return: whether the event is known now.
 */
USERTP__HIDDEN bool usertp__session_await_format(struct usertp_session *s,
						 struct usertp__source *src, unsigned int id,
						 int wait_ms);

/* A forked child runs its parent's image: it has the events the parent told of so far. */
USERTP__HIDDEN void usertp__source_inherit(struct usertp_session *s, struct usertp__source *src);

/* reader.c: reading mode */
USERTP__HIDDEN int usertp__reader_new(struct usertp_session *s);
USERTP__HIDDEN void usertp__reader_free(struct usertp_session *s);
/* A source was mapped: its streams.  Return: 0 or -ENOMEM. */
USERTP__HIDDEN int usertp__reader_source(struct usertp_session *s, struct usertp__source *src);
USERTP__HIDDEN void usertp__reader_source_free(struct usertp__source *src);
/* A format a source told of (its id @id): into the tep handle, under the session's id. */
USERTP__HIDDEN void usertp__reader_event(struct usertp_session *s, struct usertp__source *src,
					 unsigned int id, const char *system, const char *format);
USERTP__HIDDEN void usertp__reader_comms(struct usertp_session *s, const char *comms);
/* Take one complete page of @src on @cpu.  Return: 0, or -ENOSPC (queues full: later). */
USERTP__HIDDEN int usertp__reader_page(struct usertp_session *s, struct usertp__source *src,
				       unsigned int cpu, const struct usertp__rb_page_copy *page);
/* Is there room for more pages of @src on @cpu? */
USERTP__HIDDEN bool usertp__reader_room(const struct usertp__source *src, unsigned int cpu);

/* dat-writer.c: file mode */
USERTP__HIDDEN int usertp__writer_source(struct usertp_session *s, struct usertp__source *src);
USERTP__HIDDEN void usertp__writer_source_free(struct usertp__source *src);
/* A page of @src on @cpu (@data: its USERTP__KPAGE_SIZE bytes), to the spool as it is. */
USERTP__HIDDEN int usertp__writer_page(struct usertp_session *s, struct usertp__source *src,
				       unsigned int cpu, const unsigned char *data, uint32_t used,
				       uint64_t lost_before, uint64_t events);
/* After a round of pages of @src on @cpu: on disk. */
USERTP__HIDDEN void usertp__writer_flush(struct usertp_session *s, struct usertp__source *src,
					    unsigned int cpu);
USERTP__HIDDEN void usertp__writer_event(struct usertp_session *s, struct usertp__source *src,
				      unsigned int id, const char *system, const char *format);
USERTP__HIDDEN void usertp__writer_comms(struct usertp_session *s, struct usertp__source *src);
USERTP__HIDDEN int usertp__writer_error(const struct usertp_session *s);
USERTP__HIDDEN uint64_t usertp__writer_bytes(const struct usertp_session *s);
USERTP__HIDDEN void usertp__writer_free(struct usertp_session *s);
/* session.c for dat-writer.c: read what is left of every source, then close them. */
USERTP__HIDDEN void usertp__session_drain(struct usertp_session *s);


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
/* The rest: the page being written, or in overwrite mode everything still there. */
void usertp__ses_source_finish(struct usertp_session *s, struct usertp__source *src);
/* Has @src told of event @id? */
bool usertp__ses_source_has_event(const struct usertp__source *src, unsigned int id);
/* The names of the threads of @src ("tid comm" lines): the latest. */
void usertp__ses_source_keep_comms(struct usertp_session *s, struct usertp__source *src,
				   const char *comms);
/* Keep @format as the format of event @id (of @system) of @src. */
void usertp__ses_source_keep_format(struct usertp_session *s, struct usertp__source *src,
				    unsigned int id, const char *system, const char *format);
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
