/* SPDX-License-Identifier: MIT */
/*
 * dat-writer.c - the sink of a session that writes a trace.dat file (usertp_session_write_dat(),
 * sinks.h), and the recovery of a spool a recorder left (usertp_dat_recover()).
 *
 * While the session records, every complete page of a program's buffer is copied as it is to
 * a spool file per program and CPU (spool.h has the directory's layout), and its slot given
 * back to the writer (producer/consumer mode: nothing is overwritten, what does not fit is
 * dropped and counted).  In overwrite mode nothing is read until the end (a flight recorder:
 * the latest data).  At the end the spools are merged into one trace.dat (dat-merge.c): all
 * programs, per CPU in timestamp order, and the CPUSTAT counts of each CPU.
 *
 * The first program of our own user has its spools in the regions of the direct file
 * (spool.h), its pages written there from its buffer as they are, in runs (spool_direct()):
 * when it is the only program with pages at the end, the merge adopts them and the direct
 * file becomes the output (write_in_place()), nothing read back.
 *
 * A spool that cannot be written (a full disk...) stops the reading: what the spools hold is
 * merged into the output, which takes the space the spools give back as they are read; what
 * the programs fire meanwhile is dropped by their buffers, and counted.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/uio.h>
#include <unistd.h>

#include "io.h"
#include "proc.h"
#include "session-core.h"
#include "sinks.h"
#include "spool.h"
#include "trace-dat.h"
#include "zstd.h"

/*
 * Disk space kept for the end: if the spools fill the disk, the output's header and first
 * pages go there, and the rest into the space the spools give back as the merge reads them.
 */
#define RESERVE_BYTES (512u * 1024)

static void spool_kernel_texts_release(const char *dir);

/*
 * One spool: the pages of one program on one CPU, in a file of its own, or in its region of
 * the direct file (spool.h), from @base on (out->written bytes; a recovery's: @len).
 */
struct usertp__spool {
	unsigned int cpu;
	int fd;
	struct usertp__dat_out *out;
	uint64_t allocated; /* bytes of the file given blocks ahead of the writes */
	uint64_t dropped;   /* bytes at its start given back (usertp_session_set_dat_limit()) */
	bool region;	    /* in the direct file */
	uint64_t base, len;
	uint64_t started;   /* bytes handed to the disk (writeback_behind()) */
	uint64_t events, lost; /* the records of its pages, and the losses they mark */
};

/*
 * Blocks are given to a file ahead of its writes (fallocate): ext4 then has no delayed
 * allocation to do page by page, a fifth of the recorder's time otherwise.  A spool gets as
 * much again as it has, from 1 MiB to 32 MiB at a time: never much more than it holds.
 */
#define ALLOCATE_MIN (1u << 20)
#define ALLOCATE_MAX (32u << 20)

/*
 * Blocks for @fd from @base up to past @base + @end (its size unchanged); *allocated says how
 * far past @base it has them.  @most: at most this much at a time (0: no bound but
 * ALLOCATE_MAX).
 */
static void allocate_ahead(int fd, uint64_t base, uint64_t end, uint64_t *allocated, uint64_t most)
{
	uint64_t more = *allocated < ALLOCATE_MIN ? ALLOCATE_MIN
			: *allocated > ALLOCATE_MAX ? ALLOCATE_MAX : *allocated;

	if (most && more > most)
		more = most;

	if (end <= *allocated)
		return;
	if (end - *allocated > more)
		more = end - *allocated;
	/* (Not possible everywhere, and not needed: the writes say if space runs out.) */
	if (!fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)(base + *allocated), (off_t)more))
		*allocated += more;
	else
		*allocated = UINT64_MAX;
}

/*
 * What a spool writes goes to the disk as it comes and leaves the page cache once there, as
 * LTTng's consumer does with its stream files: each window of WRITEBACK_WINDOW bytes is handed
 * to the disk when it is full, and what came before it is dropped from the cache.  Nothing
 * waits for the disk: a page still being written stays (the next window's call drops it),
 * and a disk slower than the programs leaves dirty pages to the kernel's usual throttling.
 * Left to itself, the kernel lets dirty pages pile up, then throttles the recorder while
 * the programs' buffers fill; and a cache that only grows made the copy into it 2 to 8 times
 * as dear in CPU on this project's VMs as pages recycled this way (bench/RESULTS.md,
 * 2026-11-28).  A spool the merge reads back at the end is then read from the disk.
 */
#define WRITEBACK_WINDOW (4u << 20)

static void writeback_behind(struct usertp__spool *sp)
{
	uint64_t written = sp->out->written;

	if (written < sp->started + WRITEBACK_WINDOW)
		return;
	/* (Not everywhere possible, and only an economy: errors are the writes' to say.) */
	(void)sync_file_range(sp->fd, (off_t)(sp->base + sp->started), (off_t)(written - sp->started),
			      SYNC_FILE_RANGE_WRITE);
	(void)posix_fadvise(sp->fd, (off_t)sp->base, (off_t)sp->started, POSIX_FADV_DONTNEED);
	sp->started = written;
}

struct usertp__writer {
	char output[PATH_MAX];
	char dir[PATH_MAX];
	int meta_fd;	  /* the spool's meta file (spool.h) */
	int reserve_fd;
	bool meta_said;
	/* at the last rotation: per CPU, what had been fired, and overwritten (the file's counts
	 * are what came since) */
	uint64_t fired_before[USERTP_MERGE_MAX_CPUS], overrun_before[USERTP_MERGE_MAX_CPUS];
	/* the direct file (spool.h; fd -1: none), and the source whose pages it has */
	struct usertp__spool_direct direct;
	unsigned int direct_cpus; /* its regions */
	struct usertp__source *direct_src;
};

/* What the meta file could not take is said once: a recovery would miss it. */
static void meta_check(struct usertp_session *s, int ret)
{
	struct usertp__writer *w = s->dat;

	if (ret && !w->meta_said && w->meta_fd >= 0)
		usertp__session_log(s, "writing %s/%s: %s (a recovery of this spool would miss what "
				       "follows)", w->dir, USERTP_SPOOL_META, strerror(-ret));
	w->meta_said |= ret != 0;
}

static void write_failed(struct usertp_session *s, int err)
{
	if (s->write_error)
		return;
	s->write_error = err;
	usertp__session_fail(s, err, "writing the spool in %s: %s", s->dat->dir, strerror(-err));
}

