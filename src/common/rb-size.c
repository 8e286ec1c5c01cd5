/* SPDX-License-Identifier: MIT */
/*
 * rb-size.c - the ring buffer's sizing policy (ring-buffer.h): buffer sizes and clocks as users
 * give them, and whether the machine (its available memory, the memory cgroup's room) can
 * hold buffers of a size.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "number.h"
#include "ring-buffer.h"

/* The start of the small file @path, NUL-terminated, in @buf.  Return: false if none. */
static bool read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	return true;
}

/* MemAvailable of /proc/meminfo, in bytes; 0 when it cannot be read. */
static uint64_t memory_available(void)
{
	char buf[4096];
	const char *p;
	unsigned long long kib;

	if (!read_text("/proc/meminfo", buf, sizeof(buf)))
		return 0;
	p = strstr(buf, "MemAvailable:");
	return p && sscanf(p + 13, "%llu", &kib) == 1 ? (uint64_t)kib * 1024 : 0;
}

/* The number in file @dir/@name; false if there is none ("max" and the like). */
static bool read_u64_file(const char *dir, const char *name, uint64_t *out)
{
	char path[4200], buf[64];
	unsigned long long v;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path) ||
	    !read_text(path, buf, sizeof(buf)) || sscanf(buf, "%llu", &v) != 1)
		return false;
	*out = v;
	return true;
}

/*
 * What the memory cgroup of this process and its ancestors still allow (limit - usage, the
 * least of them), cgroup v2 or v1; UINT64_MAX when nothing limits it.
 */
static uint64_t cgroup_room(void)
{
	char buf[4096], dir[4200];
	uint64_t room = UINT64_MAX;

	if (!read_text("/proc/self/cgroup", buf, sizeof(buf)))
		return room;
	for (char *line = buf, *next; line && *line; line = next) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		const char *limit, *usage, *base;
		bool v2;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (!c2)
			continue;
		*c2 = 0;
		v2 = c1[1] == 0 && line[0] == '0' && c1 == line + 1;
		if (!v2 && !strstr(c1 + 1, "memory"))
			continue;
		base = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
		limit = v2 ? "memory.max" : "memory.limit_in_bytes";
		usage = v2 ? "memory.current" : "memory.usage_in_bytes";
		/* From the process's cgroup up to the root. */
		snprintf(dir, sizeof(dir), "%s%s", base, c2 + 1);
		for (;;) {
			uint64_t lim, used;

			if (read_u64_file(dir, limit, &lim) && read_u64_file(dir, usage, &used) &&
			    lim < (1ull << 60))
				room = lim > used ? (lim - used < room ? lim - used : room) : 0;
			if (strlen(dir) <= strlen(base))
				break;
			*strrchr(dir, '/') = 0;
		}
	}
	return room;
}

int usertp__rb_parse_kb(const char *text, unsigned long *kb, const char **why)
{
	uint64_t v;

	if (usertp__parse_u64(text, 1, USERTP_RB_MAX_KB, &v)) {
		*why = "not a number of KiB from 1 to 4194304";
		return -EINVAL;
	}
	*kb = (unsigned long)v;
	return 0;
}

int usertp__rb_parse_clock(const char *text, enum usertp__rb_clock *clock, const char **why)
{
	if (!strcmp(text, "mono")) {
		*clock = USERTP_RB_CLOCK_MONO;
		return 0;
	}
	if (strcmp(text, "x86-tsc")) {
		*why = "not mono or x86-tsc";
		return -EINVAL;
	}
#if defined(__x86_64__)
	*clock = USERTP_RB_CLOCK_TSC;
	return 0;
#else
	*why = "x86-tsc needs an x86-64 machine";
	return -EINVAL;
#endif
}

const char *usertp__rb_clock_name(enum usertp__rb_clock clock)
{
	return clock == USERTP_RB_CLOCK_TSC ? "x86-tsc" : "mono";
}

int usertp__rb_size_check(unsigned int nr_cpus, unsigned long kb, char *why, size_t size)
{
	uint64_t need = usertp__rb_bytes(nr_cpus, kb), avail = memory_available(), room = cgroup_room();

	if (room < avail || !avail)
		avail = room == UINT64_MAX ? 0 : room;

	if (!avail || need <= avail / 2)
		return 0;
	snprintf(why, size,
		 "%u CPUs x %lu KiB = %llu MiB of buffers per program, more than half the memory "
		 "available (%llu MiB, in the memory cgroup's limit if lower)", nr_cpus, kb, (unsigned long long)(need >> 20),
		 (unsigned long long)(avail >> 20));
	return -ENOMEM;
}
