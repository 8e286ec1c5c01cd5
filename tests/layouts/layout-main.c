/* SPDX-License-Identifier: MIT */
/*
 * layout-main.c - the host of the layouts test: it fires the events of whatever layout it is
 * built into (layout-fire.c linked in, or in a library), or of a plugin it dlopen()s.
 *
 *	layout-HOST [-d MODULE [-g]] [-x] [-w] THREADS N
 *
 *	-d MODULE	dlopen() it (RTLD_LOCAL, -g: RTLD_GLOBAL) and call its functions
 *	-x		threads from C++ std::thread, not pthread_create()
 *	-w		print "ready" and wait for a line on stdin before firing
 * Prints "fired E" (the events fired) and exits 0; 1 when a thread could not be made.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "layout.h"

int main(int argc, char **argv)
{
	int (*fire)(int, int) = NULL, (*fire_std)(int, int) = NULL;
	const char *module = NULL;
	int opt, mode = RTLD_LOCAL, fired;
	bool std_thread = false, wait_line = false;

	while ((opt = getopt(argc, argv, "d:gxw")) != -1) {
		switch (opt) {
		case 'd': module = optarg; break;
		case 'g': mode = RTLD_GLOBAL; break;
		case 'x': std_thread = true; break;
		case 'w': wait_line = true; break;
		default: return 2;
		}
	}
	if (argc - optind != 2)
		return 2;
	if (module) {
		void *h = dlopen(module, RTLD_NOW | mode);

		if (!h) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			return 1;
		}
		fire = (int (*)(int, int))dlsym(h, "layout_fire");
		fire_std = (int (*)(int, int))dlsym(h, "layout_fire_std");
	}
#ifndef LAYOUT_DLOPEN_ONLY
	else {
		fire = layout_fire;
		fire_std = layout_fire_std;
	}
#endif
	if (!fire || !fire_std)
		return 2;
	if (wait_line) {
		char line[16];

		printf("ready\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
	}
	fired = (std_thread ? fire_std : fire)(atoi(argv[optind]), atoi(argv[optind + 1]));
	if (fired < 0)
		return 1;
	printf("fired %d\n", fired);
	fflush(stdout);
	return 0;
}
