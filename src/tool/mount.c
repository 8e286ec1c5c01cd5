/* SPDX-License-Identifier: MIT */
/*
 * mount.c - usertp mount: the kernel's tracefs files for the events of running programs, at
 * a directory (src/mount/, docs/mount-design.md).
 *
 *	usertp mount [-f] [--allow-other] DIR
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mount.h"
#include "tool.h"

static const char usage_text[] =
	"usage: usertp mount [-f] [--allow-other] DIR\n"
	"  -f             stay in the foreground (otherwise it runs on in the background)\n"
	"  --allow-other  let other users in, with tracefs's permissions\n"
	"  DIR            an empty directory; 'fusermount3 -u DIR' (or umount) unmounts\n";

int usertp_cmd_mount(int argc, char **argv)
{
	enum { OPT_ALLOW_OTHER = 256 };
	static const struct option longopts[] = {
		{ "allow-other", no_argument, NULL, OPT_ALLOW_OTHER },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	bool foreground = false, allow_other = false;
	char options[128];
	struct stat st;
	int opt;

	while ((opt = getopt_long(argc, argv, "+fh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			foreground = true;
			break;
		case OPT_ALLOW_OTHER:
			allow_other = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			usertp_tool_bad_option("mount", "+fh", argv);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usertp_tool_error("mount", "give one directory to mount on");
		return 2;
	}
	if (stat(argv[optind], &st) || !S_ISDIR(st.st_mode)) {
		usertp_tool_error("mount", "%s: not a directory", argv[optind]);
		return 2;
	}
	/* tracefs checks permissions by mode: so does the kernel for us (default_permissions). */
	snprintf(options, sizeof(options),
		 "default_permissions,fsname=usertp,subtype=usertp%s",
		 allow_other ? ",allow_other" : "");
	return usertp__mount_run(argv[optind], options, foreground) ? 1 : 0;
}
