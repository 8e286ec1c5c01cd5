/* SPDX-License-Identifier: MIT */
/*
 * test-filter-kernel - usertp's filters against the kernel's, on this machine's tracefs (root;
 * exit 77 where tracefs cannot be written).  In two private instances, removed at the end:
 *
 *   1. every expression is written to sched_switch's filter: the kernel must accept or refuse
 *      it as usertp__filter_compile() does (compiled against the same format file), with the
 *      same errno and the same filter file text;
 *   2. matching: instance A records task_rename unfiltered, instance B with the filter; this
 *      process renames itself through a list of names; B must have kept exactly the records
 *      of A that usertp__filter_match() keeps (this process's records; COMM is the name
 *      before the rename, CPU the one the line gives).
 *
 * The differences the kernel's bugs make (filter.h) are expected, and checked as such.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "filter.h"
#include "format-field.h"

#include "../harness.h"

#define TRACEFS "/sys/kernel/tracing"

static char inst_a[256], inst_b[256];

static char *read_file(const char *path)
{
	int fd = open(path, O_RDONLY);
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	ssize_t n;

	if (fd < 0 || !buf) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 4096) {
			cap *= 2;
			buf = realloc(buf, cap);
		}
	}
	close(fd);
	buf[len] = 0;
	return buf;
}

/* Write @text to @path in one write().  Return: 0 or the errno. */
static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_TRUNC), err = 0;

	if (fd < 0)
		return errno;
	if (write(fd, text, strlen(text)) < 0)
		err = errno;
	close(fd);
	return err;
}

static void cleanup(void)
{
	char path[512];

	for (int i = 0; i < 2; i++) {
		const char *inst = i ? inst_b : inst_a;

		if (!inst[0])
			continue;
		snprintf(path, sizeof(path), "%s/events/enable", inst);
		write_file(path, "0");
		snprintf(path, sizeof(path), "%s/events/enable", inst);
		rmdir(inst);
	}
}

/* The fields of an event's format in tracefs. */
static int fields_of(const char *event, struct usertp__filter_field **fields, char **names)
{
	char path[256], *format;
	int n;

	snprintf(path, sizeof(path), TRACEFS "/events/%s/format", event);
	format = read_file(path);
	if (!format)
		return -1;
	n = usertp__filter_fields_of_format(format, fields, names);
	free(format);
	return n;
}

/* Part 1: accepted and refused alike, with the same words. */
static const char *const parity[] = {
	"common_pid == 1", "common_pid==1&&next_pid!=2", "(common_pid == 1 || common_flags == 1)",
	"!prev_state > 0", "!!(prev_pid == 1)", "prev_state & 1", "prev_comm == \"bash\"",
	"prev_comm != 'x'", "next_comm ~ \"sw*\"", "next_comm ~ \"*per/1\"", "next_comm ~ \"!ab?\"",
	"next_comm ~ \"[a-c]*\"", "COMM ~ \"ba*\"", "comm == \"x\"", "CPU == 1", "cpu != 0",
	"common_cpu < 2", "CPU == CPUS{0}", "CPU & CPUS{0-1}", "prev_pid == 0x10", "prev_pid == 010",
	"prev_pid == -1", "prev_state == -0x10", "prev_prio >= -5",
	"nosuchfield == 1", "common_pid == abc", "common_pid =! 1", "common_pid",
	"common_pid !~ \"x\"", "COMM < \"a\"", "common_pid ~ 1", "common_pid == \"1\"", "COMM == 1",
	"(common_pid == 1", "((common_pid == 1", "(common_pid == 1 && (common_pid == 2)",
	"common_pid == 1)", "COMM == \"abc", "common_pid == 1 | common_pid == 2",
	"common_pid == 1 common_pid == 2", "common_pid == 1.5", "common_pid == 0x",
	"common_pid == 1x", "common_pid == 08", "common_pid == - 1", "common_pid == +1",
	"common_pid == 99999999999999999999", "common_pid == 1234567890123456789012345",
	"common_type == -1", "!", "()", "&& common_pid == 1", "common_pid == 1 && ()",
	"common_pid == 1 && || common_pid == 2", "CPU & CPUS{", "CPU & CPUS{}", "CPU & CPUS{99999}",
	"CPU & CPUS0", "prev_pid.function == 1", "prev_comm == \"\"", "next_comm ~ \"\"",
	"(((prev_pid == 1) || next_pid == 2) && !(prev_prio < 0))",
};

