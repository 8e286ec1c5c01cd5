/* SPDX-License-Identifier: MIT */
/*
 * layout-main.c - the host of the layouts test: it fires the events of whatever layout it is
 * built into (layout-fire.c linked in, or in a library), or of a plugin it dlopen()s.
 *
 *	layout-HOST [-d MODULE [-g] [-u [-k]] [-D MODULE2]] [-x] [-w] [-c FILE] [-F] THREADS N
 *
 *	-d MODULE	dlopen() it (RTLD_LOCAL, -g: RTLD_GLOBAL) and call its functions
 *	-u		dlclose() it, then (with -w, after the line) open it again and fire, as a
 *			host does that loads its plugins when it needs them: a recorder that
 *			attaches meanwhile finds libusertp (which stays) but not the events
 *	-k		with -u: the module must still be loaded after the dlclose() (it holds
 *			libusertp's code, linked statically, whose thread runs; exit 3 if not)
 *	-D MODULE2	dlopen() it too (RTLD_LOCAL), after MODULE, and leave it loaded: a
 *			second plugin that holds the static libusertp as MODULE does
 *	-x		threads from C++ std::thread, not pthread_create()
 *	-w		print "ready" and wait for a line on stdin before firing
 *	-c FILE		first close every descriptor above 2, as a daemon does when it starts
 *			(libusertp's among them), then open FILE, a file of its own, whose
 *			numbers are free now, and eventfds after it, as an event loop does;
 *			write a line to FILE before firing and one after, and check at the end
 *			that it holds both, and only them, and that no eventfd was written to
 *			(exit 4 if not)
 *	-C FILE		the same, 100 ms later (libusertp's thread asleep by then)
 *	-A FILE		the same, after the line (-w): a daemon that closes them once a
 *			recorder has attached
 *	-r N		with -c, -C or -A: after the closing, the next N connect()s (libusertp's
 *			to join its recorder again) fail with EAGAIN, as they do when the
 *			recorder is too busy to take them (its backlog full); it fires once
 *			they have (10 s at most), and ends once one more was tried (10 s)
 *	-F		a forked child fires the events (and prints "fired E"); the parent
 *			waits for it.  With -r N, the child's first N connect()s fail so (its
 *			announce of its buffers to the recorder): it fires once they have, and
 *			ends once the announce was sent (10 s at most)
 * Prints "fired E" (the events fired) and exits 0; 1 when a thread could not be made.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "layout.h"

typedef int fire_fn(int, int);

/* dlopen() @module with @mode and find its functions.  Return: its handle, NULL (said). */
static void *load(const char *module, int mode, fire_fn **fire, fire_fn **fire_std)
{
	void *h = dlopen(module, RTLD_NOW | mode);

	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return NULL;
	}
	*fire = (fire_fn *)dlsym(h, "layout_fire");
	*fire_std = (fire_fn *)dlsym(h, "layout_fire_std");
	return h;
}

/* -r: connect()s to fail after the closing (-c, -C, -A): the count, and whether it began;
 * with -F, in the forked child (any process but fail_unless_in, the parent). */
static int connects_to_fail;
static bool closed_all;
static pid_t fail_unless_in;

static int (*real_connect)(int, const struct sockaddr *, socklen_t);
static ssize_t (*real_sendmsg)(int, const struct msghdr *, int);

/* The libc functions these wrap (before a fork too: a child may not call dlsym()). */
static void find_real(void)
{
	if (!__atomic_load_n(&real_connect, __ATOMIC_ACQUIRE))
		__atomic_store_n(&real_connect,
				 (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT,
											 "connect"),
				 __ATOMIC_RELEASE);
	if (!__atomic_load_n(&real_sendmsg, __ATOMIC_ACQUIRE))
		__atomic_store_n(&real_sendmsg,
				 (ssize_t (*)(int, const struct msghdr *, int))dlsym(RTLD_NEXT,
										     "sendmsg"),
				 __ATOMIC_RELEASE);
}

