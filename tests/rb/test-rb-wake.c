/* SPDX-License-Identifier: MIT */
/*
 * test-rb-wake.c - the consumer's wakeup in producer/consumer mode: a writer writes the
 * consumer's eventfd once the consumer asked (reader_wait) and a page opens with a quarter of
 * the buffer or more unconsumed (usertp__rb_wake_pages()), or an event is dropped; once per request, never before the
 * watermark, never without a request; a descriptor that is no longer the eventfd is left
 * alone.
 */
#define _GNU_SOURCE
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rb-test.h"

#define TAG 0x776bu

static uint64_t woken(int efd)
{
	uint64_t n = 0;

	if (read(efd, &n, sizeof(n)) != sizeof(n))
		return 0;
	return n;
}

/* Pages opened so far on CPU 0 (the position's page + 1). */
static uint64_t pages_opened(const struct usertp__rb *rb)
{
	return __atomic_load_n(&rb->cpus[0]->pos, __ATOMIC_RELAXED) / USERTP__KPAGE_SIZE + 1;
}

int main(void)
{
	struct usertp__rb rb;
	struct usertp__rb_view view;
	uint64_t seq = 0;
	int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

	CHECK(efd >= 0);
	CHECK_INT(usertp__rb_create(&rb, 1, 64, false), ==, 0); /* 17 pages */
	CHECK_INT(usertp__rb_view_init(&view, rb.region, rb.size), ==, 0);
	usertp__rb_set_wake_fd(&rb, dup(efd));

	/* No request: no wakeup, however full. */
	while (pages_opened(&rb) < rb.nr_pages)
		rbt_write(&rb, 0, 100, TAG, seq++, NULL, NULL);
	CHECK_INT(woken(efd), ==, 0);
	/* Consume everything, then ask: nothing until a quarter of the buffer is unconsumed again. */
	CHECK_INT(usertp__rb_wake_pages(rb.nr_pages), ==, rb.nr_pages / 4);
	__atomic_store_n(&rb.cpus[0]->read_page, pages_opened(&rb) - 1, __ATOMIC_RELEASE);
	usertp__rb_wait_request(&view);
	while (pages_opened(&rb) - __atomic_load_n(&rb.cpus[0]->read_page, __ATOMIC_RELAXED) <
	       rb.nr_pages / 4) {
		rbt_write(&rb, 0, 100, TAG, seq++, NULL, NULL);
		if (pages_opened(&rb) - rb.cpus[0]->read_page < rb.nr_pages / 4)
			CHECK_INT(woken(efd), ==, 0);
	}
	CHECK_INT(woken(efd), ==, 1);
	CHECK_INT(rb.cpus[0]->reader_wait, ==, 0);
	/* Once per request: the rest of the buffer and drops wake nobody. */
	for (int i = 0; i < 3000; i++)
		rbt_write(&rb, 0, 100, TAG, seq++, NULL, NULL);
	CHECK(rb.cpus[0]->dropped > 0);
	CHECK_INT(woken(efd), ==, 0);
	/* A request while events are being dropped: the next drop wakes. */
	usertp__rb_wait_request(&view);
	rbt_write(&rb, 0, 100, TAG, seq++, NULL, NULL);
	CHECK_INT(woken(efd), ==, 1);
	/* The descriptor replaced by something else (a program closed it): left alone. */
	{
		char path[] = "/tmp/test-rb-wake-XXXXXX";
		int file = mkstemp(path);
		struct stat st;

		CHECK(file >= 0);
		unlink(path);
		dup2(file, rb.wake_fd);
		usertp__rb_wait_request(&view);
		rbt_write(&rb, 0, 100, TAG, seq++, NULL, NULL);
		CHECK_INT(fstat(file, &st), ==, 0);
		CHECK_INT(st.st_size, ==, 0);
		CHECK_INT(rb.wake_fd, ==, -1);
		close(file);
	}
	usertp__rb_destroy(&rb);
	close(efd);
	return harness_done();
}
