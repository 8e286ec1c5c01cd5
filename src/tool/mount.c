/* SPDX-License-Identifier: MIT */
/*
 * mount.c - usertp mount: the kernel's tracefs files for the events of running programs, at
 * a directory (src/mount/, docs/mount-design.md).
 *
 *	usertp mount [-f] [--allow-other] [-o uid=U,gid=G,mode=M] DIR
 */
#define _GNU_SOURCE
#include <errno.h>
#include <execinfo.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"
#include "number.h"
#include "tool.h"

static const char usage_text[] =
	"usage: usertp mount [-f] [--allow-other] [-o uid=U,gid=G,mode=M] DIR\n"
	"  -f             stay in the foreground (otherwise it runs on in the background)\n"
	"  --allow-other  let other users in, with tracefs's permissions\n"
	"  -o OPTIONS     tracefs's: the files' owner and group (a number or a name), and\n"
	"                 the top directory's mode (octal; 0700 unless given)\n"
	"  DIR            an empty directory; 'fusermount3 -u DIR' (or umount) unmounts\n";

/*
 * The mount serves in the background, where a crash would leave only "Transport endpoint is
 * not connected": it says which signal and where first (async-signal-safe calls only).
 */
static void on_fatal_signal(int sig)
{
	static const char head[] = "usertp mount: fatal signal; where (usertp(+offset): "
				   "addr2line -e usertp -f offset):\n";
	void *frames[64];
	int n = backtrace(frames, 64);

	(void)!write(STDERR_FILENO, head, sizeof(head) - 1);
	backtrace_symbols_fd(frames, n, STDERR_FILENO);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void report_crashes(void)
{
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };
	void *frames[1];

	/* (Under a sanitizer, its own reports, which say more.) */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
	backtrace(frames, 1); /* (loads libgcc now, not in the handler) */
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		signal(fatal[i], on_fatal_signal);
#else
	(void)frames;
	(void)fatal;
	(void)on_fatal_signal;
#endif
}

/* A user or group: a number, or a name the system knows.  Return: 0 or -1 (said). */
static int owner_id(const char *key, const char *value, bool group, uint64_t *id)
{
	int ret = usertp__parse_u64(value, 0, (uid_t)-2, id);
	struct passwd *pw;
	struct group *gr;

	if (!ret)
		return 0;
	if (ret == -ERANGE) {
		usertp__tool_error("mount", "-o %s=%s: out of range (at most %u)", key, value,
				  (unsigned int)(uid_t)-2);
		return -1;
	}
	if (group && (gr = getgrnam(value))) {
		*id = gr->gr_gid;
		return 0;
	}
	if (!group && (pw = getpwnam(value))) {
		*id = pw->pw_uid;
		return 0;
	}
	usertp__tool_error("mount", "-o %s=%s: no such %s", key, value, group ? "group" : "user");
	return -1;
}

/* tracefs's mount options, "uid=U,gid=G,mode=M", into @owner.  Return: 0 or -1 (said). */
static int parse_owner(char *text, struct usertp__mount_owner *owner)
{
	char *save = NULL;

	for (char *opt = strtok_r(text, ",", &save); opt; opt = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(opt, '=');
		const char *value = eq ? eq + 1 : "";
		uint64_t n;

		if (eq)
			*eq = 0;
		if (!strcmp(opt, "uid") || !strcmp(opt, "gid")) {
			if (owner_id(opt, value, opt[0] == 'g', &n))
				return -1;
			if (opt[0] == 'g')
				owner->gid = (gid_t)n;
			else
				owner->uid = (uid_t)n;
		} else if (!strcmp(opt, "mode")) {
			char *end;
			unsigned long mode;

			errno = 0;
			mode = strtoul(value, &end, 8);
			if (!*value || *end || errno || mode > 07777 || value[0] == '-' ||
			    value[0] == '+' || value[0] == ' ') {
				usertp__tool_error("mount", "-o mode=%s: not an octal mode of at most 7777",
						  value);
				return -1;
			}
			owner->root_mode = (mode_t)mode;
		} else {
			usertp__tool_error("mount", "-o %s: unknown option (tracefs's are uid=, gid= "
					  "and mode=)", opt);
			return -1;
		}
	}
	return 0;
}

/*
 * Is @dir the mount point of a usertp mount now (/proc/self/mountinfo: its fifth field, with
 * "\\040"-style escapes, and "fuse.usertp" after the " - ")?  A second mount on it would stack
 * silently, the first one hidden and still running.
 */
static bool already_mounted(const char *dir)
{
	char real[PATH_MAX], line[8192];
	FILE *f;
	bool found = false;

	if (!realpath(dir, real) || !(f = fopen("/proc/self/mountinfo", "re")))
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char point[PATH_MAX], *out = point, *dash = strstr(line, " - ");
		const char *p = line;

		for (int field = 0; field < 4 && p; field++)
			p = strchr(p, ' ') ? strchr(p, ' ') + 1 : NULL;
		if (!p || !dash)
			continue;
		/* the mount point, unescaped: "\ooo" is one byte */
		for (; *p && *p != ' ' && out < point + sizeof(point) - 1; p++)
			if (p[0] == '\\' && p[1] && p[2] && p[3]) {
				*out++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 +
						(p[3] - '0'));
				p += 3;
			} else {
				*out++ = *p;
			}
		*out = 0;
		found = !strcmp(point, real) && !strncmp(dash + 3, "fuse.usertp ", 12);
	}
	fclose(f);
	return found;
}

int usertp__cmd_mount(int argc, char **argv)
{
	enum { OPT_ALLOW_OTHER = 256 };
	static const struct option longopts[] = {
		{ "allow-other", no_argument, NULL, OPT_ALLOW_OTHER },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	bool foreground = false, allow_other = false;
	struct usertp__mount_owner owner = { getuid(), getgid(), 0700 };
	char options[128];
	struct stat st;
	int opt;

	while ((opt = getopt_long(argc, argv, "+fho:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			foreground = true;
			break;
		case 'o':
			if (parse_owner(optarg, &owner))
				return 2;
			break;
		case OPT_ALLOW_OTHER:
			allow_other = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			usertp__tool_bad_option("mount", "+fho:", argv);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usertp__tool_error("mount", "give one directory to mount on");
		return 2;
	}
	if (stat(argv[optind], &st) || !S_ISDIR(st.st_mode)) {
		usertp__tool_error("mount", "%s: not a directory", argv[optind]);
		return 2;
	}
	if (already_mounted(argv[optind])) {
		usertp__tool_error("mount", "%s: %s: a usertp mount is there already",
				  argv[optind], strerror(EBUSY));
		return 1;
	}
	/* tracefs checks permissions by mode: so does the kernel for us (default_permissions). */
	snprintf(options, sizeof(options),
		 "default_permissions,fsname=usertp,subtype=usertp%s",
		 allow_other ? ",allow_other" : "");
	report_crashes();
	return usertp__mount_run(argv[optind], options, &owner, foreground) ? 1 : 0;
}
