/* SPDX-License-Identifier: MIT */
/*
 * io.h - writing a whole buffer to a descriptor, the one loop of it, and what a descriptor
 * refers to (async-signal-safe).
 */
#ifndef USERTP_IO_H
#define USERTP_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef USERTP_HIDDEN
#define USERTP_HIDDEN __attribute__((visibility("hidden")))
#endif

/*
 * Write the @len bytes at @buf to @fd, again after a signal or a short write.  *@written (if
 * not NULL) gets how many were written, all of them or up to the failure.
 * Return: 0, or a negative errno (-EIO for a write that wrote nothing).
 */
USERTP_HIDDEN int usertp__write_all(int fd, const void *buf, size_t len, size_t *written);

/*
 * The object a descriptor refers to (its device and inode).  A program may close descriptors
 * it did not open, as a daemon does when it starts (close_range(3, ~0U, 0), or a loop up to
 * its limit), and open files of its own under the same numbers: libusertp notes the identity
 * of each descriptor it keeps in the program's table, and looks again before it reads,
 * writes, passes or closes it, so that nothing of the program's is ever touched.  (Every
 * eventfd has the same inode: one is told from a file, a pipe or a socket, not from another;
 * so libusertp keeps none, and its recorders wake on a socket.)
 */
struct usertp__fd_id {
	uint64_t dev, ino;
};

/*
 * Note what @fd refers to into *@id: a descriptor just made, of @type (S_IFSOCK, S_IFIFO,
 * S_IFREG), is -EBADF when its number holds something else already (the program closed it at
 * once and opened its own there, an eventfd perhaps, whose identity every eventfd shares:
 * never to be noted as ours); @type 0 takes any.  Return: 0, or a negative errno (@id is then
 * zeroed).
 */
USERTP_HIDDEN int usertp__fd_id_get(int fd, unsigned int type, struct usertp__fd_id *id);
/* Whether @fd (>= 0) still refers to the object @id notes. */
USERTP_HIDDEN bool usertp__fd_is(int fd, const struct usertp__fd_id *id);
/* Close @fd if it still refers to @id's object; leave it alone otherwise (the program's). */
USERTP_HIDDEN void usertp__fd_close_if(int fd, const struct usertp__fd_id *id);

#endif /* USERTP_IO_H */
