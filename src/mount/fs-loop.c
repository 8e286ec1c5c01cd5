/* SPDX-License-Identifier: MIT */
/*
 * fs-loop.c - usertp mount's request loop (fs-loop.h): libfuse's session served by a pool of
 * threads, as fuse_loop_mt() serves it, except for one kind of request: a read of trace_pipe
 * or trace_pipe_raw that has nothing to give yet.  Such a read is parked (a copy of the
 * request, registered with its instance) instead of holding a thread: it is served when its
 * instance says records came or tracing changed, or answered EINTR when the kernel says the
 * reader was interrupted (FUSE_INTERRUPT).  So any number of readers may wait, as on the
 * kernel's tracefs, and every other file is served meanwhile.
 *
 * The requests are read from /dev/fuse without blocking (each thread polls it beside the
 * queue of parked reads that may go on), and the kernel's request header (linux/fuse.h) is
 * looked at only for FUSE_READ (its file handle, its flags) and FUSE_INTERRUPT (the request
 * it interrupts); everything else goes to libfuse untouched.
 *
 * A parked read has two owners: its instance, which calls fs.c's notify once with it (when
 * the read may go on, or when the instance goes), and this loop, which serves it once (when
 * the notify comes, or an interrupt).  Its state says which came first; the last owner to let
 * go frees it.
 */
#define _GNU_SOURCE
#define FUSE_USE_VERSION 312
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <linux/fuse.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fs-loop.h"

enum park_state { PARKED, READY, CANCELLED };

struct parked {
	struct parked *next;	/* in the parked list, then in the ready queue */
	atomic_int state;	/* enum park_state */
	atomic_int refs;	/* the instance's and ours */
	bool interrupted;	/* served as interrupted (EINTR when nothing is there) */
	uint64_t unique;
	struct fuse_buf buf;	/* the request, copied */
};

static struct {
	struct fuse_session *se;
	const struct usertp__fs_loop_ops *ops;
	unsigned int max_threads;
	pthread_mutex_t lock; /* everything below */
	struct parked *parked;		/* waiting for their instance */
	struct parked *ready, **ready_tail; /* to serve again */
	uint64_t interrupts[64];	/* the last interrupts that found no parked read */
	unsigned int next_interrupt;
	unsigned int threads, idle;
	pthread_cond_t ended;	/* a thread ended */
	atomic_bool exiting;	/* the session ended: threads end, waits end */
	int wake_fd;		/* written when the ready queue gets a read */
} loop = { .lock = PTHREAD_MUTEX_INITIALIZER, .ended = PTHREAD_COND_INITIALIZER, .wake_fd = -1 };

static __thread bool serving_interrupted;

bool usertp__fs_loop_interrupted(void)
{
	/* (At the end, a read that waits in its thread ends too: the session is gone.) */
	return serving_interrupted || atomic_load(&loop.exiting);
}

static void parked_put(struct parked *p)
{
	if (atomic_fetch_sub(&p->refs, 1) == 1) {
		free(p->buf.mem);
		free(p);
	}
}

/* Take @p out of the parked list (under loop.lock). */
static void unlist(struct parked *p)
{
	for (struct parked **at = &loop.parked; *at; at = &(*at)->next) {
		if (*at == p) {
			*at = p->next;
			p->next = NULL;
			return;
		}
	}
}

void usertp__fs_loop_wake(void *handle)
{
	struct parked *p = handle;
	int expected = PARKED;

	if (atomic_compare_exchange_strong(&p->state, &expected, READY)) {
		pthread_mutex_lock(&loop.lock);
		unlist(p);
		if (atomic_load(&loop.exiting)) {
			pthread_mutex_unlock(&loop.lock);
			parked_put(p); /* (ours: nobody serves it any more) */
		} else {
			*loop.ready_tail = p;
			loop.ready_tail = &p->next;
			pthread_mutex_unlock(&loop.lock);
			(void)!write(loop.wake_fd, &(uint64_t){ 1 }, 8);
		}
	}
	parked_put(p); /* the instance's */
}

static struct parked *ready_pop(void)
{
	struct parked *p;

	pthread_mutex_lock(&loop.lock);
	p = loop.ready;
	if (p) {
		loop.ready = p->next;
		if (!loop.ready)
			loop.ready_tail = &loop.ready;
		p->next = NULL;
	}
	pthread_mutex_unlock(&loop.lock);
	return p;
}

