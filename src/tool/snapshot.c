/* SPDX-License-Identifier: MIT */
/*
 * snapshot.c - usertp snapshot: ask flight recorders (usertp record --overwrite or
 * --snapshot-on) of this user for a snapshot, as `lttng snapshot record` asks its session:
 * each is sent SIGUSR2, and writes what its programs hold to FILE.N (record.c).
 *
 *	usertp snapshot [PID]...	the recorders given, or those of this runtime directory
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "number.h"
#include "proc.h"
#include "tool.h"

/* Is @pid a usertp record of ours: our own user, our own program, "record" its command? */
static bool is_recorder(pid_t pid)
{
	char exe[PATH_MAX], self[PATH_MAX], path[64], arg[16];
	ssize_t n, m;
	uid_t uid;

	if (pid == getpid() || usertp__proc_owner(pid, &uid) || uid != geteuid())
		return false;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	m = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0 || m <= 0 || n != m || memcmp(exe, self, (size_t)n))
		return false;
	return !usertp__proc_arg(pid, 1, arg, sizeof(arg)) && !strcmp(arg, "record");
}

int usertp__cmd_snapshot(int argc, char **argv)
{
	unsigned int asked = 0;
	int status = 0;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: usertp snapshot [PID]...\n"
		       "  asks flight recorders (usertp record --overwrite, --snapshot-on) for a\n"
		       "  snapshot: the recorders given, or those of this user's runtime directory\n");
		return 0;
	}
	if (argc > 1) {
		for (int i = 1; i < argc; i++) {
			uint64_t pid;

			if (usertp__parse_u64(argv[i], 1, INT32_MAX, &pid)) {
				usertp__tool_error("snapshot", "%s: not a process id", argv[i]);
				return 2;
			}
			if (!is_recorder((pid_t)pid)) {
				usertp__tool_error("snapshot", "%s: not a usertp record of yours",
						   argv[i]);
				status = 1;
				continue;
			}
			if (!kill((pid_t)pid, SIGUSR2))
				asked++;
		}
	} else {
		/* The recorders of this runtime directory: record-PID.sock there (usertp(1)). */
		const char *xdg = getenv("XDG_RUNTIME_DIR");
		char path[PATH_MAX];
		struct dirent *e;
		DIR *d;

		snprintf(path, sizeof(path), "%s/usertp", xdg && *xdg ? xdg : "/nonexistent");
		d = opendir(path);
		while (d && (e = readdir(d))) {
			uint64_t pid;
			const char *end;

			if (strncmp(e->d_name, "record-", 7) ||
			    usertp__parse_u64_prefix(e->d_name + 7, &end, 1, INT32_MAX, &pid) ||
			    strcmp(end, ".sock"))
				continue;
			if (is_recorder((pid_t)pid) && !kill((pid_t)pid, SIGUSR2))
				asked++;
		}
		if (d)
			closedir(d);
		if (!asked) {
			usertp__tool_error("snapshot", "no usertp record of yours runs (in %s)", path);
			return 1;
		}
	}
	if (asked)
		printf("snapshot asked of %u recorder%s\n", asked, asked == 1 ? "" : "s");
	return status;
}