static int writer_source(struct usertp_session *s, struct usertp__source *src)
{
	struct usertp__writer *w = s->dat;

	src->spools = calloc(src->view->nr_cpus, sizeof(*src->spools));
	if (!src->spools)
		return -ENOMEM;
	src->nr_spools = src->view->nr_cpus;
	for (unsigned int cpu = 0; cpu < src->nr_spools; cpu++)
		src->spools[cpu].fd = -1;
	/* Whoever recovers the spool learns of the program first, then of the formats known. */
	meta_check(s, usertp__spool_meta_source(w->meta_fd, src->index, src->pid, src->comm,
					       src->forked_from ? (int)src->forked_from->index : -1));
	for (unsigned int i = 0; i < src->nr_events; i++)
		meta_check(s, usertp__spool_meta_event(w->meta_fd, src->index, src->events[i].id,
						       src->events[i].system, src->events[i].format));
	if (s->printk.formats_len || s->printk.sites_len)
		meta_check(s, usertp__spool_meta_printk(w->meta_fd, src->index,
							s->printk.formats ? s->printk.formats : "",
							s->printk.formats_len,
							s->printk.sites ? s->printk.sites : "",
							s->printk.sites_len));
	/*
	 * The first program of our own user (not another's: its pages go to root's file only
	 * through the merge, which checks them) has its pages in the direct file.
	 */
	if (w->direct.fd >= 0 && !w->direct_src && !src->foreign && src->nr_spools <= w->direct_cpus) {
		w->direct_src = src;
		meta_check(s, usertp__spool_meta_direct(w->meta_fd, src->index, w->direct.base,
							w->direct.step));
	}
	for (unsigned int cpu = 0; cpu < src->nr_spools; cpu++) {
		char path[PATH_MAX + 64];
		struct usertp__spool *sp = &src->spools[cpu];

		sp->cpu = cpu;
		if (w->direct_src == src) {
			/* (An open file of its own: its writes go on from its own offset.) */
			snprintf(path, sizeof(path), "%s/%s", w->dir, USERTP_SPOOL_DIRECT);
			sp->region = true;
			sp->base = w->direct.base + cpu * w->direct.step;
			sp->fd = open(path, O_RDWR | O_CLOEXEC);
			if (sp->fd >= 0 && lseek(sp->fd, (off_t)sp->base, SEEK_SET) < 0)
				return -errno;
		} else {
			usertp__spool_path(path, sizeof(path), w->dir, src->pid, src->index, cpu);
			sp->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		}
		sp->out = malloc(sizeof(*sp->out));
		if (sp->fd < 0 || !sp->out)
			return sp->fd < 0 ? -errno : -ENOMEM;
		usertp__dat_out_init(sp->out, sp->fd);
	}
	return 0;
}

static void writer_source_free(struct usertp__source *src)
{
	for (unsigned int cpu = 0; src->spools && cpu < src->nr_spools; cpu++) {
		if (src->spools[cpu].fd >= 0)
			close(src->spools[cpu].fd);
		free(src->spools[cpu].out);
	}
	free(src->spools);
	src->spools = NULL;
}

/* @events records of @src on @cpu (after @lost lost ones) are in its spool, in @bytes. */
static void spooled(struct usertp_session *s, struct usertp__source *src, unsigned int cpu,
		    uint64_t events, uint64_t lost, uint64_t bytes)
{
	s->events += events;
	s->read[cpu] += events;
	src->stats[cpu].read += events;
	src->spools[cpu].events += events;
	src->spools[cpu].lost += lost;
	s->bytes += bytes;
}

/* A page of @src on @cpu (@data: its USERTP__KPAGE_SIZE bytes), to the spool as it is. */
static int spool_page(struct usertp_session *s, struct usertp__source *src, unsigned int cpu,
		      const unsigned char *data, uint32_t used, uint64_t lost_before,
		      uint64_t events)
{
	struct usertp__spool *sp = &src->spools[cpu];
	uint64_t before = sp->out->pos;

	/* (With a limit, no more ahead than it: the disk holds about the limit.) */
	allocate_ahead(sp->fd, sp->base, before + 2 * USERTP__KPAGE_SIZE, &sp->allocated, s->dat_limit);
	/*
	 * A full page has no room after its entries for the count of the events lost before it:
	 * its records then go on two pages, the first with the count (trace-cmd prints a count
	 * only before a record of its page: the file may take these pages as they are).
	 */
	if (lost_before && used + 8 > USERTP__KPAGE_DATA) {
		unsigned char first[USERTP__KPAGE_SIZE], second[USERTP__KPAGE_SIZE];
		uint32_t used1, used2;

		if (!usertp__kpage_split(data, used, USERTP__KPAGE_DATA - 8, first, &used1, second,
					 &used2)) {
			usertp__dat_put_page(sp->out, first, used1, lost_before);
			if (used2)
				usertp__dat_put_page(sp->out, second, used2, 0);
		} else {
			/* (Pages the merge checks: a count on an empty page, marked at the next event.) */
			usertp__dat_put_page(sp->out, data, 0, lost_before);
			usertp__dat_put_page(sp->out, data, used, 0);
		}
	} else {
		usertp__dat_put_page(sp->out, data, used, lost_before);
	}
	if (sp->out->error) {
		write_failed(s, -sp->out->error);
		return -sp->out->error; /* not consumed: the page stays, and is counted there */
	}
	spooled(s, src, cpu, events, lost_before, sp->out->pos - before);
	return 0;
}

static int writer_page(struct usertp_session *s, struct usertp__source *src, unsigned int cpu,
		       const struct usertp__rb_page_copy *page, uint64_t events)
{
	int ret = spool_page(s, src, cpu, page->data, page->used, page->lost_before, events);

	/*
	 * The pages left at the end come without their count (the session counts the buffer's
	 * entries): the spool's is the page's records, for the file taken as it is.
	 */
	if (!ret && !events) {
		struct usertp__kpage_iter it;
		struct usertp__kpage_entry e;

		usertp__kpage_iter_init(&it, page->data, page->used);
		while (usertp__kpage_iter_next(&it, &e) == 1)
			src->spools[cpu].events++;
	}
	return ret;
}

/*
 * Pages @pages[0..@n) of the direct file's source, as they are in its buffer, at the end of
 * the spool's region: in one system call.  With O_DIRECT the disk copies them (no CPU: half
 * of the recorder's per event, bench/RESULTS.md 2026-11-28) but the call waits for the disk,
 * and the pages stay the recorder's meanwhile; so a batch that is at most half the
 * program's buffer goes so (the other half has room for what comes while the disk writes),
 * a larger one (the recorder behind: after a stall of the machine, or a burst) buffered,
 * copied into the page cache at once and the buffer freed sooner.  Their commit words are
 * the writer's (the size of their entries, no loss).  Return: 0, or a negative errno
 * (nothing counted: written again next time, at the same place).
 */
static int spool_direct(struct usertp_session *s, struct usertp__source *src, unsigned int cpu,
			const struct usertp__rb_page_ref *pages, unsigned int n)
{
	struct usertp__spool *sp = &src->spools[cpu];
	struct usertp__writer *w = s->dat;
	struct iovec iov[USERTP_RB_CONSUME_BATCH];
	size_t len = (size_t)n * USERTP__KPAGE_SIZE, done = 0;
	uint64_t events = 0;
	int err = 0;

	/* What went the buffered way before these goes first. */
	usertp__dat_flush(sp->out);
	if (sp->out->error)
		return -sp->out->error;
	if (sp->out->written + len > w->direct.step)
		return -EFBIG; /* its region is full */
	/* (Buffered: blocks ahead, as for the other spools; with O_DIRECT the write takes them.) */
	if (!w->direct.odirect)
		allocate_ahead(sp->fd, sp->base, sp->out->written + len, &sp->allocated, s->dat_limit);
	for (unsigned int i = 0; i < n; i++) {
		iov[i] = (struct iovec){ (void *)pages[i].page, USERTP__KPAGE_SIZE };
		events += pages[i].events;
	}
	while (done < len) {
		unsigned int first = (unsigned int)(done / USERTP__KPAGE_SIZE);
		int fd = w->direct.odirect_fd >= 0 && n <= src->view->nr_pages / 2 ? w->direct.odirect_fd
										   : w->direct.fd;
		ssize_t k = pwritev(fd, iov + first, (int)(n - first),
				    (off_t)(sp->base + sp->out->written + done));

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EINVAL && fd == w->direct.odirect_fd) {
			close(w->direct.odirect_fd);
			w->direct.odirect_fd = -1;
			continue;
		}
		/* A file system that takes O_DIRECT at open but not for these: without it. */
		if (k < 0 && errno == EINVAL && w->direct.odirect) {
			int fl = fcntl(w->direct.fd, F_GETFL);

			w->direct.odirect = false;
			if (fl >= 0 && !fcntl(w->direct.fd, F_SETFL, fl & ~O_DIRECT))
				continue;
		}
		if (k <= 0) {
			err = k < 0 ? -errno : -EIO;
			break;
		}
		/* (Short: whole pages go on from where it stopped.) */
		done += (size_t)k / USERTP__KPAGE_SIZE * USERTP__KPAGE_SIZE;
		if ((size_t)k % USERTP__KPAGE_SIZE) {
			err = -EIO;
			break;
		}
	}
	if (err)
		return err;
	sp->out->pos += len;
	sp->out->written += len;
	if (lseek(sp->fd, (off_t)(sp->base + sp->out->written), SEEK_SET) < 0)
		return -errno;
	spooled(s, src, cpu, events, 0, len);
	return 0;
}