/* The kernel takes these; usertp refuses them (filter.h). */
static const char *const kernel_bugs[] = { "common_pid == 1 &&", "common_pid == 1 ||" };

/* @text on @event (SYSTEM/NAME) of the kernel and of usertp.  Return: 0, or 1 on a failure. */
static int check_parity_on(const char *event, const char *text, bool bug)
{
	struct usertp__filter_field *fields;
	struct usertp__filter_error e;
	struct usertp__filter *f = NULL;
	char path[512], *names, *file, mine[8192];
	int n = fields_of(event, &fields, &names), kerr, ret, before = harness_failed;

	if (n < 0) {
		fprintf(stderr, "FAIL %s: its format does not parse\n", event);
		harness_failed++;
		return 1;
	}
	snprintf(path, sizeof(path), "%s/events/%s/filter", inst_b, event);
	kerr = write_file(path, text);
	file = read_file(path);
	ret = usertp__filter_compile(text, fields, (unsigned int)n, &f, &e);
	if (bug) {
		if (kerr || !ret)
			printf("note: [%s]: the kernel %s it now, usertp %s it\n", text,
			       kerr ? "refuses" : "takes", ret ? "refuses" : "takes");
		if (!ret) {
			fprintf(stderr, "FAIL [%s]: usertp takes it\n", text);
			harness_failed++;
		}
	} else if (!kerr != !ret || (ret && -ret != kerr)) {
		fprintf(stderr, "FAIL %s [%s]: the kernel: %s, usertp: %s\n", event, text,
			kerr ? strerror(kerr) : "taken", ret ? strerror(-ret) : "taken");
		harness_failed++;
	} else if (ret) {
		usertp__filter_error_file(text, &e, mine, sizeof(mine));
		if (!file || strcmp(file, mine)) {
			fprintf(stderr, "FAIL %s [%s]: the kernel's filter file:\n%susertp's:\n%s",
				event, text, file ? file : "?", mine);
			harness_failed++;
		}
	}
	usertp__filter_free(f);
	free(file);
	free(fields);
	free(names);
	write_file(path, "0");
	return harness_failed != before;
}

static void check_parity(const char *text, bool bug)
{
	check_parity_on("sched/sched_switch", text, bug);
}

/*
 * Part 1b: each field of the events of a few systems, typed as the kernel types it: a number
 * and a string compared with it are taken or refused alike.  The fields' types are read from
 * the format text as the mount reads a program's (format-field.c): numbers before and after
 * strings, fixed char arrays, dynamic strings and dynamic arrays of numbers.  Left out: the
 * kinds usertp does not give a filter (a "char *" the kernel follows into memory, cpumasks).
 */
static void check_field_types(void)
{
	static const char *const systems[] = { "sched", "irq", "task", "signal", "timer",
					       "workqueue", "module", "syscalls", "block" };
	unsigned int fields_checked = 0, events_checked = 0;

	for (size_t i = 0; i < sizeof(systems) / sizeof(systems[0]); i++) {
		char pattern[256];
		glob_t g;

		snprintf(pattern, sizeof(pattern), TRACEFS "/events/%s/*/format", systems[i]);
		if (glob(pattern, 0, NULL, &g))
			continue;
		for (size_t e = 0; e < g.gl_pathc; e++) {
			struct usertp__filter_field *fields;
			char event[300], *names, *format = read_file(g.gl_pathv[e]);
			int n;

			if (!format)
				continue;
			/* SYSTEM/NAME: the path between events/ and /format */
			snprintf(event, sizeof(event), "%.*s",
				 (int)(strlen(g.gl_pathv[e]) - strlen(TRACEFS "/events/") - 7),
				 g.gl_pathv[e] + strlen(TRACEFS "/events/"));
			n = usertp__filter_fields_of_format(format, &fields, &names);
			events_checked++;
			for (int k = 0; k < n; k++) {
				struct usertp__format_field ff = { .type = "" };
				const char *fl;
				size_t pos = 0, fl_len;
				char text[300];

				/* This field's type, to leave out the kinds said above. */
				while ((fl = usertp__format_next_field_line(format, &pos, &fl_len)))
					if (!usertp__format_field_parse(fl, fl_len, &ff) &&
					    !strcmp(ff.name, fields[k].name))
						break;
				if (strstr(ff.type, "cpumask") || strstr(ff.type, "char *") ||
				    strstr(ff.type, "char*"))
					continue;
				snprintf(text, sizeof(text), "%s == 1", fields[k].name);
				if (check_parity_on(event, text, false))
					break;
				snprintf(text, sizeof(text), "%s ~ \"x*\"", fields[k].name);
				if (check_parity_on(event, text, false))
					break;
				fields_checked++;
			}
			free(fields);
			free(names);
			free(format);
		}
		globfree(&g);
	}
	printf("ok: %u fields of %u kernel events typed as the kernel types them\n", fields_checked,
	       events_checked);
}

