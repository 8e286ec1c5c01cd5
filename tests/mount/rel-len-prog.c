/* SPDX-License-Identifier: MIT */
/*
 * rel-len-prog - a program whose event libtraceevent cannot print: fixtures/trace-all.h's
 * t_rel_len, a kernel-style event whose print fmt reads __get_rel_dynamic_array_len(), on
 * which libtraceevent 1.7 faults for every record (issue 21, item 12: another user's program
 * with such an event crashed root's mount).  Beside it, t_plain_text, which prints.
 *
 *	rel-len-prog	prints "ready PID", then takes commands on stdin, one a line:
 *	  fire N	N t_rel_len, then N t_plain_text (n = 0..N-1); prints "fired"
 *	  quit		returns 0 (so does the end of stdin)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CREATE_TRACE_POINTS
#include "trace-all.h"

/* trace-all.h's reg/unreg callbacks */
int test_fn_reg(void)
{
	return 0;
}

void test_fn_unreg(void)
{
}

int main(void)
{
	static const int arr[3] = { 7, -8, 9 };
	char line[64];

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		int n;

		if (sscanf(line, "fire %d", &n) == 1) {
			for (int i = 0; i < n; i++)
				trace_t_rel_len(arr, 1 + i % 3);
			for (int i = 0; i < n; i++)
				trace_t_plain_text(i);
			printf("fired\n");
			fflush(stdout);
		} else if (!strncmp(line, "quit", 4)) {
			break;
		}
	}
	return 0;
}
