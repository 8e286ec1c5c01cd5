/* SPDX-License-Identifier: MIT */
/*
 * test-spool-meta - the spool's meta file (src/consumer/spool.c), which root's `usertp record
 * --recover` reads from directories other users may have written: what the recorder writes
 * reads back whole; cut at every byte it reads as far as it is whole; every byte changed, and
 * lines made to hurt, give a result or an error, never a crash or a read past the file (the
 * sanitizer builds check that).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc.h"
#include "spool.h"
#include "../harness.h"

static char dir[64];

static void put_meta(const char *data, size_t len)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, USERTP_SPOOL_META);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len) {
		perror(path);
		exit(1);
	}
	close(fd);
}

/* Read the meta file now in dir: 0 or a negative errno with a message. */
static int read_meta(struct usertp__spool_meta *meta)
{
	char err[256] = "";
	int ret = usertp__spool_meta_read(dir, meta, err, sizeof(err));

	CHECK(ret <= 0, "a positive return %d", ret);
	CHECK(!ret || err[0], "an error without a message");
	return ret;
}

static char *slurp(size_t *len)
{
	char path[128];
	struct stat st;
	char *data;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, USERTP_SPOOL_META);
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) || !(data = malloc((size_t)st.st_size + 1)) ||
	    read(fd, data, (size_t)st.st_size) != st.st_size) {
		perror(path);
		exit(1);
	}
	close(fd);
	*len = (size_t)st.st_size;
	return data;
}

static const char *const format = "name: job_done\nID: 7\nformat:\n\tfield:int id;\toffset:8;\n\n"
				  "print fmt: \"id=%d\", REC->id\n";

/* What the recorder writes, read back. */
static char *round_trip(size_t *len)
{
	struct usertp__spool_meta meta;
	struct usertp__tsc_sample start = { 123456789012345ull, 987654321ull };
	char boot[40] = "unknown";
	int fd = usertp__spool_meta_create(dir, 4, true, &start, 1795000000123456ull, 7, true,
					   "/tmp/with space=and.dat tsc=1 mono=2 boot=x date=3");

	CHECK(fd >= 0, "create: %d", fd);
	if (fd < 0)
		exit(1);
	CHECK(!usertp__spool_meta_source(fd, 0, 4242, "worker pool", -1), "source 0");
	CHECK(!usertp__spool_meta_event(fd, 0, 7, "jobs", format), "event");
	CHECK(!usertp__spool_meta_source(fd, 1, 4243, "child", 0), "source 1");
	CHECK(!usertp__spool_meta_comms(fd, 1, "4243 child\n4244 worker\n"), "comms");
	/* (A second part: a new thread, and a thread id used again by another thread.) */
	CHECK(!usertp__spool_meta_comms(fd, 1, "4245 pool-3\n4244 renamed\n"), "more comms");
	CHECK(!usertp__spool_meta_kernel(fd, 2), "kernel");
	CHECK(!usertp__spool_meta_kernel_event(fd, 300, "sched", format), "kernel event");
	close(fd);
	CHECK(!read_meta(&meta), "the recorder's own meta file refused");
	CHECK(meta.nr_cpus == 4 && meta.tsc && meta.dat_version == 7 && meta.dat_compress &&
	      !strcmp(meta.output, "/tmp/with space=and.dat tsc=1 mono=2 boot=x date=3"),
	      "recording: %u %d %u %d %s", meta.nr_cpus, meta.tsc, meta.dat_version,
	      meta.dat_compress, meta.output);
	CHECK(meta.date_offset_us == 1795000000123456ull, "date: %llu",
	      (unsigned long long)meta.date_offset_us);
	/* tsc2nsec: both clocks at the start and this boot (not the output's look-alikes). */
	usertp__proc_boot_id(boot, sizeof(boot));
	CHECK(meta.tsc2nsec && meta.tsc_start.tsc == start.tsc &&
	      meta.tsc_start.mono_ns == start.mono_ns && !strcmp(meta.boot_id, boot),
	      "tsc2nsec: %d %llu %llu %s", meta.tsc2nsec, (unsigned long long)meta.tsc_start.tsc,
	      (unsigned long long)meta.tsc_start.mono_ns, meta.boot_id);
	CHECK(meta.nr_sources == 2 && meta.sources[0].pid == 4242 &&
	      !strcmp(meta.sources[0].comm, "worker pool") && meta.sources[0].forked_from == -1 &&
	      meta.sources[1].forked_from == 0, "sources");
	CHECK(meta.nr_sources == 2 && meta.sources[0].nr_events == 1 &&
	      meta.sources[0].events[0].id == 7 && !strcmp(meta.sources[0].events[0].system, "jobs") &&
	      !strcmp(meta.sources[0].events[0].format, format), "the event");
	/* The parts merged as the session merged them: every thread, each with its latest name. */
	CHECK(meta.nr_sources == 2 && meta.sources[1].comms &&
	      !strcmp(meta.sources[1].comms, "4243 child\n4245 pool-3\n4244 renamed\n"), "comms: %s",
	      meta.sources[1].comms ? meta.sources[1].comms : "(none)");
	CHECK(meta.kernel_cpus == 2 && meta.nr_kernel_events == 1 &&
	      meta.kernel_events[0].id == 300, "the kernel's");
	usertp__spool_meta_free(&meta);
	return slurp(len);
}