/*
 * Does page @page's commit word say @used bytes of entries and no loss, as readers read it
 * (the writer's seal of a page it left)?  The page can then go to the file as it is.
 */
static bool page_as_sealed(const unsigned char *page, uint32_t used)
{
	uint32_t sealed;
	uint64_t lost;

	return usertp__kpage_header(page, &sealed, &lost) && sealed == used && !lost;
}

/*
 * Producer/consumer mode: complete pages go to the spool from where they are: those of the
 * direct file's source in runs straight from the buffer, the others (and a page after lost
 * events, whose count is added to a copy) copied once.  Return: the pages taken.
 */
static int writer_pages_in_place(struct usertp_session *s, struct usertp__source *src,
				 unsigned int cpu, const struct usertp__rb_page_ref *pages,
				 unsigned int n)
{
	unsigned int i = 0;

	while (i < n) {
		unsigned int run = 0;
		int ret;

		if (src->spools[cpu].region)
			while (i + run < n && !pages[i + run].lost_before &&
			       page_as_sealed(pages[i + run].page, pages[i + run].used))
				run++;
		if (run) {
			ret = spool_direct(s, src, cpu, pages + i, run);
			i += ret ? 0 : run;
		} else {
			ret = spool_page(s, src, cpu, pages[i].page, pages[i].used,
					 pages[i].lost_before, pages[i].events);
			i += ret ? 0 : 1;
		}
		if (ret) {
			write_failed(s, ret);
			return i ? (int)i : ret;
		}
	}
	return (int)n;
}

/* After a round of pages of @src on @cpu: on disk. */
static void writer_flush(struct usertp_session *s, struct usertp__source *src, unsigned int cpu)
{
	struct usertp__spool *sp = &src->spools[cpu];

	usertp__dat_flush(sp->out);
	if (sp->out->error)
		write_failed(s, -sp->out->error);
	else
		writeback_behind(sp);
	/*
	 * A limit: the oldest pages beyond it are given back to the file system (a hole, which
	 * reads as empty pages); the file's CPUSTAT counts their events lost (fired less kept).
	 */
	if (s->dat_limit && sp->out->written > sp->dropped + s->dat_limit) {
		uint64_t to = (sp->out->written - s->dat_limit) / USERTP__KPAGE_SIZE * USERTP__KPAGE_SIZE;

		if (to > sp->dropped &&
		    !fallocate(sp->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			       (off_t)(sp->base + sp->dropped), (off_t)(to - sp->dropped)))
			sp->dropped = to;
	}
}

static void writer_event(struct usertp_session *s, struct usertp__source *src, unsigned int id,
			 const char *system, const char *format)
{
	/* (Before its source line, none: writer_source() writes those it knows then.) */
	if (src->spools)
		meta_check(s, usertp__spool_meta_event(s->dat->meta_fd, src->index, id, system,
						       format));
}

static void writer_printk(struct usertp_session *s, struct usertp__source *src,
			  const char *formats, size_t formats_len, const char *sites, size_t sites_len)
{
	/* (Before its source line, none: writer_source() writes the session's then.) */
	if (src->spools)
		meta_check(s, usertp__spool_meta_printk(s->dat->meta_fd, src->index, formats,
							formats_len, sites, sites_len));
}

static void writer_comms(struct usertp_session *s, struct usertp__source *src, const char *lines)
{
	/* (Each part once: a recovery merges them, as the session did.) */
	meta_check(s, usertp__spool_meta_comms(s->dat->meta_fd, src->index, lines));
}

/* Remove the spool directory and what it holds. */
static void spool_remove(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			unlinkat(dirfd(d), de->d_name, 0);
	if (d)
		closedir(d);
	rmdir(dir);
}

static void writer_free(struct usertp_session *s)
{
	struct usertp__writer *w = s->dat;

	if (!w)
		return;
	if (w->meta_fd >= 0)
		close(w->meta_fd);
	if (w->reserve_fd >= 0)
		close(w->reserve_fd);
	if (w->direct.fd >= 0)
		close(w->direct.fd);
	if (w->direct.odirect_fd >= 0)
		close(w->direct.odirect_fd);
	if (w->dir[0])
		spool_remove(w->dir);
	free(w);
	s->dat = NULL;
	s->sink = NULL;
}

static const struct usertp__sink dat_sink = {
	.source_new = writer_source,
	.source_free = writer_source_free,
	.event = writer_event,
	.comms = writer_comms,
	.printk = writer_printk,
	.page = writer_page,
	.pages_in_place = writer_pages_in_place,
	.flush = writer_flush,
	.free = writer_free,
};

/*
 * A trace.dat is written with seeks (its CPU table and counts go in place at the end), next
 * to a spool directory: a regular file, or none yet, in a directory we can write.
 */
static int output_flags(const struct usertp_session *s)
{
	return O_CREAT | O_CLOEXEC | (s->output_nofollow ? O_NOFOLLOW : 0);
}

static int output_check(struct usertp_session *s, const char *path)
{
	struct stat st;
	int fd = open(path, O_WRONLY | O_EXCL | output_flags(s), 0644), ret;
	bool made = fd >= 0;

	if (fd < 0 && errno == EEXIST)
		fd = open(path, O_WRONLY | output_flags(s), 0644);

	if (fd < 0 && errno == ELOOP && s->output_nofollow)
		return usertp__session_fail(s, -ELOOP, "%s: a symbolic link, not followed", path);
	if (fd < 0)
		return usertp__session_fail(s, -errno, "cannot write %s: %s", path, strerror(errno));
	ret = fstat(fd, &st) || !S_ISREG(st.st_mode) || lseek(fd, 0, SEEK_SET) < 0;
	close(fd);
	/* Made only to know it can be: a recording that never ends leaves no empty file. */
	if (made)
		unlink(path);
	if (ret)
		return usertp__session_fail(s, -EINVAL, "%s: not a regular file; a trace.dat is "
							"written with seeks (write a file, then copy it "
							"where it should go)", path);
	return 0;
}

int usertp_session_set_dat_format(struct usertp_session *s, unsigned int version,
				  const char *compression)
{
	bool zstd = compression && !strcmp(compression, "zstd");

	if (s->dat)
		return usertp__session_fail(s, -EBUSY, "the format is chosen before the file");
	if (version != 6 && version != 7)
		return usertp__session_fail(s, -EINVAL, "trace.dat version %u: 6 or 7", version);
	if (compression && !zstd && strcmp(compression, "none"))
		return usertp__session_fail(s, -EINVAL, "compression %s: none or zstd", compression);
	if (zstd && version != 7)
		return usertp__session_fail(s, -EINVAL, "compression needs trace.dat version 7");
	if (zstd && !usertp__zstd_available())
		return usertp__session_fail(s, -ENOTSUP, "zstd: libzstd.so.1 could not be loaded");
	s->dat_version = version;
	s->dat_compress = zstd;
	return 0;
}

