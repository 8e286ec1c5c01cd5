/* SPDX-License-Identifier: MIT */
/*
 * dlopen-host.c - a program that does not link libusertp but loads a module that does, then
 * unloads it: libusertp must load (no large static TLS) and must stay (its control thread
 * goes on serving).   usage: dlopen-host MODULE; prints "ready", exits 0 on SIGTERM.
 * dlopen-host MODULE N: calls the module's rec_mod_fire() N times between dlopen() and
 * dlclose(), and exits.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	sigset_t set;
	void *module;
	int sig;

	if (argc != 2 && argc != 3)
		return 2;
	module = dlopen(argv[1], RTLD_NOW);
	if (!module) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	if (argc == 3) {
		void (*fire)(int) = (void (*)(int))dlsym(module, "rec_mod_fire");
		int n = atoi(argv[2]);

		for (int i = 0; fire && i < n; i++)
			fire(i);
		dlclose(module);
		return fire ? 0 : 1;
	}
	dlclose(module);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready\n");
	fflush(stdout);
	sigwait(&set, &sig);
	return 0;
}
