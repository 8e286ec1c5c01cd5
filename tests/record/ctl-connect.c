/* SPDX-License-Identifier: MIT */
/*
 * ctl-connect.c - a bare control-protocol client for tests: connect to an endpoint, send one
 * request, print the reply.  Unlike usertp it looks for nothing and checks nothing, so a test
 * can knock on another user's endpoint directly.
 *	usage: ctl-connect SOCKET REQUEST
 * Exit: 0 when a reply came (printed on stdout), 1 otherwise (why on stderr).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ctl-proto.h"

int main(int argc, char **argv)
{
	static char reply[1 << 16];
	int sock, ret;
	long n;

	if (argc != 3) {
		fprintf(stderr, "usage: ctl-connect SOCKET REQUEST\n");
		return 2;
	}
	sock = usertp_ctl_connect(argv[1]);
	if (sock < 0) {
		fprintf(stderr, "connect %s: %s\n", argv[1], strerror(-sock));
		return 1;
	}
	/* A refusal may come before the request is even sent: read the reply whatever. */
	ret = usertp_ctl_send(sock, argv[2], strlen(argv[2]), -1);
	n = usertp_ctl_recv(sock, reply, sizeof(reply), NULL, 5000);
	if (n <= 0 && ret)
		n = ret;
	close(sock);
	if (n <= 0) {
		fprintf(stderr, "no reply: %s\n", n ? strerror((int)-n) : "connection closed");
		return 1;
	}
	printf("%s\n", reply);
	return 0;
}