int usertp_session_set_dat_limit(struct usertp_session *s, uint64_t bytes)
{
	if (bytes && bytes < 16 * USERTP__KPAGE_SIZE)
		return usertp__session_fail(s, -EINVAL, "a limit of %llu bytes: 64 KiB at least",
					    (unsigned long long)bytes);
	s->dat_limit = bytes;
	return 0;
}

int usertp_session_set_dat_date(struct usertp_session *s, bool date)
{
	if (s->dat)
		return usertp__session_fail(s, -EBUSY, "--date is chosen before the file");
	if (date && s->file_clock && s->file_choice.buffers == USERTP_RB_CLOCK_TSC &&
	    !s->file_choice.tsc2nsec)
		return usertp__session_fail(s, -EINVAL, "--date needs a clock in nanoseconds "
					    "(mono or tsc2nsec), not x86-tsc");
	s->dat_date = date;
	return 0;
}

/* CLOCK_REALTIME less CLOCK_MONOTONIC now, in microseconds (the DATE option's unit). */
static uint64_t realtime_offset_us(void)
{
	uint64_t mono, real;

	usertp__clock_pair(false, CLOCK_REALTIME, 5, &mono, &real);
	return (real - mono) / 1000;
}

int usertp_session_write_dat(struct usertp_session *s, const char *path)
{
	const char *direct_env;
	struct usertp__writer *w;
	int ret;

	if (s->dat || s->nr_sources)
		return usertp__session_fail(s, -EBUSY, "the file is chosen before the first program");
	if (s->kernel)
		return usertp__session_fail(s, -EBUSY, "the file is chosen before the kernel's "
					    "events are enabled");
	if (!path || strlen(path) + 32 >= sizeof(w->dir))
		return usertp__session_fail(s, -ENAMETOOLONG, "the output's name is too long");
	if (!s->file_clock)
		return usertp__session_fail(s, -EINVAL, "a file's clock is mono, x86-tsc or "
					    "tsc2nsec; %s is for reading live",
					    usertp__live_clock_name(s->conv.to));
	ret = output_check(s, path);
	if (ret)
		return ret;
	/* The file's clock: what the programs count from now (none has joined yet). */
	s->tsc = s->file_choice.buffers == USERTP_RB_CLOCK_TSC;
	s->tsc2nsec = s->file_choice.tsc2nsec;
	if (s->tsc2nsec)
		usertp__tsc_sample(&s->tsc_start);
	s->date_offset_us = s->dat_date ? realtime_offset_us() : 0;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->meta_fd = w->reserve_fd = w->direct.fd = w->direct.odirect_fd = -1;
	snprintf(w->output, sizeof(w->output), "%s", path);
	snprintf(w->dir, sizeof(w->dir), "%s.spool-XXXXXX", path);
	if (!mkdtemp(w->dir)) {
		char dir[sizeof(w->dir)];
		const char *slash = strrchr(path, '/');

		snprintf(dir, sizeof(dir), "%.*s",
			 slash ? (int)(slash - path) + (slash == path) : 1, slash ? path : ".");
		ret = usertp__session_fail(s, -errno, "%s: cannot make files in %s (%s), where the "
					   "recording keeps its pages until the file is written",
					   path, dir, strerror(errno));
		free(w);
		return ret;
	}
	/* The reader of usertp_session_next() is not needed: the session's pages come here. */
	if (s->sink)
		s->sink->free(s);
	s->dat = w;
	s->sink = &dat_sink;
	w->meta_fd = usertp__spool_meta_create(w->dir, s->nr_cpus, s->tsc,
					       s->tsc2nsec ? &s->tsc_start : NULL, s->date_offset_us,
					       s->dat_version, s->dat_compress, path);
	if (w->meta_fd < 0) {
		ret = usertp__session_fail(s, w->meta_fd, "cannot write in %s: %s", w->dir,
					   strerror(-w->meta_fd));
		writer_free(s);
		return ret;
	}
	/*
	 * USERTP_DAT_DIRECT, to compare: 0, every spool a file of its own; buffered, the direct
	 * file's writes all buffered; odirect, all with O_DIRECT (each waits for the disk: one
	 * that stalls longer than the buffers last makes the programs drop events).  Unset (or
	 * anything else): each write chooses (spool_direct()).
	 */
	direct_env = secure_getenv("USERTP_DAT_DIRECT");
	if (!(direct_env && !strcmp(direct_env, "0")) &&
	    !usertp__spool_direct_open(w->dir, s->nr_cpus,
				       !direct_env			    ? USERTP_SPOOL_DIRECT_MIXED
				       : !strcmp(direct_env, "odirect")	    ? USERTP_SPOOL_DIRECT_ODIRECT
				       : !strcmp(direct_env, "buffered") ? USERTP_SPOOL_DIRECT_BUFFERED
									    : USERTP_SPOOL_DIRECT_MIXED,
				       &w->direct))
		w->direct_cpus = s->nr_cpus;
	{
		char reserve[PATH_MAX + 16];

		snprintf(reserve, sizeof(reserve), "%s/reserve", w->dir);
		w->reserve_fd = open(reserve, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (w->reserve_fd >= 0 && fallocate(w->reserve_fd, 0, 0, RESERVE_BYTES)) {
			/* A file system too small, or without fallocate: no reserve. */
			close(w->reserve_fd);
			w->reserve_fd = -1;
		}
	}
	return 0;
}

/* --- the end: one trace.dat ---------------------------------------------------------------- */

/* Has @comms ("tid comm" lines) a line for @tid? */
static bool names_tid(const char *comms, pid_t tid)
{
	for (const char *p = comms; p && *p; p += strcspn(p, "\n"), p += *p == '\n')
		if (atoi(p) == tid)
			return true;
	return false;
}

/* @a then @b (either may be NULL), into a new text (NULL when both are empty, or no memory). */
static char *texts_join(const char *a, size_t alen, const char *b, size_t blen, size_t *len)
{
	char *text;

	*len = (a ? alen : 0) + (b ? blen : 0);
	if (!*len || !(text = malloc(*len + 1)))
		return NULL;
	if (a)
		memcpy(text, a, alen);
	if (b)
		memcpy(text + (a ? alen : 0), b, blen);
	text[*len] = 0;
	return text;
}

/* The "pid comm" lines of @sources, then those of @extra for the other pids. */
static char *all_cmdlines(struct usertp__source *const *sources, unsigned int n,
			  const char *extra, size_t *len)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	if (!f)
		return NULL;
	for (unsigned int i = 0; i < n; i++) {
		const struct usertp__source *src = sources[i];

		/* The process itself, unless its main thread is among those that recorded. */
		if (!names_tid(src->comms, src->pid))
			fprintf(f, "%d %s\n", (int)src->pid, src->comm[0] ? src->comm : "<...>");
		if (src->comms)
			fputs(src->comms, f);
	}
	for (const char *p = extra; p && *p; p += strcspn(p, "\n"), p += *p == '\n') {
		bool named = false;
		pid_t pid = (pid_t)atoi(p);

		for (unsigned int i = 0; i < n && !named; i++)
			named = sources[i]->pid == pid || names_tid(sources[i]->comms, pid);
		if (!named && pid > 0)
			fprintf(f, "%.*s\n", (int)strcspn(p, "\n"), p);
	}
	fclose(f);
	*len = size;
	return text;
}

/*
 * Merge the spools of @sources into @output.  @fired (NULL: not known, a recovery) and
 * @overrun per CPU.  The room the spool @spool_dir kept (its reserve, the kernel's texts,
 * which the caller has in memory) is given back first: the header goes there.
 */
/* The bytes of spool @sp's pages: from its start (a region's base) to its end. */
static uint64_t spool_bytes(const struct usertp__spool *sp)
{
	struct stat st;

	if (sp->out)
		return sp->out->written;
	if (sp->region)
		return sp->len;
	return sp->fd >= 0 && !fstat(sp->fd, &st) ? (uint64_t)st.st_size : 0;
}