/*
 * (libusertp's connect() comes here, in each layout: the executables export it, a plugin's
 * libusertp binds to it.)
 */
__attribute__((visibility("default"))) int connect(int fd, const struct sockaddr *addr,
						   socklen_t len)
{
	find_real();
	if ((__atomic_load_n(&closed_all, __ATOMIC_ACQUIRE) ||
	     (fail_unless_in && getpid() != fail_unless_in)) &&
	    __atomic_fetch_sub(&connects_to_fail, 1, __ATOMIC_RELAXED) > 0) {
		errno = EAGAIN;
		return -1;
	}
	return real_connect(fd, addr, len);
}

/* -F -r: the sendmsg()s that passed a descriptor (a child's announce of its buffers does). */
static int fds_passed;

/* (libusertp's sendmsg() comes here, as its connect() does.) */
__attribute__((visibility("default"))) ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	ssize_t n;

	find_real();
	n = real_sendmsg(fd, msg, flags);
	if (n >= 0 && msg->msg_controllen)
		__atomic_fetch_add(&fds_passed, 1, __ATOMIC_RELEASE);
	return n;
}

/* -r: wait until connect() was called @left times more than it was to fail (10 s at most). */
static void connects_wait(int left)
{
	for (int i = 0; i < 1000 && __atomic_load_n(&connects_to_fail, __ATOMIC_RELAXED) > -left;
	     i++)
		usleep(10000);
}

/* -c/-C: the program's own eventfds, opened after its file. */
#define DAEMON_EVENTFDS 12
static int daemon_eventfd[DAEMON_EVENTFDS];

/*
 * -c/-C: close every descriptor above 2, libusertp's among them, at once (while libusertp's
 * thread may still be making its endpoint) or @late (once that thread sleeps in poll() on
 * what is closed), as a daemon does; then open @file, under their numbers, and write a line.
 * Then the eventfds.  Return: its descriptor, -1 (failed).  (The daemon_ functions hold all the program does to
 * descriptors libusertp had: ThreadSanitizer's suppressions for these cases name them.)
 */