/* Cut at every byte: what is whole is read, a record cut short ends it, never more. */
static void truncated(const char *data, size_t len)
{
	for (size_t cut = 0; cut <= len; cut++) {
		struct usertp__spool_meta meta;

		put_meta(data, cut);
		if (read_meta(&meta))
			continue;
		CHECK(meta.nr_sources <= 2 && meta.nr_kernel_events <= 1, "cut at %zu: more read", cut);
		for (unsigned int i = 0; i < meta.nr_sources; i++)
			for (unsigned int e = 0; e < meta.sources[i].nr_events; e++)
				CHECK(!strcmp(meta.sources[i].events[e].format, format),
				      "cut at %zu: a format read cut", cut);
		usertp__spool_meta_free(&meta);
	}
}

/* Every byte changed to each of a few that matter to the grammar. */
static void mutated(const char *data, size_t len)
{
	static const char subst[] = { '\n', ' ', '=', '0', '9', '-', 'x', '\0', (char)0xff };
	char *copy = malloc(len);

	for (size_t at = 0; copy && at < len; at++)
		for (size_t k = 0; k < sizeof(subst); k++) {
			struct usertp__spool_meta meta;

			memcpy(copy, data, len);
			copy[at] = subst[k];
			put_meta(copy, len);
			if (!read_meta(&meta))
				usertp__spool_meta_free(&meta);
		}
	free(copy);
}

