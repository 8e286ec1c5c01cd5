/* SPDX-License-Identifier: MIT */
/* io.c - writing a whole buffer to a descriptor (io.h). */
#include <errno.h>
#include <unistd.h>

#include "io.h"

int usertp__write_all(int fd, const void *buf, size_t len, size_t *written)
{
	const char *p = buf;
	size_t done = 0;
	int ret = 0;

	while (done < len) {
		ssize_t n = write(fd, p + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			break;
		}
		done += (size_t)n;
	}
	if (written)
		*written = done;
	return ret;
}
