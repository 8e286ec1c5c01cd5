/* SPDX-License-Identifier: MIT */
/*
 * linked-host.c - a program with no events of its own whose events live in a linked shared
 * library (librec-lib, rec-mod.c built as one).   usage: linked-host N: fires N of them.
 */
#include <stdlib.h>

void rec_mod_fire(int n);

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;

	for (int i = 0; i < n; i++)
		rec_mod_fire(i);
	return 0;
}
