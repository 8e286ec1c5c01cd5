/* SPDX-License-Identifier: MIT */
/*
 * session-core.h - private to libusertp-consumer: what a session is made of, and the one
 * interface between a session and where its pages go (its sink).  The bottom layer of the
 * library: the session's parts (session.c, session-source.c, session-join.c,
 * session-settings.c, session-read.c, session.h) are above it, and so are its two sinks,
 * the reader of usertp_session_next() (reader.c) and the trace.dat writer (dat-writer.c),
 * which take nothing of the session's but this header and session-core.c (its words, and
 * its sources' formats).
 *
 * A session holds its programs as sources: one per process image it records (a program that
 * execs is a new source; so is each forked child, with buffers of its own).  A source's
 * buffers are a region of shared memory the program made for the session (src/lib/session.c)
 * and this library maps: its pages are read where they are written.  Complete pages go, in
 * reading mode, to per-CPU queues that usertp_session_next() merges, and in file mode to the
 * spool (dat-writer.c); at the end (the program gone, or the session finishing) the rest is
 * taken from a snapshot.
 */
#ifndef USERTP_CONSUMER_SESSION_CORE_H
#define USERTP_CONSUMER_SESSION_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include <usertp/consumer.h>

#include "ctl-proto.h"

#include "dat-merge.h"
#include "private/usertp-consumer-private.h"
#include "pid-list.h"
#include "ring-buffer.h"
#include "tsc2nsec.h"

#define USERTP__CALL_TIMEOUT_MS 5000
/* Joins and forks taken in one look at most (usertp_session_process()). */
#define USERTP__ACCEPTS_PER_LOOK 64
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

/* The most thread names a source keeps (its comms): about 1.4 million threads. */
#define USERTP__COMMS_MAX_BYTES (32u << 20)

/* One traced process image. */
struct usertp__source {
	pid_t pid;
	char comm[17];
	char name[48];	     /* "comm[pid]", for messages */
	int session;	     /* its session connection: closed by it when it ends */
	int query;	     /* a connection to its endpoint, for ids, formats, thread names */
	bool comms_asked;    /* a "comms" request is out on query: the reply is read later */
	uint64_t comms_since; /* the program's note to ask its thread names from (since=) */
	bool comms_full;      /* comms reached USERTP__COMMS_MAX_BYTES */
	bool comms_slow;      /* did not name its threads in time: not waited for again */
	int *unnamed;	      /* threads it was asked for and did not name (a set, or NULL) */
	unsigned int nr_unnamed;
	bool ended;	     /* read to the end */
	bool said_exit;	     /* it told "exit": its connection closes because it ends */
	/*
	 * Its connection closed while it runs, without "exit": it closed it itself (a daemon
	 * closing every descriptor) or exec'd.  Its buffers are read on, and it is read to the
	 * end once it joins again (whatever it wrote meanwhile is kept and counted) or ends.
	 */
	bool orphan;
	bool foreign;	     /* another user's program (in root's session of every user) */
	bool uid_known;	     /* uid: its user, read as it came (it may have ended by then) */
	uid_t uid;
	unsigned int unanswered; /* requests whose replies did not come in time: not waited for */
	unsigned int index;  /* in the session's list (and the spool's names) */
	void *map;
	size_t size;
	uint64_t region_ino;	     /* map's memfd's inode number: how its forked children name it */
	struct usertp__rb_view *view;
	unsigned int nr_cpus;	     /* of view (the kernel's source: of the kernel's buffers) */
	struct usertp_cpu_stats *stats; /* per CPU */
	struct usertp__merge_event *events; /* the formats of the events it records */
	unsigned int nr_events;
	unsigned int *refused;	     /* ids of events whose formats were refused */
	unsigned int nr_refused;
	char *comms;	     /* "tid comm" lines: every thread it named (comms.h) */
	struct usertp__source *forked_from; /* the parent whose image it runs (until it execs) */
	struct usertp__spool *spools;	    /* file mode: per CPU */
	unsigned int nr_spools;
	struct usertp__stream *streams;	    /* reading mode: per CPU */
	uint16_t *ids;			    /* reading mode: session id by the source's id */
	unsigned int nr_ids;
	uint64_t *awaited;		    /* reading mode: a bit per id whose format was
					       waited for in vain (never waited for again) */
};