/* Part 2: the same records kept. */
static const char *const matching[] = {
	"newcomm == \"ut-alpha\"", "newcomm != \"ut-alpha\"", "newcomm ~ \"ut-a*\"",
	"newcomm ~ \"*ph*\"", "newcomm ~ \"ut-?amma\"",
	"newcomm ~ \"ut-[d-f]*\"", "newcomm ~ \"!ut-a*\"",
	"pid > 0 && oom_score_adj == 0", "oom_score_adj < 1 && !(newcomm ~ \"ut-e*\")",
	"newcomm ~ \"1*\"", "newcomm ~ \"ut-1*\"", "COMM ~ \"ut-*\"", "COMM == \"ut-alpha\"",
	"CPU == CPUS{0} || CPU != 0", "(newcomm == \"ut-beta\" || newcomm == \"ut-gamma\") && pid > 1",
};
static const char *const names_seq[] = { "ut-alpha", "ut-beta", "ut-gamma", "ut-delta",
					  "ut-epsilon", "ut-1*", "ut-zeta", "ut-a", "ut-alphabet" };

/*
 * Suffix globs on fixed char arrays: the kernel compares the end of the whole array (a bug,
 * filter.h); usertp matches the names that end so.  Checked: usertp keeps exactly those.
 */
static const struct {
	const char *text;
	int keep; /* renames of names_seq whose new name ends so */
} suffix_bug[] = {
	{ "newcomm ~ \"*beta\"", 1 },
	{ "newcomm ~ \"*a\"", 6 }, /* ut-alpha, -beta, -gamma, -delta, -zeta, -a */
};

struct line {
	int pid, cpu, oom;
	char old[17], new[17];
};

/* This process's task_rename lines of an instance's trace. */
static int lines_of(const char *inst, struct line *out, int max)
{
	char path[512], *text, *p;
	int n = 0;

	snprintf(path, sizeof(path), "%s/trace", inst);
	text = read_file(path);
	for (p = text; p && *p && n < max; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
		const char *ev = strstr(p, "task_rename: "), *cpu = strstr(p, "[");
		const char *eol = strchr(p, '\n');
		struct line l;

		if (!ev || (eol && ev > eol) || !cpu || (eol && cpu > eol))
			continue;
		if (sscanf(cpu, "[%d]", &l.cpu) != 1 ||
		    sscanf(ev, "task_rename: pid=%d oldcomm=%16s newcomm=%16s oom_score_adj=%d", &l.pid,
			   l.old, l.new, &l.oom) != 4 || l.pid != getpid())
			continue;
		out[n++] = l;
	}
	free(text);
	return n;
}

