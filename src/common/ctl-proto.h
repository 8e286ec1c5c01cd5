/* SPDX-License-Identifier: MIT */
/*
 * ctl-proto.h - the control protocol between libusertp in a program and its consumers
 * (libusertp-consumer: sessions, usertp record and list); private to both, compiled into each.
 *
 * Where: a per-user runtime directory (usertp__ctl_dir() below says which); created 0700 and
 * refused when it is not ours or others may enter it.  A program's endpoint is
 * "<dir>/<pid>.sock" (a Unix stream socket, 0600); a consumer's session's is
 * "<dir>/record-<pid>.sock" (the first of a process; then "record-<pid>.<n>.sock"), and
 * "<dir>/all/record-<pid>...sock" links to each session that records every program of the
 * user (programs that start join them).  Every connection's peer uid is checked
 * (SO_PEERCRED): the same user or root.
 *
 * Messages: a u32 length (host order, at most USERTP_CTL_MAX_MSG) then that many bytes of
 * text: a word, "key=value" words on the first line, data lines after it (the body).  A
 * message may carry one file descriptor (SCM_RIGHTS).  Replies are "ok" (with keys) or
 * "error <errno-name> <text>".  Every message and every key is in one table below
 * (USERTP_CTL_MESSAGES, and the keys' types and ranges in ctl-proto.c): both sides encode and
 * decode with it, so a new request is one line there.  Keys a message does not know are
 * ignored (those of a newer peer); USERTP_CTL_VERSION, in the hello reply, is raised when a
 * message changes meaning.
 */
#ifndef USERTP_CTL_PROTO_H
#define USERTP_CTL_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#define USERTP_CTL_VERSION 1
#define USERTP_CTL_MAX_MSG (1u << 20)
/*
 * A program's endpoint is made by its control thread as main() begins, not before (the
 * program's start does not wait for it): a consumer looking for the endpoint of a process
 * this young (ms since it started) waits for it until then.
 */
#define USERTP_CTL_STARTING_MS 250
/*
 * A program that closes every descriptor it did not open (a daemon) closes its endpoint's:
 * its control thread looks at theirs at least each USERTP_CTL_SWEEP_MS, and makes the
 * endpoint again at the same path.  A consumer whose knock on such an endpoint is turned away
 * knocks again for USERTP_CTL_REMADE_MS (usertp__client_knock_again()).
 */
#define USERTP_CTL_SWEEP_MS 1000
#define USERTP_CTL_REMADE_MS 3000
/*
 * In the runtime directory's subdirectory "all", one for each session that records every
 * program of the user (usertp record -a, an instance of usertp mount): "all/NAME", a link to
 * its socket NAME.  A program that starts joins each of them (at most USERTP_CTL_MAX_ALL),
 * each session on its own: their settings and buffers are their own.  A directory of their
 * own so that a program's start reads only them, not the endpoints of every program running
 * (or left by programs killed), which are in the runtime directory itself.
 */
#define USERTP_CTL_ALL_DIR "all"
#define USERTP_CTL_MAX_ALL 16
/*
 * Root's sessions of every user's programs (usertp record -a and usertp mount, as root) have
 * their "all.NAME" sockets in the system directory too, open to every user: a directory only
 * root may write in, which the programs of other users look into as well as into their own.
 * USERTP_SYSTEM_DIR names another (an absolute path; tests keep to their own).
 */
#define USERTP_CTL_ALL_PREFIX "all."
/*
 * In the system directory too, "again." and a root's session's socket name: where another
 * user's program that root records by its pid (not of all) joins again, should it close its
 * connection (a daemon): the root's own socket is in a directory only root may enter.  No
 * program joins it otherwise.
 */
#define USERTP_CTL_AGAIN_PREFIX "again."
#define USERTP_CTL_SYSTEM_DIR "/run/usertp"

/*
 * The runtime directory into @buf; with @create, made if missing: $XDG_RUNTIME_DIR/usertp,
 * /run/user/UID/usertp, /tmp/usertp-UID, or when another user made that one first,
 * ~/.cache/usertp-run.  Return: 0, -EPERM when it exists but is not ours alone, or another
 * negative errno.
 */