static void process(struct fuse_buf *buf, bool interrupted)
{
	serving_interrupted = interrupted;
	fuse_session_process_buf(loop.se, buf);
	serving_interrupted = false;
}

enum { NOT_PARKED, PARKED_NOW, INTERRUPTED_BEFORE };

/*
 * A read: park it if its file is a pipe with nothing to give (the ops say, and register it
 * with the instance).  Return: PARKED_NOW, NOT_PARKED (serve it now), or INTERRUPTED_BEFORE
 * (its interrupt came first: serve it now as interrupted).
 */
static int park_read(const struct fuse_buf *buf, const struct fuse_in_header *h)
{
	const struct fuse_read_in *in = (const void *)(h + 1);
	struct parked *p;
	bool interrupted = false;

	if (buf->size < sizeof(*h) + sizeof(*in) || (in->flags & O_NONBLOCK))
		return NOT_PARKED;
	p = calloc(1, sizeof(*p));
	if (!p || !(p->buf.mem = malloc(buf->size))) {
		free(p);
		return NOT_PARKED;
	}
	memcpy(p->buf.mem, buf->mem, buf->size);
	p->buf.size = buf->size;
	p->unique = h->unique;
	atomic_init(&p->state, PARKED);
	atomic_init(&p->refs, 2);
	/* Listed before the interrupts are looked at: an interrupt finds it, or it finds that. */
	pthread_mutex_lock(&loop.lock);
	for (unsigned int i = 0; i < 64; i++)
		interrupted |= loop.interrupts[i] == h->unique;
	if (!interrupted) {
		p->next = loop.parked;
		loop.parked = p;
	}
	pthread_mutex_unlock(&loop.lock);
	if (!interrupted && loop.ops->park(in->fh, p))
		return PARKED_NOW; /* (the instance has it: its notify, or an interrupt, serves it) */
	if (!interrupted) {
		int expected = PARKED;

		/*
		 * Not parked after all (the instance did not take it).  But it was listed: an
		 * interrupt may have found it meanwhile, and then answers it itself (and frees
		 * it); the instance's reference, never taken, goes here.  (Freed here as well, it
		 * was used after the free, and the read answered twice.)
		 */
		if (!atomic_compare_exchange_strong(&p->state, &expected, READY)) {
			parked_put(p);
			return PARKED_NOW;
		}
	}
	pthread_mutex_lock(&loop.lock);
	unlist(p);
	pthread_mutex_unlock(&loop.lock);
	free(p->buf.mem);
	free(p);
	return interrupted ? INTERRUPTED_BEFORE : NOT_PARKED;
}

/* An interrupt of a parked read: that read is answered now (EINTR, or what came). */
static bool interrupt_parked(const struct fuse_buf *buf, const struct fuse_in_header *h)
{
	const struct fuse_interrupt_in *in = (const void *)(h + 1);
	struct parked *p = NULL;
	int expected = PARKED;

	if (buf->size < sizeof(*h) + sizeof(*in))
		return false;
	pthread_mutex_lock(&loop.lock);
	for (p = loop.parked; p && p->unique != in->unique; p = p->next)
		;
	if (p && atomic_compare_exchange_strong(&p->state, &expected, CANCELLED))
		unlist(p);
	else
		p = NULL;
	if (!p)
		loop.interrupts[loop.next_interrupt++ % 64] = in->unique;
	pthread_mutex_unlock(&loop.lock);
	if (!p)
		return false; /* (libfuse's: a request being served) */
	process(&p->buf, true);
	parked_put(p);
	return true;
}

static void serve(struct fuse_buf *buf)
{
	const struct fuse_in_header *h = buf->mem;
	int parked = NOT_PARKED;

	if (!(buf->flags & FUSE_BUF_IS_FD) && buf->size >= sizeof(*h)) {
		if (h->opcode == FUSE_READ && (parked = park_read(buf, h)) == PARKED_NOW)
			return;
		if (h->opcode == FUSE_INTERRUPT && interrupt_parked(buf, h))
			return;
	}
	process(buf, parked == INTERRUPTED_BEFORE);
}

static void *worker(void *arg);