/* @bug_keep >= 0: a known kernel bug; usertp must keep that many, whatever the kernel does. */
static void check_matching(const char *text, int bug_keep)
{
	struct usertp__filter_field *fields;
	struct usertp__filter_error e;
	struct usertp__filter *f;
	struct line a[64], b[64];
	char path[512], *names;
	int n = fields_of("task/task_rename", &fields, &names), na, nb, kept = 0, ret;
	bool ok = true;

	ret = usertp__filter_compile(text, fields, (unsigned int)n, &f, &e);
	snprintf(path, sizeof(path), "%s/events/task/task_rename/filter", inst_b);
	if (ret || write_file(path, text)) {
		fprintf(stderr, "FAIL [%s]: not taken (usertp %d)\n", text, ret);
		harness_failed++;
		goto out;
	}
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/trace", i ? inst_b : inst_a);
		write_file(path, "");
		snprintf(path, sizeof(path), "%s/events/task/task_rename/enable", i ? inst_b : inst_a);
		write_file(path, "1");
	}
	for (size_t i = 0; i < sizeof(names_seq) / sizeof(names_seq[0]); i++)
		prctl(PR_SET_NAME, names_seq[i]);
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/events/task/task_rename/enable", i ? inst_b : inst_a);
		write_file(path, "0");
	}
	na = lines_of(inst_a, a, 64);
	nb = lines_of(inst_b, b, 64);
	if (na < (int)(sizeof(names_seq) / sizeof(names_seq[0])) - 1) {
		fprintf(stderr, "FAIL [%s]: only %d renames recorded unfiltered\n", text, na);
		harness_failed++;
		goto out;
	}
	for (int i = 0; i < na; i++) {
		unsigned char rec[48] = { 0 };
		short oom = (short)a[i].oom;
		struct usertp__filter_record r = { rec, sizeof(rec), (unsigned int)a[i].cpu, a[i].old };

		memcpy(rec + 4, &a[i].pid, 4);
		memcpy(rec + 8, &a[i].pid, 4);
		strncpy((char *)rec + 12, a[i].old, 16);
		strncpy((char *)rec + 28, a[i].new, 16);
		memcpy(rec + 44, &oom, 2);
		if (!usertp__filter_match(f, &r))
			continue;
		if (kept >= nb || strcmp(b[kept].new, a[i].new) || strcmp(b[kept].old, a[i].old))
			ok = false;
		kept++;
	}
	if (bug_keep >= 0) {
		if (kept != bug_keep) {
			fprintf(stderr, "FAIL [%s]: usertp keeps %d of %d renames, not %d\n", text, kept,
				na, bug_keep);
			harness_failed++;
		} else if (kept != nb) {
			printf("note: [%s]: usertp keeps %d, the kernel %d (its suffix-match bug)\n",
			       text, kept, nb);
		}
	} else if (!ok || kept != nb) {
		fprintf(stderr, "FAIL [%s]: usertp keeps %d of %d renames, the kernel %d\n", text, kept,
			na, nb);
		harness_failed++;
	}
out:
	snprintf(path, sizeof(path), "%s/events/task/task_rename/filter", inst_b);
	write_file(path, "0");
	usertp__filter_free(f);
	free(fields);
	free(names);
}

/* Every format of this kernel passes the check that formats from others must pass. */
static void check_kernel_formats(void)
{
	glob_t g;
	unsigned int ok = 0;

	if (glob(TRACEFS "/events/*/*/format", 0, NULL, &g))
		return;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char *text = read_file(g.gl_pathv[i]), why[256];

		if (text && !usertp__format_check(text, strlen(text), why, sizeof(why))) {
			fprintf(stderr, "FAIL %s: refused: %s\n", g.gl_pathv[i], why);
			harness_failed++;
		} else if (text) {
			ok++;
		}
		free(text);
	}
	globfree(&g);
	printf("ok: %u kernel formats pass usertp__format_check()\n", ok);
}

int main(void)
{
	char orig[17] = "";

	if (geteuid() != 0 || access(TRACEFS "/instances", W_OK) ||
	    access(TRACEFS "/events/sched/sched_switch/format", R_OK) ||
	    access(TRACEFS "/events/task/task_rename/format", R_OK)) {
		printf("SKIP: needs root and tracefs at " TRACEFS " with sched_switch and task_rename\n");
		return 77;
	}
	snprintf(inst_a, sizeof(inst_a), TRACEFS "/instances/usertp-filter-a-%d", (int)getpid());
	snprintf(inst_b, sizeof(inst_b), TRACEFS "/instances/usertp-filter-b-%d", (int)getpid());
	if (mkdir(inst_a, 0755) || mkdir(inst_b, 0755)) {
		printf("SKIP: cannot make tracefs instances: %s\n", strerror(errno));
		cleanup();
		return 77;
	}
	atexit(cleanup);
	prctl(PR_GET_NAME, orig);
	for (size_t i = 0; i < sizeof(parity) / sizeof(parity[0]); i++)
		check_parity(parity[i], false);
	for (size_t i = 0; i < sizeof(kernel_bugs) / sizeof(kernel_bugs[0]); i++)
		check_parity(kernel_bugs[i], true);
	check_field_types();
	check_kernel_formats();
	for (size_t i = 0; i < sizeof(matching) / sizeof(matching[0]); i++)
		check_matching(matching[i], -1);
	for (size_t i = 0; i < sizeof(suffix_bug) / sizeof(suffix_bug[0]); i++)
		check_matching(suffix_bug[i].text, suffix_bug[i].keep);
	prctl(PR_SET_NAME, orig);
	printf("%zu expressions as the kernel takes or refuses them, %zu matched alike: ",
	       sizeof(parity) / sizeof(parity[0]), sizeof(matching) / sizeof(matching[0]));
	return harness_done();
}
