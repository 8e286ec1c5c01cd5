/* SPDX-License-Identifier: MIT */
/*
 * ctl-connect.c - a bare control-protocol client for tests: it looks for nothing and checks
 * nothing, so a test can knock on an endpoint as another user would, or as a hostile peer.
 *
 *	ctl-connect SOCKET REQUEST		one framed request; the reply on stdout
 *	ctl-connect SOCKET --raw HEX [SECONDS]	these bytes as they are (no framing), then wait
 *						SECONDS (default 0) before reading a reply
 *	ctl-connect SOCKET --hold N SECONDS	N connections held open, SECONDS long; the first
 *						reply of each (or "none") on stdout
 *	ctl-connect SOCKET --trickle HEX MS	these bytes one at a time, MS milliseconds apart;
 *						"closed after N bytes, T ms" when the endpoint
 *						drops us, or "not closed"
 *	ctl-connect SOCKET --eventfd REQUEST SECONDS
 *						REQUEST with an eventfd (as a recorder of before
 *						the wake socket gave one), the reply, then the
 *						connection held SECONDS long
 *
 * Exit: 0 when a reply came, 3 when the endpoint closed the connection without one, 1 for
 * other failures.
 */
#include <errno.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "ctl-proto.h"

static char reply[1 << 16];

/* Print the reply on @sock (or why there is none). */
static int show_reply(int sock, int send_error)
{
	long n = usertp__ctl_recv(sock, reply, sizeof(reply), NULL, 5000);

	if (n > 0) {
		printf("%s\n", reply);
		return 0;
	}
	if (n == 0 || n == -EPIPE || n == -ECONNRESET) {
		printf("closed\n");
		return 3;
	}
	fprintf(stderr, "no reply: %s\n", strerror((int)-(n ? n : send_error)));
	return 1;
}

static int send_raw(int sock, const char *hex)
{
	size_t len = strlen(hex) / 2;
	unsigned char *bytes = malloc(len + 1);

	for (size_t i = 0; i < len; i++) {
		unsigned int v;

		sscanf(hex + 2 * i, "%2x", &v);
		bytes[i] = (unsigned char)v;
	}
	len = (size_t)write(sock, bytes, len);
	free(bytes);
	return 0;
}

int main(int argc, char **argv)
{
	int sock, ret;

	if (argc < 3) {
		fprintf(stderr, "usage: ctl-connect SOCKET REQUEST | --raw HEX [S] | --hold N S\n");
		return 2;
	}
	if (!strcmp(argv[2], "--hold") && argc == 5) {
		int n = atoi(argv[3]), socks[64];

		for (int i = 0; i < n && i < 64; i++) {
			socks[i] = usertp__ctl_connect(argv[1]);
			if (socks[i] >= 0)
				usertp__ctl_send(socks[i], "hello", 5, -1);
		}
		for (int i = 0; i < n && i < 64; i++) {
			long r = socks[i] >= 0 ? usertp__ctl_recv(socks[i], reply, sizeof(reply), NULL, 5000) : -1;

			printf("%s\n", r > 0 ? reply : "none");
		}
		sleep((unsigned int)atoi(argv[4]));
		return 0;
	}
	sock = usertp__ctl_connect(argv[1]);
	if (sock < 0) {
		fprintf(stderr, "connect %s: %s\n", argv[1], strerror(-sock));
		return 1;
	}
	if (!strcmp(argv[2], "--trickle") && argc == 5) {
		size_t len = strlen(argv[3]) / 2;
		struct timespec t0, t1, gap = { atoi(argv[4]) / 1000, atoi(argv[4]) % 1000 * 1000000L };

		signal(SIGPIPE, SIG_IGN);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (size_t i = 0; i < len; i++) {
			char byte[3] = { argv[3][2 * i], argv[3][2 * i + 1], 0 };
			unsigned char b = (unsigned char)strtoul(byte, NULL, 16);

			if (i)
				nanosleep(&gap, NULL);
			if (write(sock, &b, 1) != 1) {
				clock_gettime(CLOCK_MONOTONIC, &t1);
				printf("closed after %zu bytes, %ld ms\n", i,
				       (long)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000));
				return 0;
			}
		}
		printf("not closed\n");
		return 0;
	}
	if (!strcmp(argv[2], "--eventfd") && argc == 5) {
		int efd = eventfd(0, EFD_CLOEXEC);

		ret = show_reply(sock, usertp__ctl_send(sock, argv[3], strlen(argv[3]), efd));
		fflush(stdout);
		sleep((unsigned int)atoi(argv[4]));
		return ret;
	}
	if (!strcmp(argv[2], "--raw") && argc >= 4) {
		send_raw(sock, argv[3]);
		if (argc > 4)
			sleep((unsigned int)atoi(argv[4]));
		return show_reply(sock, 0);
	}
	/* A refusal may come before the request is even sent: read the reply whatever. */
	ret = usertp__ctl_send(sock, argv[2], strlen(argv[2]), -1);
	return show_reply(sock, ret);
}