int usertp__ctl_dir(char *buf, size_t size, bool create);
/* The same; @note gets what was passed over and why (empty if nothing), for a warning. */
int usertp__ctl_dir_note(char *buf, size_t size, bool create, char *note, size_t note_size);
/* The runtime directory of user @uid for a process whose environment is @environ (root). */
int usertp__ctl_dir_of(char *buf, size_t size, uid_t uid, const char *xdg_runtime_dir);

/*
 * The system directory into @buf, if it is there and root's alone to write in (a real
 * directory of uid 0, not writable by others).  With @create, made if missing (root only).
 * Return: 0 or a negative errno (-EPERM when it is not to be trusted).
 */
int usertp__ctl_system_dir(char *buf, size_t size, bool create);

/* Room for the control data of a message passing one descriptor. */
union usertp__ctl_fd_control {
	struct cmsghdr align;
	char buf[CMSG_SPACE(sizeof(int))];
};
/* Make @mh pass descriptor @fd (SCM_RIGHTS), in @control. */
void usertp__ctl_attach_fd(struct msghdr *mh, union usertp__ctl_fd_control *control, int fd);

/* CLOCK_MONOTONIC in milliseconds: the deadlines of every exchange with a peer. */
long long usertp__mono_ms(void);

/* Send one message, with @pass_fd when it is >= 0.  Return: 0 or a negative errno. */
int usertp__ctl_send(int sock, const void *msg, size_t len, int pass_fd);
/* printf-style send. */
int usertp__ctl_sendf(int sock, int pass_fd, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Send an "error" reply of @err (a negative errno) with the reason formatted from @fmt, only
 * if the socket takes it now (to peers we drop).
 */
void usertp__ctl_refuse_nowait(int sock, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Receive one message into @buf (NUL-terminated; @cap includes the NUL), the whole of it
 * within @timeout_ms (-1: no limit).  A descriptor that came with it goes to *fd
 * (-1 if none; fd may be NULL: it is then closed).
 * Return: its length, 0 at end of stream, -ETIMEDOUT, -EMSGSIZE (too long: the stream is
 * then out of step, close it), or another negative errno.
 */
long usertp__ctl_recv(int sock, char *buf, size_t cap, int *fd, int timeout_ms);

/* --- the messages ----------------------------------------------------------------------- */

/* The keys, typed and range-checked by the table in ctl-proto.c. */
enum usertp__ctl_key {
	USERTP_CTL_KEY_PID,	  /* a process: 1..INT32_MAX */
	USERTP_CTL_KEY_PPID,	  /* its parent: 0..INT32_MAX */
	USERTP_CTL_KEY_UID,
	USERTP_CTL_KEY_CPUS,	  /* 1..65536 */
	USERTP_CTL_KEY_VERSION,	  /* of the protocol */
	USERTP_CTL_KEY_SIZE,	  /* of a region of buffers: 1..2^44 bytes */
	USERTP_CTL_KEY_ID,	  /* an event id: 1..65535 */
	USERTP_CTL_KEY_KB,	  /* buffer KiB per CPU: 1..USERTP_RB_MAX_KB */
	USERTP_CTL_KEY_OVERWRITE, /* 0 or 1 */
	USERTP_CTL_KEY_TRACING,	  /* 0 or 1 */
	USERTP_CTL_KEY_CLOCK,	  /* a clock's name */
	USERTP_CTL_KEY_COMM,	  /* a process's name (spaces sent as '_') */
	USERTP_CTL_KEY_RECORDER,  /* a consumer's socket */
	USERTP_CTL_KEY_NAME,	  /* sys:event */
	USERTP_CTL_KEY_EVENTS,	  /* event specs, comma-separated */
	USERTP_CTL_KEY_PIDS,	  /* set_event_pid: thread ids, comma-separated (pid-list.h) */
	USERTP_CTL_KEY_NOTRACE_PIDS, /* set_event_notrace_pid: the same */
	USERTP_CTL_KEY_EVENT_FORK, /* 0 or 1: tracefs's event-fork option */
	USERTP_CTL_KEY_AT_START,  /* 0 or 1: refusals before main() stop the start (at_start) */
	USERTP_CTL_KEY_SINCE,	  /* "comms": the threads noted from this one on; its reply: ask
				   * since this next time */
	USERTP_CTL_KEY_AGAIN,	  /* 0 or 1: a join of a program whose session connection it
				   * closed itself (a daemon closing every descriptor) */
	USERTP_CTL_KEY_REGION,	  /* a fork's: its parent's region of buffers (the memfd's
				   * inode number), which tells the parent's image the child runs */
	USERTP_CTL_NR_KEYS
};
#define USERTP_CTL_K(key) (1u << USERTP_CTL_KEY_##key)

/*
 * Every message: its name, its word, the keys it may carry, the keys it must carry.
 *	requests of a consumer		hello events ids format comms printk start set filter
 *					pids listed enabled sessions stop resume
 *					(resume: on a program's join again=1, the session whose
 *					connection it closed goes on on this one)
 *					(start's body: "SPEC FILTER" lines, the session's filters;
 *					filter's: the filter of events=SPEC, "0" or none to remove;
 *					pids: the session's pid filter, whole: its lists, absent
 *					when empty, and event-fork; listed: the session's
 *					settings as they are now, as "sessions" gives each,
 *					with the threads event-fork added)
 *	to a program that joins		run (after its requests: it may go on)
 *	on a consumer's socket		join (a program that starts; again=1: one that closed
 *					its session's connection itself, as a daemon closes every
 *					descriptor, and joins once more), fork (a forked child,
 *					with its region; region=: its parent's)
 *	news of a program		events format exit refused printk comms (on its session
 *					connection, unasked; comms: the names of threads it noted
 *					since it last told, once 2048 more were; refused: events that
 *					do not take their filter, not recorded, each a line then the
 *					filter file's text;
 *					printk: usertp_printk()'s new formats, to a session recording
 *					ftrace:bprint or bputs, as printk_formats then kallsyms lines)
 *	at_start=1			on a start: the program is the consumer's command, whose
 *					start a filter that does not fit stops; on refused news:
 *					events of its executable or the libraries it links refused,
 *					before main(): it waits for "run" (go on) or its end
 *	replies				ok error
 */
#define USERTP_CTL_MESSAGES(M)                                                                     \
	M(HELLO, "hello", 0, 0)                                                                    \
	M(EVENTS, "events", 0, 0)                                                                  \
	M(IDS, "ids", 0, 0)                                                                        \
	M(FORMAT, "format", USERTP_CTL_K(ID) | USERTP_CTL_K(NAME), 0)                              \
	M(COMMS, "comms", USERTP_CTL_K(SINCE), 0)                                                  \
	M(START, "start",                                                                          \
	  USERTP_CTL_K(KB) | USERTP_CTL_K(OVERWRITE) | USERTP_CTL_K(CLOCK) |                       \
		  USERTP_CTL_K(TRACING) | USERTP_CTL_K(RECORDER) | USERTP_CTL_K(EVENTS) |          \
		  USERTP_CTL_K(PIDS) | USERTP_CTL_K(NOTRACE_PIDS) | USERTP_CTL_K(EVENT_FORK) |     \
		  USERTP_CTL_K(AT_START),                                                          \
	  USERTP_CTL_K(EVENTS))                                                                    \
	M(SET, "set", USERTP_CTL_K(TRACING) | USERTP_CTL_K(EVENTS), 0)                             \
	M(FILTER, "filter", USERTP_CTL_K(EVENTS), USERTP_CTL_K(EVENTS))                            \
	M(PIDS, "pids", USERTP_CTL_K(PIDS) | USERTP_CTL_K(NOTRACE_PIDS) | USERTP_CTL_K(EVENT_FORK), \
	  0)                                                                                       \
	M(LISTED, "listed", 0, 0)                                                                  \
	M(ENABLED, "enabled", 0, 0)                                                                \
	M(SESSIONS, "sessions", 0, 0)                                                              \
	M(STOP, "stop", 0, 0)                                                                      \
	M(RESUME, "resume", 0, 0)                                                                  \
	M(RUN, "run", 0, 0)                                                                        \
	M(JOIN, "join",                                                                            \
	  USERTP_CTL_K(PID) | USERTP_CTL_K(PPID) | USERTP_CTL_K(COMM) | USERTP_CTL_K(AGAIN),       \
	  USERTP_CTL_K(PID))                                                                       \
	M(FORK, "fork",                                                                            \
	  USERTP_CTL_K(PID) | USERTP_CTL_K(PPID) | USERTP_CTL_K(SIZE) | USERTP_CTL_K(REGION),      \
	  USERTP_CTL_K(PID) | USERTP_CTL_K(SIZE))                                                  \
	M(EXIT, "exit", 0, 0)                                                                      \
	M(REFUSED, "refused", USERTP_CTL_K(AT_START), 0)                                           \
	M(PRINTK, "printk", 0, 0)                                                                  \
	M(OK, "ok",                                                                                \
	  USERTP_CTL_K(PID) | USERTP_CTL_K(PPID) | USERTP_CTL_K(UID) | USERTP_CTL_K(CPUS) |         \
		  USERTP_CTL_K(VERSION) | USERTP_CTL_K(COMM) | USERTP_CTL_K(SIZE) |                \
		  USERTP_CTL_K(SINCE),                                                             \
	  0)                                                                                       \
	M(ERROR, "error", 0, 0)

enum usertp__ctl_type {
#define USERTP_CTL_TYPE_(type, word, keys, required) USERTP_CTL_MSG_##type,
	USERTP_CTL_MESSAGES(USERTP_CTL_TYPE_)
#undef USERTP_CTL_TYPE_
	USERTP_CTL_NR_TYPES
};

/* A message, decoded (or to encode: set type, the keys with the setters, arg and body). */
struct usertp__ctl_msg {
	enum usertp__ctl_type type;
	unsigned int has;		      /* USERTP_CTL_K() of the keys present */
	uint64_t num[USERTP_CTL_NR_KEYS];     /* numbers, and flags as 0 or 1 */
	const char *text[USERTP_CTL_NR_KEYS]; /* texts */
	const char *arg;  /* the first line's rest that is not key=value ("format SYS:EVENT";
			   * "error ERRNO text"), or NULL */
	const char *body; /* the lines after the first: "" if none */
};

static inline void usertp__ctl_set_num(struct usertp__ctl_msg *m, enum usertp__ctl_key key, uint64_t v)
{
	m->has |= 1u << key;
	m->num[key] = v;
}

static inline void usertp__ctl_set_text(struct usertp__ctl_msg *m, enum usertp__ctl_key key,
				       const char *text)
{
	m->has |= 1u << key;
	m->text[key] = text;
}

static inline bool usertp__ctl_has(const struct usertp__ctl_msg *m, enum usertp__ctl_key key)
{
	return m->has & (1u << key);
}

/*
 * Decode @buf (a received message, NUL-terminated; changed in place: the message's texts
 * point into it).  Return: 0, or -EINVAL with *why saying what is wrong ("kb= is not a number
 * from 1 to 4194304", "events= is missing", "unknown request 'xyz'"; a static buffer).
 */
int usertp__ctl_decode(char *buf, struct usertp__ctl_msg *m, const char **why);

/*
 * Encode @m as its type's word, its keys, its arg and its body, into *out (to free()).
 * A text with a space or a line break is refused (-EINVAL), but for the comm (spaces become
 * '_').  Return: its length, or a negative errno.
 */
long usertp__ctl_encode(const struct usertp__ctl_msg *m, char **out);

/*
 * An "error" reply: @err's name (a negative errno), then @why (NULL: strerror()), its first
 * line on the message's, the rest as its body; into *out (to free()).  Return: as
 * usertp__ctl_encode().
 */
long usertp__ctl_encode_error(int err, const char *why, char **out);

/* Encode and send @m (with @pass_fd when it is >= 0).  Return: 0 or a negative errno. */
int usertp__ctl_send_msg(int sock, const struct usertp__ctl_msg *m, int pass_fd);

/* An error reply's errno name ("EINVAL") for a negative errno, and back (0: unknown). */
const char *usertp__ctl_errno_name(int err);
int usertp__ctl_errno_of(const char *name, size_t len);

/* The word of message type @type. */
const char *usertp__ctl_word(enum usertp__ctl_type type);

/* Is the peer of @sock the same user as us, or root?  *uid gets its uid. */
bool usertp__ctl_peer_allowed(int sock, uid_t *uid);

/*
 * Connect to the Unix socket at @path; a listener that does not take connections now gives
 * -EAGAIN at once.  Return: the (blocking) socket or a negative errno.
 */
int usertp__ctl_connect(const char *path);
struct usertp__fd_id;
/*
 * The same, the socket's identity noted in *@id as it is made (io.h): for libusertp, inside
 * a program that may close it at any moment and open a file of its own under its number;
 * what it closes on failure is closed only if still its own.  (-EBADF: taken at once.)
 */
int usertp__ctl_connect_id(const char *path, struct usertp__fd_id *id);

#endif /* USERTP_CTL_PROTO_H */