/* The mode a new file gets from open(..., 0644) here: 0644 less the umask (from /proc). */
static mode_t new_file_mode(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[128];
	unsigned int mask = 022;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Umask: %o", &mask) == 1)
			break;
	if (f)
		fclose(f);
	return 0644 & ~(mode_t)mask;
}

/*
 * The file written in place: the direct file, whose pages usertp__merge_write() adopts, becomes
 * @output (its mode and owner, where it existed; a link is not written through this way).
 * Return: 0, -EXDEV when its pages cannot be the file's (nothing was changed: merge them
 * elsewhere), or another negative errno with the reason in @err.
 */
static int write_in_place(struct usertp_session *s, const char *output,
			  const struct usertp__merge_input *in, struct usertp__merge_stats *stats,
			  char *err, size_t errlen)
{
	char path[PATH_MAX + 16];
	struct stat st;
	bool existed = !lstat(output, &st);
	int fd, ret;

	if (existed && !S_ISREG(st.st_mode))
		return -EXDEV;
	snprintf(path, sizeof(path), "%s/%s", s->dat->dir, USERTP_SPOOL_DIRECT);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -EXDEV;
	ret = usertp__merge_write(fd, in, stats, err, errlen);
	if (!ret && (fchmod(fd, existed ? st.st_mode & 07777 : new_file_mode()) ||
		     (existed && st.st_uid != geteuid() && fchown(fd, st.st_uid, st.st_gid)))) {
		/* (The file is right all the same; only its mode is ours.) */
	}
	if (close(fd) && !ret) {
		ret = -errno;
		snprintf(err, errlen, "close: %s", strerror(errno));
	}
	if (!ret && rename(path, output)) {
		ret = -errno;
		snprintf(err, errlen, "rename from the spool: %s", strerror(errno));
	}
	return ret;
}

static int write_output(struct usertp_session *s, struct usertp__source *const *sources,
			unsigned int n, unsigned int nr_cpus, const char *output,
			const uint64_t *fired, const uint64_t *overrun, int reserve_fd,
			const char *spool_dir, bool keep_spools, bool in_place,
			struct usertp_dat_summary *sum)
{
	struct usertp__merge_source *ms = calloc(n + 2, sizeof(*ms));
	struct usertp__merge_stats *stats = calloc(1, sizeof(*stats));
	struct usertp__tsc2nsec conv;
	struct usertp__merge_input in = { 0 };
	int **fds = calloc(n + 1, sizeof(*fds));
	uint64_t **regions = calloc(n + 1, sizeof(*regions));
	char err[512] = "", *cmdlines = NULL, *kallsyms = NULL, *printk_formats = NULL;
	int fd, ret = -ENOMEM;

	if (!ms || !stats || !fds || !regions)
		goto out;
	for (unsigned int i = 0; i < n; i++) {
		struct usertp__source *src = sources[i];
		uint64_t *r;

		/* (Sources come in order: a parent has inherited its own before.) */
		usertp__source_inherit(s, src);
		ms[i].name = src->name;
		ms[i].events = src->events;
		ms[i].nr_events = src->nr_events;
		if (!src->nr_spools)
			continue;
		fds[i] = calloc(src->nr_spools, sizeof(int));
		if (!fds[i])
			goto out;
		for (unsigned int cpu = 0; cpu < src->nr_spools; cpu++) {
			if (src->spools[cpu].out)
				usertp__dat_flush(src->spools[cpu].out);
			fds[i][cpu] = src->spools[cpu].fd;
		}
		ms[i].nr_cpus = src->nr_spools;
		ms[i].cpu_fd = fds[i];
		if (!src->spools[0].region)
			continue;
		/* In the direct file: where, how much, and what (for the pages taken as they are). */
		r = regions[i] = calloc(4 * (size_t)src->nr_spools, sizeof(uint64_t));
		if (!r)
			goto out;
		for (unsigned int cpu = 0; cpu < src->nr_spools; cpu++) {
			r[cpu] = src->spools[cpu].base;
			r[src->nr_spools + cpu] = spool_bytes(&src->spools[cpu]);
			r[2 * src->nr_spools + cpu] = src->spools[cpu].events;
			r[3 * src->nr_spools + cpu] = src->spools[cpu].lost;
		}
		ms[i].cpu_base = r;
		ms[i].cpu_len = r + src->nr_spools;
		ms[i].cpu_events = r + 2 * src->nr_spools;
		ms[i].cpu_lost = r + 3 * src->nr_spools;
		/* (Not after pages were given back: their holes are not the file's pages.) */
		if (in_place && s->dat && src == s->dat->direct_src) {
			in.adopt = i + 1;
			for (unsigned int cpu = 0; cpu < src->nr_spools; cpu++)
				if (src->spools[cpu].dropped)
					in.adopt = 0;
		}
	}
	in.sources = ms;
	in.nr_sources = n;
	if (s->extra.src) /* (after the programs: at equal times, theirs first) */
		ms[in.nr_sources++] = *s->extra.src;
	/* The kernel's kallsyms and printk formats, then the programs' (bprint.h). */
	kallsyms = texts_join(s->extra.kallsyms, s->extra.kallsyms_len, s->printk.sites,
			      s->printk.sites_len, &in.kallsyms_len);
	printk_formats = texts_join(s->extra.printk_formats, s->extra.printk_formats_len,
				    s->printk.formats, s->printk.formats_len,
				    &in.printk_formats_len);
	if ((!kallsyms && in.kallsyms_len) || (!printk_formats && in.printk_formats_len))
		goto out;
	in.kallsyms = kallsyms;
	in.printk_formats = printk_formats;
	in.nr_cpus = nr_cpus;
	in.raw_clock = s->tsc;
	/*
	 * Ticks to nanoseconds: fitted between the start and now (exact at both, the rate
	 * between), so that readers print CLOCK_MONOTONIC times (tsc2nsec.h).
	 */
	if (s->tsc2nsec) {
		struct usertp__tsc_sample end;

		usertp__tsc_sample(&end);
		if (usertp__tsc2nsec_fit(&s->tsc_start, &end, &conv))
			in.tsc2nsec = &conv;
	}
	in.release_spools = !keep_spools; /* (else deleted afterwards anyway) */
	in.fired = fired;
	in.overrun = overrun;
	in.file_version = s->dat_version;
	in.compress = s->dat_compress;
	in.date_offset_us = s->date_offset_us;
	if (reserve_fd >= 0 && ftruncate(reserve_fd, 0)) {
		/* nothing to do: the space comes back when the spool directory goes */
	}
	spool_kernel_texts_release(spool_dir);
	cmdlines = all_cmdlines(sources, n, s->extra.cmdlines, &in.cmdlines_len);
	in.cmdlines = cmdlines ? cmdlines : "";
	if (!cmdlines)
		in.cmdlines_len = 0;
	/*
	 * Truncated only if it has something: ext4 writes out at close() a file it saw truncated
	 * and rewritten (auto_da_alloc), a tenth of the merge's time for nothing (the file made
	 * empty by usertp_session_write_dat() is not truncated again).
	 */
	/* The pages of the direct file, as they are, with the header before them: no merge. */
	if (in.adopt && !s->extra.src) {
		ret = write_in_place(s, output, &in, stats, err, sizeof(err));
		if (ret != -EXDEV) {
			if (ret)
				usertp__session_fail(s, ret, "%s: %s", output, err);
			goto summary;
		}
		memset(stats, 0, sizeof(*stats));
		err[0] = 0;
	}
	in.adopt = 0;
	fd = open(output, O_RDWR | output_flags(s), 0644);
	if (fd >= 0 && ((lseek(fd, 0, SEEK_END) > 0 && ftruncate(fd, 0)) || lseek(fd, 0, SEEK_SET))) {
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		ret = usertp__session_fail(s, -errno, "cannot write %s: %s", output, strerror(errno));
	} else {
		uint64_t estimate = 0, allocated = 0;
		struct stat st;

		/* About the spools' size: the same blocks-ahead for the file (cut to size after). */
		for (unsigned int i = 0; i < in.nr_sources; i++)
			for (unsigned int cpu = 0; cpu < ms[i].nr_cpus; cpu++)
				if (ms[i].cpu_len)
					estimate += ms[i].cpu_len[cpu];
				else if (ms[i].cpu_fd[cpu] >= 0 && !fstat(ms[i].cpu_fd[cpu], &st))
					estimate += (uint64_t)st.st_size;
		if (estimate)
			allocate_ahead(fd, 0, estimate + ALLOCATE_MIN, &allocated, 0);
		ret = usertp__merge_write(fd, &in, stats, err, sizeof(err));
		/* What was given ahead and not written goes back. */
		if (allocated && allocated != UINT64_MAX && !fstat(fd, &st) && ftruncate(fd, st.st_size)) {
			/* the blocks stay past the end: the file is right all the same */
		}
		if (close(fd) && !ret) {
			ret = -errno;
			snprintf(err, sizeof(err), "close: %s", strerror(errno));
		}
		/* Not even the header: no file is left that no reader can open. */
		if (ret && !stat(output, &st) && !st.st_size)
			unlink(output);
		if (ret)
			usertp__session_fail(s, ret, "%s: %s", output, err);
	}
summary:
	/*
	 * Lost: everything fired that is not in the file, as its CPUSTAT options say (the file
	 * marks only losses that have an event after them).  A recovery knows only the marks.
	 */
	if (sum) {
		struct usertp_dat_summary all = { .struct_size = sizeof(all),
						  .cpu_events = sum->cpu_events,
						  .cpu_lost = sum->cpu_lost,
						  .max_cpus = sum->max_cpus };

		all.nr_cpus = nr_cpus;
		all.programs = n;
		all.bytes = stats->size;
		snprintf(all.output, sizeof(all.output), "%s", output);
		for (unsigned int cpu = 0; cpu < nr_cpus; cpu++) {
			uint64_t lost = !fired ? stats->lost[cpu]
				      : fired[cpu] > stats->events[cpu] ? fired[cpu] - stats->events[cpu]
									: 0;

			all.events += stats->events[cpu];
			all.lost += lost;
			if (cpu < all.max_cpus && all.cpu_events)
				all.cpu_events[cpu] = stats->events[cpu];
			if (cpu < all.max_cpus && all.cpu_lost)
				all.cpu_lost[cpu] = lost;
		}
		usertp__struct_give(sum, &all, sizeof(all));
	}
out:
	for (unsigned int i = 0; fds && i < n; i++)
		free(fds[i]);
	for (unsigned int i = 0; regions && i < n; i++)
		free(regions[i]);
	free(regions);
	free(fds);
	free(cmdlines);
	free(kallsyms);
	free(printk_formats);
	free(stats);
	free(ms);
	return ret;
}

