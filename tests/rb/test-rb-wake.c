/* SPDX-License-Identifier: MIT */
/*
 * test-rb-wake.c - the consumer's wakeup in producer/consumer mode: a writer sends the
 * consumer's wake socket a word once the consumer asked (reader_wait) and a page opens with a
 * quarter of the buffer or more unconsumed (usertp__rb_wake_pages()), or an event is dropped;
 * once per request, never before the watermark, never without a request.  A descriptor that
 * is no longer the consumer's is left alone, even an eventfd (a program closed ours and opened
 * its own); one given that is no longer what it was when it came is not taken; the
 * consumer's given again (a session resumed) wakes it again.  (An older consumer's eventfd is
 * no longer taken: every eventfd has the same identity, so one of the program's could not be
 * told from it.)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rb-test.h"

#define TAG 0x776bu

/* The consumer's end of its wake socket (a socketpair's), and the other end's identity. */
struct consumer {
	int fd, give; /* ours, and what the buffer is given */
	struct usertp__fd_id give_id;
};

static void consumer_open(struct consumer *c)
{
	int pair[2] = { -1, -1 };

	CHECK_INT(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair), ==, 0);
	c->fd = pair[0];
	c->give = pair[1];
	CHECK_INT(usertp__fd_id_get(c->give, S_IFSOCK, &c->give_id), ==, 0);
}

/* The wakeups the consumer has had since it last looked. */
static uint64_t woken(const struct consumer *c)
{
	uint64_t n = 0, word;

	while (recv(c->fd, &word, sizeof(word), 0) == sizeof(word))
		n += word;
	return n;
}

/* Pages opened so far on CPU 0 (the position's page + 1). */
static uint64_t pages_opened(const struct usertp__rb *rb)
{
	return __atomic_load_n(&rb->cpus[0]->pos, __ATOMIC_RELAXED) / USERTP__KPAGE_SIZE + 1;
}

static void wakeups(void)
{
	struct usertp__rb rb;
	struct usertp__rb_view view;
	struct consumer con, again;
	uint64_t seq = 0;

	consumer_open(&con);
	CHECK_INT(usertp__rb_create(&rb, 1, 64, false), ==, 0); /* 17 pages */
	CHECK_INT(usertp__rb_view_init(&view, rb.region, rb.size), ==, 0);
	usertp__rb_set_wake_fd(&rb, con.give, &con.give_id);

	/* No request: no wakeup, however full. */
	while (pages_opened(&rb) < rb.nr_pages)
		rbt_write(&rb, 0, 100, TAG, seq++, NULL, NULL);
	CHECK_INT(woken(&con), ==, 0);
	/* Consume everything, then ask: nothing until a quarter of the buffer is unconsumed again. */
	CHECK_INT(usertp__rb_wake_pages(rb.nr_pages), ==, rb.nr_pages / 4);
	__atomic_store_n(&rb.cpus[0]->read_page, pages_opened(&rb) - 1, __ATOMIC_RELEASE);
	usertp__rb_wait_request(&view);
	while (pages_opened(&rb) - __atomic_load_n(&rb.cpus[0]->read_page, __ATOMIC_RELAXED) <
	       rb.nr_pages / 4) {
		rbt_write(&rb, 0, 100, TAG, seq++, NULL, NULL);
		if (pages_opened(&rb) - rb.cpus[0]->read_page < rb.nr_pages / 4)
			CHECK_INT(woken(&con), ==, 0);
	}
	CHECK_INT(woken(&con), ==, 1);
	CHECK_INT(rb.cpus[0]->reader_wait, ==, 0);
	/* Once per request: the rest of the buffer and drops wake nobody. */
	for (int i = 0; i < 3000; i++)
		rbt_write(&rb, 0, 100, TAG, seq++, NULL, NULL);
	CHECK(rb.cpus[0]->dropped > 0);
	CHECK_INT(woken(&con), ==, 0);
	/* A request while events are being dropped: the next drop wakes. */
	usertp__rb_wait_request(&view);
	rbt_write(&rb, 0, 100, TAG, seq++, NULL, NULL);
	CHECK_INT(woken(&con), ==, 1);
	/*
	 * The descriptor replaced by something else (a program closed it): left alone, a file
	 * as another eventfd (which has the inode every eventfd has: only the consumer's socket
	 * is told from it).
	 */
	{
		char path[] = "/tmp/test-rb-wake-XXXXXX";
		int file = mkstemp(path), other = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		uint64_t n = 0;
		struct stat st;

		CHECK(file >= 0 && other >= 0);
		unlink(path);
		dup2(file, rb.wake_fd);
		usertp__rb_wait_request(&view);
		rbt_write(&rb, 0, 100, TAG, seq++, NULL, NULL);
		CHECK_INT(fstat(file, &st), ==, 0);
		CHECK_INT(st.st_size, ==, 0);
		dup2(other, rb.wake_fd);
		usertp__rb_wait_request(&view);
		rbt_write(&rb, 0, 100, TAG, seq++, NULL, NULL);
		CHECK_INT((int)read(other, &n, sizeof(n)), ==, -1);
		CHECK_INT(errno, ==, EAGAIN);
		CHECK_INT(woken(&con), ==, 0);
		/*
		 * Given a socket that is an eventfd of the program's by then (the program closed it
		 * as it came, and opened its own under its number): not taken, not closed.
		 */
		consumer_open(&again);
		dup2(other, again.give);
		usertp__rb_set_wake_fd(&rb, again.give, &again.give_id);
		CHECK_INT(rb.wake_fd, ==, -1);
		CHECK_INT(fcntl(again.give, F_GETFD), >=, 0);
		usertp__rb_wait_request(&view);
		rbt_write(&rb, 0, 100, TAG, seq++, NULL, NULL);
		CHECK_INT((int)read(other, &n, sizeof(n)), ==, -1);
		CHECK_INT(errno, ==, EAGAIN);
		close(again.give);
		close(again.fd);
		close(file);
		close(other);
	}
	/* Given again (a resumed session): it wakes the consumer again, the one before left. */
	consumer_open(&again);
	usertp__rb_set_wake_fd(&rb, again.give, &again.give_id);
	usertp__rb_wait_request(&view);
	rbt_write(&rb, 0, 100, TAG, seq++, NULL, NULL);
	CHECK_INT(woken(&again), ==, 1);
	CHECK_INT(woken(&con), ==, 0);
	usertp__rb_destroy(&rb);
	close(con.fd);
	close(again.fd);
}

int main(void)
{
	wakeups();
	return harness_done();
}
