/* SPDX-License-Identifier: MIT */
/*
 * slow-bind - preloaded (LD_PRELOAD) into a traced program by the record-all test: the
 * program's control endpoint, the Unix socket "PID.sock" that libusertp's control thread
 * binds (as PID.new.sock, then renamed), is bound only once the file named by SLOW_BIND_GATE exists (60 s at most), so that
 * the endpoint is made after `usertp record -a` has looked for the running programs: the
 * window a program started just before the recorder can be in.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

__attribute__((visibility("default"))) int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	int (*real)(int, const struct sockaddr *, socklen_t) =
		(int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "bind");
	const char *gate = getenv("SLOW_BIND_GATE");
	char own[32];

	snprintf(own, sizeof(own), "/%d.new.sock", (int)getpid()); /* (renamed PID.sock once bound) */
	if (gate && addr && addr->sa_family == AF_UNIX && len > sizeof(sa_family_t)) {
		const char *path = ((const struct sockaddr_un *)addr)->sun_path;
		size_t n = strnlen(path, sizeof(((struct sockaddr_un *)0)->sun_path));

		if (n >= strlen(own) && !strncmp(path + n - strlen(own), own, strlen(own)))
			for (int i = 0; i < 6000 && access(gate, F_OK); i++)
				usleep(10000);
	}
	return real(fd, addr, len);
}