/*
 * The file of what was recorded since the last rotation (or the start): per CPU, what was
 * fired and overwritten meanwhile, into w->output.  @rotating: the totals of now become the
 * next file's start.
 */
static int write_part(struct usertp_session *s, bool rotating, struct usertp_dat_summary *sum)
{
	struct usertp__writer *w = s->dat;
	unsigned int nr = s->nr_cpus < USERTP_MERGE_MAX_CPUS ? s->nr_cpus : USERTP_MERGE_MAX_CPUS;
	uint64_t *fired = calloc(4 * (size_t)USERTP_MERGE_MAX_CPUS, sizeof(*fired));
	uint64_t *overrun = fired + USERTP_MERGE_MAX_CPUS, *fired_now = overrun + USERTP_MERGE_MAX_CPUS;
	uint64_t *overrun_now = fired_now + USERTP_MERGE_MAX_CPUS;
	int ret;

	if (!fired)
		return -ENOMEM;
	for (unsigned int cpu = 0; cpu < nr; cpu++) {
		fired_now[cpu] = s->read[cpu] + s->dropped[cpu] + s->overrun[cpu];
		overrun_now[cpu] = s->overrun[cpu];
		if (s->extra.src) {
			fired_now[cpu] += s->extra.fired[cpu];
			overrun_now[cpu] += s->extra.overrun[cpu];
		}
		fired[cpu] = fired_now[cpu] - w->fired_before[cpu];
		overrun[cpu] = overrun_now[cpu] - w->overrun_before[cpu];
	}
	/* (Rotating, the direct file goes on: its pages are merged into the file.) */
	ret = write_output(s, s->sources, s->nr_sources, s->nr_cpus, w->output, fired, overrun,
			   w->reserve_fd, w->dir, false, !rotating, sum);
	/* (A file not written: its pages stay in the spools, for the next try.) */
	if (!ret && rotating) {
		memcpy(w->fired_before, fired_now, nr * sizeof(*fired_now));
		memcpy(w->overrun_before, overrun_now, nr * sizeof(*overrun_now));
	}
	free(fired);
	return ret;
}

int usertp__writer_finish(struct usertp_session *s, struct usertp_dat_summary *sum)
{
	return write_part(s, false, sum);
}

/*
 * A snapshot's spools of the live source @src: its buffers' pages now, copied into files of
 * their own (unnamed, in the spool directory), its counts added to @fired and @overrun; the
 * session's own spools and counts are not touched.  Return: the spools (nr_cpus), or NULL.
 */