/*
 * Whether @src records for the session still: connected, or read on after its connection
 * closed while it runs (orphan; usertp_session_status()'s running, record -P waits for it).
 */
static inline bool usertp__source_running(const struct usertp__source *src)
{
	return !src->ended && (src->session >= 0 || src->orphan);
}

struct usertp__reader;
struct usertp__writer;

/* Another source of a session's file (usertp__session_extra()): usertp record's kernel. */
struct usertp__session_extra {
	const struct usertp__merge_source *src;
	const uint64_t *fired, *overrun; /* per CPU, USERTP_MERGE_MAX_CPUS entries */
	const char *cmdlines;		 /* its "pid comm" lines */
	const char *kallsyms, *printk_formats; /* NULL: none */
	size_t kallsyms_len, printk_formats_len;
};

/*
 * Where a session's pages go: the session calls its sink through these alone (it knows no
 * sink by name but where it installs one).  A sink keeps its state in the session's reader or
 * dat, and per source in streams or spools.
 */
struct usertp__sink {
	/* A source was mapped: its per-CPU state.  Return: 0 or -ENOMEM. */
	int (*source_new)(struct usertp_session *s, struct usertp__source *src);
	void (*source_free)(struct usertp__source *src);
	/*
	 * A format a source told of (its own id @id); names of its threads it told of, @lines
	 * ("tid comm": a thread named before may be named again, the later name wins), which
	 * src->comms holds with all those before.
	 */
	void (*event)(struct usertp_session *s, struct usertp__source *src, unsigned int id,
		      const char *system, const char *format);
	void (*comms)(struct usertp_session *s, struct usertp__source *src, const char *lines);
	/* usertp_printk()'s lines @src told of, new to the session (NULL: nothing to do). */
	void (*printk)(struct usertp_session *s, struct usertp__source *src, const char *formats,
		       size_t formats_len, const char *sites, size_t sites_len);
	/* Is there room for more pages of @src on @cpu (NULL: always)? */
	bool (*room)(const struct usertp__source *src, unsigned int cpu);
	/*
	 * One complete page of @src on @cpu holding @events records, a copy (@page).  Return: 0,
	 * or a negative errno (the page is not consumed: it is read later).
	 */
	int (*page)(struct usertp_session *s, struct usertp__source *src, unsigned int cpu,
		    const struct usertp__rb_page_copy *page, uint64_t events);
	/*
	 * With pages_in_place (producer/consumer mode), complete pages are given where they are
	 * in the program's buffer, @n of them in order.  Return: how many were taken (a prefix;
	 * the others are read later), or a negative errno (none was).
	 */
	int (*pages_in_place)(struct usertp_session *s, struct usertp__source *src,
			      unsigned int cpu, const struct usertp__rb_page_ref *pages, unsigned int n);
	/* After a round of pages of @src on @cpu (NULL: nothing to do). */
	void (*flush)(struct usertp_session *s, struct usertp__source *src, unsigned int cpu);
	/* Records are counted as read when they are given to the caller, not when taken. */
	bool counts_when_given;
	void (*free)(struct usertp_session *s);
};