static __attribute__((noinline)) int daemon_close_all(const char *file, bool late)
{
	int fd;

	if (late)
		usleep(100000);
	/* (Before: libusertp's thread may join again as soon as they are closed.) */
	__atomic_store_n(&closed_all, true, __ATOMIC_RELEASE);
	close_range(3, ~0U, 0);
	fd = open(file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0 && write(fd, "before\n", 7) != 7) {
		close(fd);
		return -1;
	}
	/* (An event loop's, as GLib's or sd-event's wake-ups: every eventfd has one inode.) */
	for (int i = 0; i < DAEMON_EVENTFDS; i++)
		daemon_eventfd[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	return fd;
}

/* Whether @own, written to, read from and closed by nobody else (libusertp had its number
 * once), holds the line before and one written now, and no eventfd was written to; closes
 * them.  Said if not. */
static __attribute__((noinline)) bool daemon_own_kept(int own, const char *file)
{
	char text[64];
	ssize_t len;

	if (write(own, "after\n", 6) != 6 || lseek(own, 0, SEEK_SET) ||
	    (len = read(own, text, sizeof(text))) != 13 || memcmp(text, "before\nafter\n", 13) ||
	    close(own)) {
		fprintf(stderr, "%s does not hold what was written to it\n", file);
		return false;
	}
	for (int i = 0; i < DAEMON_EVENTFDS; i++) {
		uint64_t count = 0;
		ssize_t n = daemon_eventfd[i] < 0 ? -1 : read(daemon_eventfd[i], &count, sizeof(count));

		if (daemon_eventfd[i] < 0 || n >= 0 || errno != EAGAIN) {
			if (daemon_eventfd[i] < 0)
				fprintf(stderr, "eventfd: not made\n");
			else if (n >= 0)
				fprintf(stderr, "eventfd %d: written to (count %llu)\n",
					daemon_eventfd[i], (unsigned long long)count);
			else
				fprintf(stderr, "eventfd %d: its read failed: %s\n", daemon_eventfd[i],
					strerror(errno));
			return false;
		}
		close(daemon_eventfd[i]);
	}
	return true;
}

/* -F: @fire run by a forked child, which prints what it fired.  Return: the exit status. */
static int fire_in_child(fire_fn *fire, int threads, int n, bool fail_connects)
{
	int status, passed = __atomic_load_n(&fds_passed, __ATOMIC_ACQUIRE);
	pid_t pid;

	if (fail_connects)
		fail_unless_in = getpid();
	else
		connects_to_fail = 0;
	find_real();
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		int fired;

		if (fail_connects)
			connects_wait(0);
		fired = fire(threads, n);
		if (fired < 0)
			_exit(1);
		/* Ends once its buffers were announced (sent: the connect() alone is not). */
		for (int i = 0; fail_connects && i < 1000 &&
				__atomic_load_n(&fds_passed, __ATOMIC_ACQUIRE) <= passed; i++)
			usleep(10000);
		printf("fired %d\n", fired);
		fflush(stdout);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
	fire_fn *fire = NULL, *fire_std = NULL;
	const char *module = NULL, *module2 = NULL, *own_file = NULL;
	int opt, mode = RTLD_LOCAL, fired;
	bool std_thread = false, wait_line = false, unload = false, kept = false, own_late = false;
	bool own_after = false, fail_connects = false, in_child = false;
	void *h = NULL;
	int own = -1;

	while ((opt = getopt(argc, argv, "d:gxwukD:c:C:A:r:F")) != -1) {
		switch (opt) {
		case 'd': module = optarg; break;
		case 'g': mode = RTLD_GLOBAL; break;
		case 'x': std_thread = true; break;
		case 'w': wait_line = true; break;
		case 'u': unload = true; break;
		case 'k': kept = true; break;
		case 'D': module2 = optarg; break;
		case 'A': own_after = true; /* fall through */
		case 'C': own_late = !own_after; /* fall through */
		case 'c': own_file = optarg; break;
		case 'r': connects_to_fail = atoi(optarg); fail_connects = true; break;
		case 'F': in_child = true; break;
		default: return 2;
		}
	}
	if (argc - optind != 2)
		return 2;
	if ((unload && !module) || (kept && !unload) || (module2 && !module))
		return 2;
	if (module) {
		fire_fn *unused, *unused_std;

		if (!(h = load(module, mode, &fire, &fire_std)) ||
		    (module2 && !load(module2, RTLD_LOCAL, &unused, &unused_std)))
			return 1;
	}
#ifndef LAYOUT_DLOPEN_ONLY
	else {
		fire = layout_fire;
		fire_std = layout_fire_std;
	}
#endif
	if (!fire || !fire_std)
		return 2;
	if (unload) {
		dlclose(h);
		if (kept) {
			if (!(h = dlopen(module, RTLD_NOW | RTLD_NOLOAD))) {
				fprintf(stderr, "%s was unloaded with libusertp's code\n", module);
				return 3;
			}
			dlclose(h);
		}
	}
	if (own_file && !own_after && (own = daemon_close_all(own_file, own_late)) < 0)
		return 4;
	if (wait_line) {
		char line[16];

		printf("ready\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
	}
	if (own_file && own_after && (own = daemon_close_all(own_file, false)) < 0)
		return 4;
	if (unload && !load(module, mode, &fire, &fire_std))
		return 1;
	if (!fire || !fire_std)
		return 2;
	if (in_child)
		return fire_in_child(std_thread ? fire_std : fire, atoi(argv[optind]),
				     atoi(argv[optind + 1]), fail_connects);
	if (own_file && fail_connects)
		connects_wait(0);
	fired = (std_thread ? fire_std : fire)(atoi(argv[optind]), atoi(argv[optind + 1]));
	if (fired < 0)
		return 1;
	if (own_file && fail_connects)
		connects_wait(1);
	if (own >= 0 && !daemon_own_kept(own, own_file))
		return 4;
	printf("fired %d\n", fired);
	fflush(stdout);
	return 0;
}
