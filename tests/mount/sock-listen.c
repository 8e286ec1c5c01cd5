/* SPDX-License-Identifier: MIT */
/*
 * sock-listen PATH LOG [hold] - a Unix socket at PATH (mode 0600) that notes in LOG every
 * connection and what it was sent ("connected N bytes"): a stand-in for a root-only daemon
 * that another user would like root's usertp to talk to.  Prints "listening" when ready.
 * With "hold", it never answers: each connection is kept open, unread (a fake endpoint that
 * would hold its peer).
 */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_STREAM, 0);

	if (argc < 3 || s < 0 || strlen(argv[1]) >= sizeof(sa.sun_path))
		return 2;
	strcpy(sa.sun_path, argv[1]);
	if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) || chmod(argv[1], 0600) || listen(s, 16))
		return 1;
	printf("listening\n");
	fflush(stdout);
	for (;;) {
		char buf[4096];
		int c = accept(s, NULL, NULL);
		ssize_t n;
		FILE *log;

		if (c < 0 || argc > 3)
			continue; /* (held: never closed) */
		/* (what a peer sends at once: a usertp hello is sent right after connecting) */
		struct timeval tv = { 0, 300000 };

		setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		n = read(c, buf, sizeof(buf));
		log = fopen(argv[2], "a");
		if (log) {
			fprintf(log, "connected %zd bytes\n", n < 0 ? (ssize_t)0 : n);
			fclose(log);
		}
		close(c);
	}
}