struct usertp_session {
	/* settings */
	unsigned long kb;
	bool overwrite, tracing;
	bool tsc;	/* the buffers count the TSC: wherever it is invariant */
	bool tsc2nsec;	/* ticks in the buffers, nanoseconds in the file (tsc2nsec.h) */
	struct usertp__tsc_sample tsc_start; /* both clocks when the session began */
	struct usertp__clock_conv conv; /* records read live: to the session's printed clock */
	bool file_clock; /* a clock a file can have (mono, x86-tsc, tsc2nsec) */
	struct usertp__clock_choice file_choice; /* its buffers' and the file's, if so */
	unsigned int dat_version; /* of the trace.dat (usertp_session_set_dat_format()) */
	bool dat_compress;
	bool dat_date;		  /* usertp_session_set_dat_date() */
	uint64_t dat_limit;	  /* usertp_session_set_dat_limit(): bytes per program and CPU
				     kept in the spool (0: all) */
	uint64_t date_offset_us;  /* CLOCK_REALTIME - CLOCK_MONOTONIC at the file's start, in us */
	bool output_nofollow; /* the output is not opened through a symbolic link (--recover) */
	char **specs;
	unsigned int nr_specs;
	struct usertp__session_filter {
		char *events, *text;
		bool kernel; /* of the kernel's events: for its instance, not the programs */
	} *filters;		/* as set, in order */
	unsigned int nr_filters;
	struct usertp__pid_list trace_pids, notrace_pids; /* set_event_pid, ..._notrace_pid */
	bool event_fork;
	int remote_err;		/* the errno of the last error reply of a program */
	char *message;		/* message_buffer(): one message of a program */

	/* targets */
	bool all, ran;	      /* attached to all; a command was run */
	pid_t run_pid;	      /* the command usertp_session_run() started */
	int run_release;      /* usertp_session_run_only(): its command's start (a pipe), or -1 */
	bool run_stopped;     /* it was stopped before its main(): a filter did not fit */
	char sock_path[108];  /* our socket */
	struct usertp_session *run_also; /* usertp_session_run_also(): another (NULL: none) */
	char all_path[4096];  /* while attached to all: the all.* link to it (ctl-proto.h) */
	char every_path[108]; /* root's, attached to all: its all.* socket for every user's */
	bool every_again_only; /* every_path is again.*: only for our programs to join again */
	int listen_fd, every_fd, epoll_fd;
	/*
	 * The programs wake us with a word on wake_give, a datagram socketpair's end given to
	 * each (ring-buffer.h's wake_fd), which wake_fd reads.  Not an eventfd: every eventfd
	 * has the same inode, so a program could not tell ours from its own under the number it
	 * had, once it closed ours (a daemon); and no send to it blocks or raises SIGPIPE.
	 */
	int wake_fd, wake_give;
	struct {
		uid_t uid;
		long long until_ms;
	} bans[USERTP__FOREIGN_BANS]; /* users kept out of every_fd for now (accept_one()) */
	struct usertp__source **sources;
	/*
	 * The kernel's events of a session (session-kernel.c): a tracefs instance of its own;
	 * reading, its records as one more source, not a program (pid 0), that the reader reads;
	 * a file, its spools and, at the end, the merge's extra source.
	 */
	struct usertp__kernel_rec *kernel;
	struct usertp__source *kernel_src;
	uint64_t *kernel_pages;	  /* per CPU: pages taken (their numbers for the reader) */
	unsigned int kernel_took; /* pages the last usertp_session_process() took */
	unsigned int kernel_told; /* of its formats, those taken (by the reader, or the spool) */
	struct usertp__merge_source kernel_merge; /* a file's: at its end, for the merge */
	uint64_t *kernel_fired, *kernel_overrun;  /* per CPU, at the end */
	uint64_t looked_at;	  /* the session's clock at the last usertp_session_process() */
	bool kernel_lost_said;
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

	const struct usertp__sink *sink; /* where pages go (NULL: nowhere yet) */
	struct usertp__reader *reader;	 /* its state, reading mode (reader.c) */
	struct usertp__writer *dat;	 /* its state, file mode (dat-writer.c) */
	int write_error;		 /* file mode: the first failed write, or 0 */
	uint64_t bytes;			 /* file mode: written so far */
	/*
	 * A record of @src has an id it has not described yet: its "format" news is on the way
	 * (sent before the event could fire, but by another thread).  Take @src's messages until
	 * it comes, for at most @wait_ms.  Return: whether the event is known now.  (The
	 * session's, session-join.c, for the reader.)
	 */
	bool (*await_format)(struct usertp_session *s, struct usertp__source *src,
			     unsigned int id, int wait_ms);
	/* What @src has said on its session connection already, taken now (no wait).  (Idem.) */
	void (*take_news)(struct usertp_session *s, struct usertp__source *src);

