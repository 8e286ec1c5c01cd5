/* SPDX-License-Identifier: MIT */
/*
 * control-private.h - inside libusertp's control endpoint: the state its two files share.  control.c has the endpoint, its thread, its
 * connections, the news for recorders and joining them; control-serve.c the requests and
 * their replies.
 */
#ifndef USERTP_CONTROL_PRIVATE_H
#define USERTP_CONTROL_PRIVATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/un.h>

#include "io.h"

#define MAX_CONNS 16
#define MAX_REQUEST 65536      /* the longest request served (replies may be longer) */
#define REQUEST_DEADLINE_MS 2000 /* a request must arrive whole this soon after its first byte */
#define OUT_LIMIT (16u << 20)  /* replies a peer leaves unread: past this it is dropped */
#define JOIN_SESSION_MS 10000  /* USERTP_SESSION: the recorder the user started us under */
#define JOIN_ALL_MS 250	       /* `usertp record -a`: a recorder the program did not ask for, */
#define JOIN_ALL_BUSY_MS 2000  /* or longer while it runs (busy taking other programs' joins) */
#define EXIT_FLUSH_MS 200      /* at exit, for the last messages to the recorders */
#define REJOIN_FIRST_MS 10     /* a daemon's joining again that failed (control.c's conn_lost()):
				  tried again this soon, then twice as long each time, up to
				  USERTP_CTL_SWEEP_MS, for as long as its recorder is there */

/* A message waiting to be sent: the u32 length and the text, and a descriptor to pass. */
struct out_msg {
	struct out_msg *next;
	size_t len, off;
	int fd; /* ours (a dup), closed once sent; -1 if none */
	struct usertp__fd_id fd_id; /* what it is (the program may close it meanwhile: io.h) */
	unsigned char data[];
};

/*
 * One connection.  The thread reads it without blocking: each request gathers in @in until
 * it is whole, and must be whole by @deadline; replies and news wait in @out until the peer
 * takes them.  So no peer, however slow, holds up the others or the program.
 */
struct conn {
	int fd;
	struct usertp__fd_id fd_id; /* the socket's identity, checked before each use (io.h) */
	struct usertp__session *session;
	unsigned char *in; /* the request being read: its u32 length, then its text */
	size_t in_len;
	long long deadline; /* ms, CLOCK_MONOTONIC; 0 while no request is begun */
	/*
	 * A descriptor that came with the request ("start", "resume": the recorder's wake
	 * socket), its identity noted as it came (usertp__control_conn_take_fd()).
	 */
	int in_fd;
	struct usertp__fd_id in_fd_id;
	struct out_msg *out, **out_tail;
	size_t out_bytes;
	uint64_t comms_sent; /* a session's: thread names told it up to this note (comm.c) */
	/*
	 * A connection made to join a recorder again (control.c's conn_lost()): the session
	 * whose connection the program closed, recording still, ended once this connection's
	 * session has started (or this connection closes), so that every event goes to one.
	 */
	struct usertp__session *replaces;
	bool news_due; /* resumed: its session hears what it missed once the reply is sent */
};

/*
 * A session whose connection the program closed and whose recorder could not be joined again
 * at once (control.c's rejoins_try()): it records on, its recorder reading on what it writes,
 * and is joined again at @due (ms, CLOCK_MONOTONIC), or ends once that recorder is gone.  Or
 * (@announce) a forked child's session whose recorder was too busy to hear of its buffers as
 * it forked: they record, and are announced at @due, the same way.
 */
struct rejoin {
	struct usertp__session *session; /* NULL: a free entry */
	long long due;
	int pause_ms; /* the last wait: the next one is twice as long */
	bool announce;
};

struct usertp__ctl {
	bool on;   /* the endpoint: not with USERTP_CONTROL=0 */
	pid_t pid; /* 0 until set up (and never with USERTP_CONTROL=0 and no recorder to join) */
	bool thread; /* the thread runs (in this process) */
	bool exiting; /* at_exit() ran: the thread opens no endpoint any more */
	int listen_fd;
	int wake[2]; /* written to make the thread look at the connections again */
	/*
	 * What they are: a program that closes descriptors it did not open (a daemon) takes
	 * them, and the thread makes them again (endpoint_lost()).
	 */
	struct usertp__fd_id listen_id, wake_id[2];
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	pthread_mutex_t lock; /* conns[].fd, .session, .out; rejoins[] changed */
	struct conn conns[MAX_CONNS];
	struct rejoin rejoins[MAX_CONNS]; /* the thread's (changed under lock: a fork() sees them) */
};
/* The endpoint of this process (control.c). */
extern struct usertp__ctl usertp__ctl;

/* A reply being made, and the identity of the descriptor sent with it (if any). */
struct reply {
	char *buf;
	size_t len, cap;
	struct usertp__fd_id fd_id;
};

/* control-conn.c: sending (under usertp__ctl.lock). */
/* @c's socket is @fd from now on (its identity noted). */
void usertp__control_conn_set_fd(struct conn *c, int fd);
/* Close @c's socket if it is still ours (the program may have closed it), and forget it. */
void usertp__control_conn_close_fd(struct conn *c);
/*
 * @fd came with a request on @c, just received: kept as @c's in_fd, its identity noted, if
 * it is the first and a socket (a recorder's wake socket); closed otherwise.
 */
void usertp__control_conn_take_fd(struct conn *c, int fd);
/* Close @c's in_fd, if it is still ours, and forget it. */
void usertp__control_conn_drop_in_fd(struct conn *c);

/*
 * Queue a message on @c, with a copy of @pass_fd, which must still be the object @pass_id
 * notes (else -EBADF: the program closed it, and its number is the program's).
 * Return: 0 or -errno.
 */
int usertp__control_queue_locked(struct conn *c, const char *text, size_t len, int pass_fd,
				 const struct usertp__fd_id *pass_id);
/* Send what the peer takes now.  Return: 0 (sent or waiting) or -errno. */
int usertp__control_flush_locked(struct conn *c);
/*
 * Send @text on @c now if the peer takes it, else leave it to the thread (or, where there is
 * no thread, wait for the peer at most @wait_ms).
 */
int usertp__control_send_locked(struct conn *c, const char *text, size_t len, int pass_fd,
				const struct usertp__fd_id *pass_id, int wait_ms);
/* Drop what @c has queued and what it was reading. */
void usertp__control_free_io(struct conn *c);
/* Make the thread look at the connections again. */
void usertp__control_wake(void);
/* Queue the news @msg (@len bytes) on connection @arg, for its recorder. */
void usertp__control_news_send(const char *msg, size_t len, void *arg);
/*
 * Serve one request of connection @c (@req, changed in place).  Return: the descriptor to
 * send with the reply (its identity in @r->fd_id), -1 for none, -2 for no reply; the reply
 * is in @r.
 */
int usertp__control_serve(struct conn *c, char *req, struct reply *r);
/* The process's name: its main thread's (not the name of the thread asking). */
void usertp__control_process_comm(char *buf, size_t size);
/* Append printf-style text to @r (out of memory: the reply is cut, and refused). */
void usertp__control_reply_add(struct reply *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "tid comm" lines of the threads that recorded, from note @since on; returns the next one. */
uint64_t usertp__control_reply_comms_lines(struct reply *r, uint64_t since);

#endif /* USERTP_CONTROL_PRIVATE_H */