static struct usertp__spool *snapshot_spools(struct usertp_session *s, struct usertp__source *src,
					    uint64_t *fired, uint64_t *overrun)
{
	struct usertp__spool *sp = calloc(src->nr_spools, sizeof(*sp));
	struct usertp__rb_snapshot snap;

	if (!sp)
		return NULL;
	for (unsigned int cpu = 0; cpu < src->nr_spools; cpu++) {
		sp[cpu].cpu = cpu;
		sp[cpu].fd = open(s->dat->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		sp[cpu].out = malloc(sizeof(*sp[cpu].out));
		if (sp[cpu].fd >= 0 && sp[cpu].out)
			usertp__dat_out_init(sp[cpu].out, sp[cpu].fd);
	}
	if (usertp__rb_snapshot(src->map, src->size, &snap))
		return sp; /* (a buffer that does not hold together: nothing of it) */
	for (unsigned int cpu = 0; cpu < snap.nr_cpus && cpu < src->nr_spools; cpu++) {
		const struct usertp__rb_cpu_snapshot *c = &snap.cpus[cpu];

		if (!sp[cpu].out || sp[cpu].fd < 0)
			continue;
		for (unsigned int p = 0; p < c->nr_pages; p++) {
			/* Overwritten events were before the oldest page kept. */
			uint64_t lost = c->pages[p].lost_before + (p == 0 ? c->overrun : 0);

			if (c->pages[p].used || lost)
				usertp__dat_put_page(sp[cpu].out, c->pages[p].data, c->pages[p].used, lost);
		}
		usertp__dat_flush(sp[cpu].out);
		fired[cpu] += c->entries + c->dropped + c->overrun;
		overrun[cpu] += c->overrun;
	}
	usertp__rb_snapshot_free(&snap);
	return sp;
}

static void snapshot_spools_free(struct usertp__spool *sp, unsigned int nr)
{
	for (unsigned int cpu = 0; sp && cpu < nr; cpu++) {
		if (sp[cpu].fd >= 0)
			close(sp[cpu].fd);
		free(sp[cpu].out);
	}
	free(sp);
}

int usertp_session_snapshot(struct usertp_session *s, const char *path, struct usertp_dat_summary *sum)
{
	struct usertp__writer *w = s->dat;
	struct usertp__spool **saved = NULL;
	uint64_t *fired = NULL, *overrun;
	int ret;

	if (!w || !s->overwrite)
		return usertp__session_fail(s, w ? -EOPNOTSUPP : -EINVAL, "a snapshot is of a flight "
					    "recorder: a file in overwrite mode");
	if (s->kernel || s->extra.src)
		return usertp__session_fail(s, -EOPNOTSUPP, "a recording with the kernel's events "
					    "takes no snapshot yet");
	if (!path || strlen(path) >= sizeof(w->output))
		return usertp__session_fail(s, -ENAMETOOLONG, "the snapshot's name is too long");
	ret = output_check(s, path);
	if (ret)
		return ret;
	fired = calloc(2 * (size_t)USERTP_MERGE_MAX_CPUS, sizeof(*fired));
	saved = calloc(s->nr_sources ? s->nr_sources : 1, sizeof(*saved));
	if (!fired || !saved) {
		ret = -ENOMEM;
		goto out;
	}
	overrun = fired + USERTP_MERGE_MAX_CPUS;
	/*
	 * A program still recording: its buffers as they are now, in spools of the snapshot's.
	 * One that has ended: what the session took of it then, in its own spools.
	 */
	for (unsigned int i = 0; i < s->nr_sources; i++) {
		struct usertp__source *src = s->sources[i];

		saved[i] = src->spools;
		if (!src->spools)
			continue;
		if (src->ended) {
			for (unsigned int cpu = 0; cpu < src->nr_spools && cpu < USERTP_MERGE_MAX_CPUS; cpu++) {
				fired[cpu] += src->stats[cpu].read + src->stats[cpu].dropped +
					      src->stats[cpu].overrun;
				overrun[cpu] += src->stats[cpu].overrun;
			}
			continue;
		}
		src->spools = snapshot_spools(s, src, fired, overrun);
	}
	ret = write_output(s, s->sources, s->nr_sources, s->nr_cpus, path, fired, overrun, -1,
			   NULL, true, false, sum);
	for (unsigned int i = 0; i < s->nr_sources; i++) {
		struct usertp__source *src = s->sources[i];

		if (src->spools != saved[i]) {
			snapshot_spools_free(src->spools, src->nr_spools);
			src->spools = saved[i];
		}
	}
out:
	free(saved);
	free(fired);
	return ret;
}

int usertp_session_rotate(struct usertp_session *s, const char *next, struct usertp_dat_summary *sum)
{
	struct usertp__writer *w = s->dat;
	int ret;

	if (!w)
		return usertp__session_fail(s, -EINVAL, "no file to rotate: "
					    "usertp_session_write_dat() first");
	if (s->overwrite || s->kernel || s->extra.src)
		return usertp__session_fail(s, -EOPNOTSUPP, "a recording %s does not rotate",
					    s->overwrite ? "in overwrite mode (written at its end)"
							 : "with the kernel's events");
	if (!next || strlen(next) >= sizeof(w->output))
		return usertp__session_fail(s, -ENAMETOOLONG, "the next file's name is too long");
	ret = output_check(s, next);
	if (ret)
		return ret;
	/* What the session took so far goes into this file (the caller processes first). */
	ret = write_part(s, true, sum);
	if (ret)
		return ret;
	/* Its pages are in it: the spools start again, empty. */
	for (unsigned int i = 0; i < s->nr_sources; i++) {
		struct usertp__source *src = s->sources[i];

		for (unsigned int cpu = 0; cpu < src->nr_spools; cpu++) {
			struct usertp__spool *sp = &src->spools[cpu];

			if (!sp->out)
				continue;
			if ((sp->region ? sp->out->written &&
						  fallocate(sp->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
							    (off_t)sp->base, (off_t)sp->out->written)
					: ftruncate(sp->fd, 0)) ||
			    lseek(sp->fd, (off_t)sp->base, SEEK_SET) < 0)
				ret = ret ? ret : usertp__session_fail(s, -errno, "%s: %s", w->dir,
								       strerror(errno));
			sp->out->pos = sp->out->written = 0;
			sp->out->len = 0;
			sp->allocated = sp->dropped = 0;
			sp->started = 0;
			sp->events = sp->lost = 0;
		}
	}
	snprintf(w->output, sizeof(w->output), "%s", next);
	meta_check(s, usertp__spool_meta_rotated(w->meta_fd, next));
	return ret;
}

void usertp__session_extra(struct usertp_session *s, const struct usertp__session_extra *x)
{
	s->extra = *x;
}

const char *usertp__session_spool_dir(const struct usertp_session *s)
{
	return s->dat ? s->dat->dir : NULL;
}

static const char *const kernel_texts[] = { USERTP_SPOOL_KERNEL_KALLSYMS,
					    USERTP_SPOOL_KERNEL_PRINTK,
					    USERTP_SPOOL_KERNEL_CMDLINES };

/* Give back the room of the kernel's texts in spool @dir (NULL: none). */
static void spool_kernel_texts_release(const char *dir)
{
	char path[PATH_MAX + 64];

	for (unsigned int i = 0; dir && i < sizeof(kernel_texts) / sizeof(*kernel_texts); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, kernel_texts[i]);
		unlink(path);
	}
}

int usertp__session_spool_kernel(struct usertp_session *s, unsigned int nr_cpus,
				 const struct usertp__merge_event *events, unsigned int nr_events,
				 const struct usertp__session_extra *x)
{
	struct usertp__writer *w = s->dat;
	const char *text[] = { x->kallsyms, x->printk_formats, x->cmdlines };
	size_t len[] = { x->kallsyms_len, x->printk_formats_len, x->cmdlines ? strlen(x->cmdlines) : 0 };
	int ret;

	if (!w)
		return usertp__session_fail(s, -EINVAL, "no file: usertp_session_write_dat() first");
	ret = usertp__spool_meta_kernel(w->meta_fd, nr_cpus);
	for (unsigned int i = 0; !ret && i < nr_events; i++)
		ret = usertp__spool_meta_kernel_event(w->meta_fd, events[i].id, events[i].system,
						      events[i].format);
	for (unsigned int i = 0; !ret && i < sizeof(kernel_texts) / sizeof(*kernel_texts); i++) {
		char path[PATH_MAX + 64];
		int fd;

		snprintf(path, sizeof(path), "%s/%s", w->dir, kernel_texts[i]);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0) {
			ret = -errno;
			break;
		}
		ret = usertp__write_all(fd, text[i], len[i], NULL);
		close(fd);
	}
	return ret ? usertp__session_fail(s, ret, "cannot write the kernel's part of the spool in "
					  "%s: %s", w->dir, strerror(-ret))
		   : 0;
}

/* The kernel's part of a spool being recovered. */
struct recovered_kernel {
	struct usertp__merge_source src;
	int *fds;
	char *texts[3]; /* kernel_texts[] */
	size_t lens[3];
};

/* A text file of spool @dir, whole (a link is not followed; at most 256 MiB).  NULL: none. */
int usertp__writer_kernel_event(struct usertp_session *s, const struct usertp__merge_event *ev)
{
	int ret = usertp__spool_meta_kernel_event(s->dat->meta_fd, ev->id, ev->system, ev->format);

	return ret ? usertp__session_fail(s, ret, "cannot write in %s: %s", s->dat->dir,
					  strerror(-ret))
		   : 0;
}