/* Lines made to hurt: each is refused (or, cut short, read as far as it is whole). */
static void hostile(void)
{
	static const struct {
		const char *text;
		int refused; /* 1: an error; 0: read (what was whole) */
	} cases[] = {
		{ "usertp-spool 1\n", 1 }, /* no recording line */
		{ "usertp-spool 2\nrecording cpus=1 clock=mono output=x\n", 1 },
		{ "usertp-spool 1\nrecording cpus=0 clock=mono output=x\n", 1 },
		{ "usertp-spool 1\nrecording cpus=99999999999 clock=mono output=x\n", 1 },
		{ "usertp-spool 1\nrecording cpus=1 clock=boot output=x\n", 1 },
		{ "usertp-spool 1\nrecording cpus=1 clock=mono dat=8 output=x\n", 1 },
		{ "usertp-spool 1\nrecording cpus=1 clock=mono\n", 1 },
		/* tsc2nsec without its start, or with it only in the output's name */
		{ "usertp-spool 1\nrecording cpus=1 clock=tsc2nsec output=x\n", 1 },
		{ "usertp-spool 1\nrecording cpus=1 clock=tsc2nsec tsc=1 mono=x boot=b output=x\n", 1 },
		{ "usertp-spool 1\nrecording cpus=1 clock=tsc2nsec output=x tsc=1 mono=2 boot=b\n", 1 },
		{ "usertp-spool 1\nrecording cpus=1 clock=tsc2nsec tsc=1 mono=2 boot=b output=x\n", 0 },
		/* --date's offset: a number of us, not 0; one in the output's name is not it */
		{ "usertp-spool 1\nrecording cpus=1 clock=mono date=x output=x\n", 1 },
		{ "usertp-spool 1\nrecording cpus=1 clock=mono date=0 output=x\n", 1 },
		{ "usertp-spool 1\nrecording cpus=1 clock=mono date=99999999999999999999 output=x\n", 1 },
		{ "usertp-spool 1\nrecording cpus=1 clock=mono date=1795000000000000 output=x\n", 0 },
		{ "usertp-spool 1\nrecording cpus=1 clock=mono output=x date=x\n", 0 },
		{ "usertp-spool 1\nrecording cpus=1 clock=mono output=x\nsource 0 pid=1 forked=0 comm=a\n", 1 },
		{ "usertp-spool 1\nrecording cpus=1 clock=mono output=x\nsource 1 pid=1 comm=a\n", 1 },
		{ "usertp-spool 1\nrecording cpus=1 clock=mono output=x\nsource 0 pid=-1 comm=a\n", 1 },
		{ "usertp-spool 1\nrecording cpus=1 clock=mono output=x\nsource 18446744073709551615 pid=1 comm=a\n", 1 },
		{ "usertp-spool 1\nrecording cpus=1 clock=mono output=x\nevent 0 id=1 system=s len=3\nabc", 1 },
		{ "usertp-spool 1\nrecording cpus=1 clock=mono output=x\nsource 0 pid=1 comm=a\n"
		  "event 0 id=1 system=s len=18446744073709551615\nabc", 1 },
		{ "usertp-spool 1\nrecording cpus=1 clock=mono output=x\nsource 0 pid=1 comm=a\n"
		  "event 0 id=1 system=s len=99\nabc", 0 }, /* cut short */
		{ "usertp-spool 1\nrecording cpus=1 clock=mono output=x\nsource 0 pid=1 comm=a\n"
		  "comms 0\nabc", 1 },
		{ "usertp-spool 1\nrecording cpus=1 clock=mono output=x\nsource 0 pid=1 comm=a\n"
		  "nonsense 0 len=1\na", 1 },
		{ "usertp-spool 1\nrecording cpus=1 clock=mono output=x\nkernel cpus=0\n", 1 },
		{ "usertp-spool 1\nrecording cpus=1 clock=mono output=x\nkernel-event id=1 system=s len=-1\n", 1 },
	};
	struct usertp__spool_meta meta;
	size_t long_len = 20000;
	char *longer = malloc(long_len + 64);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret;

		put_meta(cases[i].text, strlen(cases[i].text));
		ret = read_meta(&meta);
		CHECK((ret < 0) == cases[i].refused, "case %zu: %d", i, ret);
		if (!ret)
			usertp__spool_meta_free(&meta);
	}
	/* A line longer than any the recorder writes (an output's name of 20000 bytes). */
	if (longer) {
		int n = snprintf(longer, 64, "usertp-spool 1\nrecording cpus=1 clock=mono output=");

		memset(longer + n, 'a', long_len);
		longer[n + long_len] = '\n';
		put_meta(longer, (size_t)n + long_len + 1);
		CHECK(read_meta(&meta) < 0, "a line of 20000 bytes read");
		free(longer);
	}
	/* A link in place of the meta file is not followed. */
	{
		char path[128];

		snprintf(path, sizeof(path), "%s/%s", dir, USERTP_SPOOL_META);
		unlink(path);
		CHECK(!symlink("/etc/passwd", path), "symlink");
		CHECK(read_meta(&meta) < 0, "a link followed");
		unlink(path);
	}
}

int main(void)
{
	char *data;
	size_t len;
	char path[128];

	snprintf(dir, sizeof(dir), "/tmp/usertp-spool-meta-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	data = round_trip(&len);
	truncated(data, len);
	mutated(data, len);
	hostile();
	free(data);
	snprintf(path, sizeof(path), "%s/%s", dir, USERTP_SPOOL_META);
	unlink(path);
	rmdir(dir);
	return harness_done();
}
