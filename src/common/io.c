/* SPDX-License-Identifier: MIT */
/* io.c - writing a whole buffer to a descriptor, and what a descriptor refers to (io.h). */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
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

int usertp__fd_id_get(int fd, unsigned int type, struct usertp__fd_id *id)
{
	struct stat st;

	memset(id, 0, sizeof(*id));
	if (fd < 0)
		return -EBADF;
	if (fstat(fd, &st))
		return -errno;
	if (type && (st.st_mode & S_IFMT) != type)
		return -EBADF;
	id->dev = (uint64_t)st.st_dev;
	id->ino = (uint64_t)st.st_ino;
	return 0;
}

bool usertp__fd_is(int fd, const struct usertp__fd_id *id)
{
	struct usertp__fd_id now;

	return !usertp__fd_id_get(fd, 0, &now) && now.dev == id->dev && now.ino == id->ino;
}

void usertp__fd_close_if(int fd, const struct usertp__fd_id *id)
{
	if (usertp__fd_is(fd, id))
		close(fd);
}