	/* another source of the file: usertp record's kernel events (usertp__session_extra()) */
	struct usertp__session_extra extra;
	/*
	 * usertp_printk()'s formats and call sites the programs told of (bprint.h), checked and
	 * each key once: the texts of the file's printk_formats and kallsyms sections.
	 */
	struct usertp__session_printk {
		char *formats, *sites;
		size_t formats_len, sites_len;
		uint64_t *keys; /* those kept: formats' and sites' */
		unsigned int nr_keys, cap;
	} printk;

	/* for usertp mount (usertp__session_mount_mode()) */
	bool specs_unchecked;
	void (*on_comm)(pid_t tid, const char *comm, void *arg);
	void *on_comm_arg;
};

/*
 * The public structures a caller allocates (usertp/consumer.h): is @p's struct_size at least
 * this version's first (up to its field @last)?  And @src (this version's whole @size bytes)
 * given to the caller's @dst, no further than its struct_size (which stays).
 */
#define USERTP__STRUCT_OK(p, type, last)                                                           \
	((p) && (p)->struct_size >= offsetof(struct type, last) + sizeof(((struct type *)0)->last))
static inline void usertp__struct_give(void *dst, const void *src, size_t size)
{
	size_t room;

	memcpy(&room, dst, sizeof(room));
	if (room > size)
		room = size;
	memcpy((char *)dst + sizeof(size_t), (const char *)src + sizeof(size_t),
	       room - sizeof(size_t));
}

/* session-core.c: the session's words, and its sources' formats */
USERTP__HIDDEN int usertp__session_fail(struct usertp_session *s, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
USERTP__HIDDEN void usertp__session_log(struct usertp_session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Has @src told of event @id? */
USERTP__HIDDEN bool usertp__source_has_event(const struct usertp__source *src, unsigned int id);
/* Has @src told of event @id in a format that was refused (not asked for, or said, again)? */
USERTP__HIDDEN bool usertp__source_refused(const struct usertp__source *src, unsigned int id);
/* Free what @src was told of its events (the formats kept and the ids refused). */
USERTP__HIDDEN void usertp__source_free_formats(struct usertp__source *src);
/* Keep @format as the format of event @id (of @system) of @src, and tell the sink; a format
 * that does not pass usertp__format_check() is refused (said once, its id remembered). */
USERTP__HIDDEN void usertp__source_keep_format(struct usertp_session *s,
					       struct usertp__source *src, unsigned int id,
					       const char *system, const char *format);
/* The names of the threads of @src ("tid comm" lines): the latest, and tell the sink. */
USERTP__HIDDEN void usertp__source_keep_comms(struct usertp_session *s,
					      struct usertp__source *src, const char *comms);
/*
 * A program's "printk" news (@text: printk_formats lines, then kallsyms lines, bprint.h): the
 * lines that are well-formed, of keys in user space's range and new to the session, kept
 * (up to USERTP__PRINTK_TEXT_MAX bytes in all: another user's program is not trusted) and
 * given to the sink.  A key told again keeps its first text.
 */
#define USERTP__PRINTK_TEXT_MAX (4u << 20)
USERTP__HIDDEN void usertp__session_keep_printk(struct usertp_session *s,
						struct usertp__source *src, const char *text);
USERTP__HIDDEN void usertp__session_printk_free(struct usertp_session *s);
/* A forked child runs its parent's image: it has the events the parent told of so far. */
USERTP__HIDDEN void usertp__source_inherit(struct usertp_session *s, struct usertp__source *src);

#endif