static char *spool_text(const char *dir, const char *name, size_t *len)
{
	char path[PATH_MAX + 64], *text = NULL;
	struct stat st;
	int fd;

	*len = 0;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size < (256 << 20) &&
	    (text = malloc((size_t)st.st_size + 1))) {
		ssize_t n = read(fd, text, (size_t)st.st_size);

		*len = n > 0 ? (size_t)n : 0;
		text[*len] = 0;
	}
	close(fd);
	return text;
}

/* The kernel's pages, formats and texts in spool @dir, as the session's extra source. */
static int recover_kernel(struct usertp_session *s, const char *dir,
			  const struct usertp__spool_meta *meta, struct recovered_kernel *k)
{
	k->fds = calloc(meta->kernel_cpus, sizeof(*k->fds));
	if (!k->fds)
		return -ENOMEM;
	for (unsigned int cpu = 0; cpu < meta->kernel_cpus; cpu++) {
		char path[PATH_MAX + 64];

		usertp__spool_kernel_path(path, sizeof(path), dir, cpu);
		k->fds[cpu] = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC); /* -1: none */
	}
	for (unsigned int i = 0; i < sizeof(kernel_texts) / sizeof(*kernel_texts); i++)
		k->texts[i] = spool_text(dir, kernel_texts[i], &k->lens[i]);
	k->src = (struct usertp__merge_source){ .name = "the kernel", .events = meta->kernel_events,
						.nr_events = meta->nr_kernel_events,
						.nr_cpus = meta->kernel_cpus, .cpu_fd = k->fds };
	s->extra = (struct usertp__session_extra){ .src = &k->src,
						   .kallsyms = k->texts[0],
						   .kallsyms_len = k->lens[0],
						   .printk_formats = k->texts[1],
						   .printk_formats_len = k->lens[1],
						   .cmdlines = k->texts[2] };
	return 0;
}

static void recovered_kernel_free(struct recovered_kernel *k, unsigned int nr_cpus)
{
	for (unsigned int cpu = 0; k->fds && cpu < nr_cpus; cpu++)
		if (k->fds[cpu] >= 0)
			close(k->fds[cpu]);
	free(k->fds);
	for (unsigned int i = 0; i < 3; i++)
		free(k->texts[i]);
}

int usertp_dat_recover(const char *dir, const char *output, struct usertp_dat_summary *sum,
		       char *err, size_t errlen)
{
	struct usertp__spool_meta meta;
	struct recovered_kernel kernel = { .fds = NULL };
	struct usertp_session *s = NULL;
	struct usertp__source **sources = NULL;
	unsigned int n = 0;
	bool foreign;
	int ret;

	struct stat st;

	if (sum && !USERTP__STRUCT_OK(sum, usertp_dat_summary, output)) {
		snprintf(err, errlen, "a struct usertp_dat_summary without its size "
			 "(USERTP_STRUCT_INIT)");
		return -EINVAL;
	}

	/*
	 * A spool of another user (root recovering it) is that user's input: its meta does not
	 * choose where root writes (the output must be given), no link is followed to the output
	 * or within the spool.
	 */
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode)) {
		bool link = !lstat(dir, &st) && S_ISLNK(st.st_mode);

		snprintf(err, errlen, "not a spool directory%s",
			 link ? " (a symbolic link: not followed)" : "");
		return -ENOTDIR;
	}
	foreign = st.st_uid != geteuid();
	if (foreign && !output) {
		snprintf(err, errlen, "the spool belongs to another user (uid %u): give the output "
			 "with -o (the spool's own is not taken)", (unsigned int)st.st_uid);
		return -EPERM;
	}
	ret = usertp__spool_meta_read(dir, &meta, err, errlen);
	if (ret)
		return ret;
	/* A session of no programs, to carry the sources and say what went wrong. */
	s = calloc(1, sizeof(*s));
	sources = calloc(meta.nr_sources + 1, sizeof(*sources));
	if (!s || !sources) {
		ret = -ENOMEM;
		goto out;
	}
	s->tsc = meta.tsc;
	/*
	 * The TSC counts on only within one boot: the conversion is fitted from the start to
	 * now on the same boot; after a restart the file keeps its ticks (its clock: x86-tsc).
	 */
	if (meta.tsc2nsec) {
		char boot[40];

		s->tsc2nsec = !usertp__proc_boot_id(boot, sizeof(boot)) &&
			      !strcmp(boot, meta.boot_id);
		s->tsc_start = meta.tsc_start;
	}
	s->dat_version = meta.dat_version;
	s->dat_compress = meta.dat_compress;
	s->date_offset_us = meta.date_offset_us;
	s->output_nofollow = true;
	if (!output)
		output = meta.output;
	ret = output_check(s, output);
	for (unsigned int i = 0; i < meta.nr_sources && !ret; i++) {
		struct usertp__spool_source *ms = &meta.sources[i];
		struct usertp__source *src = calloc(1, sizeof(*src));

		if (!src || !(src->spools = calloc(meta.nr_cpus, sizeof(*src->spools)))) {
			free(src);
			ret = -ENOMEM;
			break;
		}
		sources[n++] = src;
		src->pid = ms->pid;
		memcpy(src->comm, ms->comm, sizeof(src->comm));
		snprintf(src->name, sizeof(src->name), "%s[%d]", src->comm[0] ? src->comm : "?",
			 (int)src->pid);
		src->ended = true;
		src->nr_spools = meta.nr_cpus;
		src->forked_from = ms->forked_from >= 0 && (unsigned int)ms->forked_from < i
					   ? sources[ms->forked_from] : NULL;
		/* The source takes over the texts. */
		src->events = ms->events;
		src->nr_events = ms->nr_events;
		src->comms = ms->comms;
		ms->events = NULL;
		ms->nr_events = 0;
		ms->comms = NULL;
		if (ms->printk)
			usertp__session_keep_printk(s, src, ms->printk);
		for (unsigned int cpu = 0; cpu < meta.nr_cpus; cpu++) {
			struct usertp__spool *sp = &src->spools[cpu];
			char path[PATH_MAX + 64];

			sp->cpu = cpu;
			if (meta.direct_source == (int)i) {
				/* Its pages: a region of the direct file each, up to their first hole. */
				snprintf(path, sizeof(path), "%s/%s", dir, USERTP_SPOOL_DIRECT);
				sp->region = true;
				sp->base = meta.direct_base + cpu * meta.direct_step;
				sp->fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
				if (sp->fd >= 0)
					sp->len = usertp__spool_region_end(sp->fd, sp->base,
									  meta.direct_step) - sp->base;
				continue;
			}
			usertp__spool_path(path, sizeof(path), dir, ms->pid, i, cpu);
			/* -1: none (a link: not followed) */
			sp->fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		}
	}
	if (!ret && meta.kernel_cpus)
		ret = recover_kernel(s, dir, &meta, &kernel);
	/* (The spool is left whole until the file is written: no room given back.) */
	if (!ret)
		ret = write_output(s, sources, n, meta.nr_cpus, output, NULL, NULL, -1, NULL, false,
				   false, sum);
	if (ret && s->error[0])
		snprintf(err, errlen, "%s", s->error);
	else if (ret)
		snprintf(err, errlen, "%s", strerror(-ret));
	if (!ret)
		spool_remove(dir); /* once the file is written */
out:
	for (unsigned int i = 0; i < n; i++) {
		writer_source_free(sources[i]);
		usertp__source_free_formats(sources[i]);
		free(sources[i]->comms);
		free(sources[i]);
	}
	free(sources);
	if (s)
		usertp__session_printk_free(s);
	free(s);
	recovered_kernel_free(&kernel, meta.kernel_cpus);
	usertp__spool_meta_free(&meta);
	return ret;
}
