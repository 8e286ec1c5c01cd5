/* SPDX-License-Identifier: MIT */
/* io.h - writing a whole buffer to a descriptor, the one loop of it (async-signal-safe). */
#ifndef USERTP_IO_H
#define USERTP_IO_H

#include <stddef.h>

#ifndef USERTP_HIDDEN
#define USERTP_HIDDEN __attribute__((visibility("hidden")))
#endif

/*
 * Write the @len bytes at @buf to @fd, again after a signal or a short write.  *@written (if
 * not NULL) gets how many were written, all of them or up to the failure.
 * Return: 0, or a negative errno (-EIO for a write that wrote nothing).
 */
USERTP_HIDDEN int usertp__write_all(int fd, const void *buf, size_t len, size_t *written);

#endif /* USERTP_IO_H */