/* One more thread, if none is idle and there is room (under loop.lock). */
static void grow(void)
{
	pthread_attr_t attr;
	pthread_t t;

	if (loop.idle || loop.threads >= loop.max_threads || atomic_load(&loop.exiting))
		return;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (!pthread_create(&t, &attr, worker, NULL)) {
		loop.threads++;
		loop.idle++;
	}
	pthread_attr_destroy(&attr);
}

static void *worker(void *arg)
{
	struct fuse_buf buf = { .mem = NULL };
	struct pollfd pfd[2] = { { fuse_session_fd(loop.se), POLLIN, 0 }, { loop.wake_fd, POLLIN, 0 } };

	(void)arg;
	while (!fuse_session_exited(loop.se) && !atomic_load(&loop.exiting)) {
		struct parked *p = ready_pop();
		int res;

		if (p) {
			pthread_mutex_lock(&loop.lock);
			loop.idle--;
			grow();
			if (loop.ready) /* (one at a time per thread: wake another for the rest) */
				(void)!write(loop.wake_fd, &(uint64_t){ 1 }, 8);
			pthread_mutex_unlock(&loop.lock);
			/* Served as a new read: parked again if another reader took the records. */
			p->buf.flags = 0;
			serve(&p->buf);
			parked_put(p);
			pthread_mutex_lock(&loop.lock);
			loop.idle++;
			pthread_mutex_unlock(&loop.lock);
			continue;
		}
		if (poll(pfd, 2, 1000) <= 0)
			continue;
		if (pfd[1].revents & POLLIN) {
			uint64_t n;

			(void)!read(loop.wake_fd, &n, sizeof(n));
		}
		if (!(pfd[0].revents & (POLLIN | POLLERR | POLLHUP)))
			continue;
		res = fuse_session_receive_buf(loop.se, &buf);
		if (res == -EAGAIN || res == -EINTR)
			continue;
		if (res <= 0) {
			if (res < 0)
				fuse_session_exit(loop.se);
			break;
		}
		pthread_mutex_lock(&loop.lock);
		loop.idle--;
		grow();
		pthread_mutex_unlock(&loop.lock);
		serve(&buf);
		pthread_mutex_lock(&loop.lock);
		loop.idle++;
		pthread_mutex_unlock(&loop.lock);
	}
	free(buf.mem);
	atomic_store(&loop.exiting, true);
	(void)!write(loop.wake_fd, &(uint64_t){ 1 }, 8); /* (the others see the end too) */
	pthread_mutex_lock(&loop.lock);
	loop.threads--;
	loop.idle--;
	pthread_cond_broadcast(&loop.ended);
	pthread_mutex_unlock(&loop.lock);
	return NULL;
}

int usertp__fs_loop_run(struct fuse_session *se, unsigned int max_threads,
			const struct usertp__fs_loop_ops *ops)
{
	int fd = fuse_session_fd(se), flags = fcntl(fd, F_GETFL);

	loop.se = se;
	loop.ops = ops;
	loop.max_threads = max_threads ? max_threads : 1;
	loop.ready_tail = &loop.ready;
	loop.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (loop.wake_fd < 0 || flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK))
		return -1;
	pthread_mutex_lock(&loop.lock);
	loop.threads++; /* (this one) */
	loop.idle++;
	pthread_mutex_unlock(&loop.lock);
	worker(NULL);
	/*
	 * The others end at once (the wake), or once the request they serve is answered (a
	 * read that waits in its thread: within 100 ms, usertp__fs_loop_interrupted()).
	 */
	pthread_mutex_lock(&loop.lock);
	while (loop.threads)
		pthread_cond_wait(&loop.ended, &loop.lock);
	pthread_mutex_unlock(&loop.lock);
	return 0;
}

void usertp__fs_loop_end(void)
{
	struct parked *ready;

	/* The reads still parked: their instances let them go (usertp__fs_loop_wake()). */
	pthread_mutex_lock(&loop.lock);
	atomic_store(&loop.exiting, true);
	ready = loop.ready;
	loop.ready = NULL;
	loop.ready_tail = &loop.ready;
	pthread_mutex_unlock(&loop.lock);
	while (ready) {
		struct parked *next = ready->next;

		parked_put(ready);
		ready = next;
	}
	if (loop.wake_fd >= 0)
		close(loop.wake_fd);
	loop.wake_fd = -1;
}
