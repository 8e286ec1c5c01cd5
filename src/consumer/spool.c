/* SPDX-License-Identifier: MIT */
/* spool.c - the spool directory of a recording (spool.h says what it holds). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "comms.h"
#include "ctl-proto.h"
#include "number.h"
#include "proc.h"
#include "ring-buffer.h"
#include "spool.h"

#define MAGIC "usertp-spool 1\n"
#define MAX_TEXT (16u << 20) /* a format or a comms text */
#define MAX_SOURCES 1000000u

int usertp__spool_path(char *buf, size_t size, const char *dir, pid_t pid, unsigned int idx,
		      unsigned int cpu)
{
	int n = snprintf(buf, size, "%s/%d-%u.cpu%u", dir, (int)pid, idx, cpu);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int usertp__spool_kernel_path(char *buf, size_t size, const char *dir, unsigned int cpu)
{
	int n = snprintf(buf, size, "%s/kernel.cpu%u", dir, cpu);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* One record: the line, then @len bytes of @data; in one write(2). */
static int put_record(int fd, const char *data, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int put_record(int fd, const char *data, size_t len, const char *fmt, ...)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	va_list ap;
	ssize_t n;
	int ret = 0;

	if (!f)
		return -ENOMEM;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	if (data)
		fwrite(data, 1, len, f);
	if (fclose(f))
		return -ENOMEM;
	n = write(fd, buf, size);
	if (n != (ssize_t)size)
		ret = n < 0 ? -errno : -ENOSPC;
	free(buf);
	return ret;
}

int usertp__spool_meta_create(const char *dir, unsigned int nr_cpus, bool tsc,
			      const struct usertp__tsc_sample *tsc2nsec_start, uint64_t date_offset_us,
			      unsigned int dat_version, bool dat_compress, const char *output)
{
	char path[4200], conv[200] = "", boot[40];
	int fd, ret;

	if (tsc2nsec_start) {
		if (usertp__proc_boot_id(boot, sizeof(boot)))
			snprintf(boot, sizeof(boot), "unknown");
		snprintf(conv, sizeof(conv), " tsc=%llu mono=%llu boot=%s",
			 (unsigned long long)tsc2nsec_start->tsc,
			 (unsigned long long)tsc2nsec_start->mono_ns, boot);
	}
	if (date_offset_us)
		snprintf(conv + strlen(conv), sizeof(conv) - strlen(conv), " date=%llu",
			 (unsigned long long)date_offset_us);
	snprintf(path, sizeof(path), "%s/%s", dir, USERTP_SPOOL_META);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	ret = put_record(fd, NULL, 0, "%srecording cpus=%u clock=%s%s dat=%s output=%s\n", MAGIC,
			 nr_cpus, tsc2nsec_start ? "tsc2nsec"
			 : usertp__rb_clock_name(tsc ? USERTP_RB_CLOCK_TSC : USERTP_RB_CLOCK_MONO), conv,
			 dat_version == 7 ? (dat_compress ? "7-zstd" : "7") : "6", output);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

int usertp__spool_meta_source(int fd, unsigned int idx, pid_t pid, const char *comm, int forked_from)
{
	char forked[32] = "";

	if (forked_from >= 0)
		snprintf(forked, sizeof(forked), " forked=%d", forked_from);
	/* The comm goes last: it may hold spaces. */
	return put_record(fd, NULL, 0, "source %u pid=%d%s comm=%s\n", idx, (int)pid, forked,
			  comm);
}

int usertp__spool_meta_event(int fd, unsigned int idx, unsigned int id, const char *system,
			    const char *format)
{
	return put_record(fd, format, strlen(format), "event %u id=%u system=%s len=%zu\n", idx, id,
			  system, strlen(format));
}

int usertp__spool_meta_comms(int fd, unsigned int idx, const char *comms)
{
	return put_record(fd, comms, strlen(comms), "comms %u len=%zu\n", idx, strlen(comms));
}

int usertp__spool_meta_printk(int fd, unsigned int idx, const char *formats, size_t formats_len,
			      const char *sites, size_t sites_len)
{
	char *text = malloc(formats_len + sites_len + 1);
	int ret;

	if (!text)
		return -ENOMEM;
	memcpy(text, formats, formats_len);
	memcpy(text + formats_len, sites, sites_len);
	ret = put_record(fd, text, formats_len + sites_len, "printk %u len=%zu\n", idx,
			 formats_len + sites_len);
	free(text);
	return ret;
}

int usertp__spool_meta_direct(int fd, unsigned int idx, uint64_t base, uint64_t step)
{
	return put_record(fd, NULL, 0, "direct %u base=%llu step=%llu\n", idx,
			  (unsigned long long)base, (unsigned long long)step);
}

/*
 * Regions 1 TiB apart, or closer where the file system's largest file is smaller (ext4 with
 * 4 KiB blocks: 16 TiB), down to 1 GiB; the first one at one step (the header goes before it).
 */
#define REGION_STEP_MAX (1ull << 40)
#define REGION_STEP_MIN (1ull << 30)

int usertp__spool_direct_open(const char *dir, unsigned int nr_cpus,
			      enum usertp__spool_direct_mode mode, struct usertp__spool_direct *d)
{
	static const unsigned char zero[USERTP__KPAGE_SIZE];
	char path[4200];
	uint64_t step;
	int fd, ret = -EOPNOTSUPP;

	d->fd = d->odirect_fd = -1;
	snprintf(path, sizeof(path), "%s/%s", dir, USERTP_SPOOL_DIRECT);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	/* The farthest region's first page can be written, and the hole before it collapsed. */
	for (step = REGION_STEP_MAX; step >= REGION_STEP_MIN; step /= 2) {
		uint64_t last = step * nr_cpus;

		if (ftruncate(fd, 0) || pwrite(fd, zero, sizeof(zero), 0) != (ssize_t)sizeof(zero))
			break;
		if (pwrite(fd, zero, sizeof(zero), (off_t)last) != (ssize_t)sizeof(zero)) {
			if (errno == EFBIG || errno == EINVAL)
				continue;
			break;
		}
		if (!fallocate(fd, FALLOC_FL_COLLAPSE_RANGE, sizeof(zero), (off_t)(last - sizeof(zero))))
			ret = 0;
		break;
	}
	if (ftruncate(fd, 0) && !ret)
		ret = -errno;
	if (ret) {
		close(fd);
		unlink(path);
		return ret;
	}
	d->base = d->step = step;
	/* Asked: the disk copies the pages where the file system lets it (the CPU does otherwise). */
	d->fd = mode == USERTP_SPOOL_DIRECT_ODIRECT ? open(path, O_RDWR | O_DIRECT | O_CLOEXEC) : -1;
	d->odirect = d->fd >= 0;
	if (d->fd < 0) {
		d->fd = fd;
		if (mode == USERTP_SPOOL_DIRECT_MIXED)
			d->odirect_fd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
		return 0;
	}
	close(fd);
	return 0;
}

uint64_t usertp__spool_region_end(int fd, uint64_t start, uint64_t step)
{
	/* (Its first pages may have been given back: usertp_session_set_dat_limit().) */
	off_t data = lseek(fd, (off_t)start, SEEK_DATA), hole;

	if (data < (off_t)start || (uint64_t)data - start >= step)
		return start;
	hole = lseek(fd, data, SEEK_HOLE);
	if (hole < data)
		return start;
	return (uint64_t)hole - start > step ? start + step : (uint64_t)hole;
}

int usertp__spool_meta_rotated(int fd, const char *output)
{
	return put_record(fd, NULL, 0, "rotated output=%s\n", output);
}

int usertp__spool_meta_kernel(int fd, unsigned int nr_cpus)
{
	return put_record(fd, NULL, 0, "kernel cpus=%u\n", nr_cpus);
}

int usertp__spool_meta_kernel_event(int fd, unsigned int id, const char *system,
				   const char *format)
{
	return put_record(fd, format, strlen(format), "kernel-event id=%u system=%s len=%zu\n", id,
			  system, strlen(format));
}

/* --- reading ------------------------------------------------------------------------------ */

struct cursor {
	const char *p, *end;
	unsigned int line;
};

static int bad(char *err, size_t errlen, const struct cursor *c, const char *what)
{
	snprintf(err, errlen, "line %u of the spool's meta file: %s", c->line, what);
	return -EINVAL;
}

/* The value after " key=" on @line (up to a space, or the end of the line with @last). */
static bool field(const char *line, const char *key, bool last, char *out, size_t size)
{
	char pattern[32];
	const char *v;
	size_t len;

	snprintf(pattern, sizeof(pattern), " %s=", key);
	v = strstr(line, pattern);
	if (!v)
		return false;
	v += strlen(pattern);
	len = last ? strlen(v) : strcspn(v, " ");
	if (len >= size)
		return false;
	memcpy(out, v, len);
	out[len] = 0;
	return true;
}

static bool field_u64(const char *line, const char *key, uint64_t max, uint64_t *out)
{
	char text[32];

	return field(line, key, false, text, sizeof(text)) && !usertp__parse_u64(text, 0, max, out);
}

/*
 * The L bytes after a record's line (its len=L), into *@text (a string).  Return: 0, 1 if the
 * file ends before them (cut short: the recorder died writing it), or a negative errno.
 */
static int read_text(struct cursor *c, const char *line, char **text, char *err, size_t errlen)
{
	uint64_t len;

	*text = NULL;
	if (!field_u64(line, "len", MAX_TEXT, &len))
		return bad(err, errlen, c, "a record without len=");
	if ((uint64_t)(c->end - c->p) < len)
		return 1;
	*text = strndup(c->p, (size_t)len);
	c->p += len;
	return *text ? 0 : -ENOMEM;
}

/* An event's record (its line, then its format) added to *@events.  Return: as read_text(). */
static int read_event(struct cursor *c, const char *line, struct usertp__merge_event **events,
		      unsigned int *nr, char *err, size_t errlen)
{
	char system[256], *text;
	struct usertp__merge_event *ev;
	uint64_t id;
	int ret = read_text(c, line, &text, err, errlen);

	if (ret)
		return ret;
	if (!field_u64(line, "id", 65535, &id) || !id ||
	    !field(line, "system", false, system, sizeof(system)) ||
	    !(ev = realloc(*events, (*nr + 1) * sizeof(*ev)))) {
		free(text);
		return bad(err, errlen, c, "a malformed event");
	}
	*events = ev;
	ev[(*nr)++] = (struct usertp__merge_event){ (unsigned int)id, strdup(system), text };
	return 0;
}

int usertp__spool_meta_read(const char *dir, struct usertp__spool_meta *meta, char *err,
			   size_t errlen)
{
	char path[4200], line[8192];
	enum usertp__rb_clock clock;
	const char *why;
	struct cursor c;
	struct stat st;
	char *data;
	int fd, ret = 0;
	ssize_t n;

	memset(meta, 0, sizeof(*meta));
	meta->direct_source = -1;
	snprintf(path, sizeof(path), "%s/%s", dir, USERTP_SPOOL_META);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC); /* (a link in a spool: not read) */
	if (fd < 0 || fstat(fd, &st)) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s (not a spool directory of usertp record?)", path,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	data = malloc((size_t)st.st_size + 1);
	n = data ? read(fd, data, (size_t)st.st_size) : -1;
	close(fd);
	if (n != st.st_size) {
		free(data);
		snprintf(err, errlen, "%s: cannot read it", path);
		return -EIO;
	}
	data[n] = 0;
	c = (struct cursor){ data, data + n, 0 };
	if ((size_t)n < strlen(MAGIC) || memcmp(data, MAGIC, strlen(MAGIC))) {
		free(data);
		snprintf(err, errlen, "%s: not a spool's meta file", path);
		return -EINVAL;
	}
	c.p += strlen(MAGIC);
	c.line = 1;
	while (c.p < c.end && !ret) {
		const char *nl = memchr(c.p, '\n', (size_t)(c.end - c.p));
		size_t len;
		uint64_t idx, v;

		c.line++;
		if (!nl)
			break; /* cut short: the recorder died writing it */
		len = (size_t)(nl - c.p);
		if (len >= sizeof(line)) {
			ret = bad(err, errlen, &c, "a line too long");
			break;
		}
		memcpy(line, c.p, len);
		line[len] = 0;
		c.p = nl + 1;
		if (!strncmp(line, "recording ", 10)) {
			if (!field_u64(line, "cpus", USERTP_MERGE_MAX_CPUS, &v) || !v ||
			    !field(line, "clock", false, path, sizeof(path)) ||
			    !field(line, "output", true, meta->output, sizeof(meta->output))) {
				ret = bad(err, errlen, &c, "a malformed recording line");
				break;
			}
			meta->nr_cpus = (unsigned int)v;
			meta->tsc2nsec = !strcmp(path, "tsc2nsec");
			if (!meta->tsc2nsec && usertp__rb_parse_clock(path, &clock, &why)) {
				ret = bad(err, errlen, &c, "a clock that is not mono, x86-tsc or tsc2nsec");
				break;
			}
			meta->tsc = meta->tsc2nsec || clock == USERTP_RB_CLOCK_TSC;
			/* (Looked for before the output's name, which may hold anything.) */
			strstr(line, " output=")[1] = 0;
			if (meta->tsc2nsec &&
			    (!field_u64(line, "tsc", UINT64_MAX, &meta->tsc_start.tsc) ||
			     !field_u64(line, "mono", UINT64_MAX, &meta->tsc_start.mono_ns) ||
			     !field(line, "boot", false, meta->boot_id, sizeof(meta->boot_id)))) {
				ret = bad(err, errlen, &c, "tsc2nsec without both clocks and the boot");
				break;
			}
			if (strstr(line, " date=") &&
			    (!field_u64(line, "date", UINT64_MAX / 1000, &meta->date_offset_us) ||
			     !meta->date_offset_us)) {
				ret = bad(err, errlen, &c, "a date offset that is not a number of us");
				break;
			}
			meta->dat_version = 6;
			if (field(line, "dat", false, path, sizeof(path))) {
				meta->dat_version = !strcmp(path, "6") ? 6 : 7;
				meta->dat_compress = !strcmp(path, "7-zstd");
				if (strcmp(path, "6") && strcmp(path, "7") && !meta->dat_compress) {
					ret = bad(err, errlen, &c, "a trace.dat format not 6, 7 or 7-zstd");
					break;
				}
			}
			continue;
		}
		if (!strncmp(line, "rotated ", 8)) {
			/* The files before are written: a recovery writes the one being written. */
			if (!field(line, "output", true, meta->output, sizeof(meta->output))) {
				ret = bad(err, errlen, &c, "a malformed rotated line");
				break;
			}
			continue;
		}
		if (!strncmp(line, "kernel ", 7)) {
			if (!field_u64(line, "cpus", USERTP_MERGE_MAX_CPUS, &v) || !v) {
				ret = bad(err, errlen, &c, "a malformed kernel line");
				break;
			}
			meta->kernel_cpus = (unsigned int)v;
			continue;
		}
		if (!strncmp(line, "kernel-event ", 13)) {
			ret = read_event(&c, line, &meta->kernel_events, &meta->nr_kernel_events, err,
					 errlen);
			if (ret > 0) {
				ret = 0;
				break; /* cut short */
			}
			continue;
		}
		if (sscanf(line, "%*s %lu", (unsigned long *)&idx) != 1 || idx >= MAX_SOURCES) {
			ret = bad(err, errlen, &c, "no source number");
			break;
		}
		if (!strncmp(line, "direct ", 7)) {
			if (idx >= meta->nr_sources || meta->direct_source >= 0 ||
			    !field_u64(line, "base", UINT64_MAX, &meta->direct_base) ||
			    !field_u64(line, "step", UINT64_MAX, &meta->direct_step) ||
			    meta->direct_base % USERTP__KPAGE_SIZE || meta->direct_step % USERTP__KPAGE_SIZE ||
			    !meta->direct_step || meta->direct_base < meta->direct_step) {
				ret = bad(err, errlen, &c, "a malformed direct line");
				break;
			}
			meta->direct_source = (int)idx;
			continue;
		}
		if (!strncmp(line, "source ", 7)) {
			struct usertp__spool_source *s;
			uint64_t pid, parent = 0;
			bool forked = strstr(line, " forked=") != NULL;

			if (idx != meta->nr_sources || !field_u64(line, "pid", INT32_MAX, &pid) ||
			    (forked && (!field_u64(line, "forked", idx, &parent) || parent >= idx))) {
				ret = bad(err, errlen, &c, "a malformed source line");
				break;
			}
			s = realloc(meta->sources, (meta->nr_sources + 1) * sizeof(*s));
			if (!s) {
				ret = -ENOMEM;
				break;
			}
			meta->sources = s;
			s += meta->nr_sources++;
			memset(s, 0, sizeof(*s));
			s->pid = (pid_t)pid;
			s->forked_from = forked ? (int)parent : -1;
			field(line, "comm", true, s->comm, sizeof(s->comm));
			continue;
		}
		if (idx >= meta->nr_sources || !strstr(line, " len=")) {
			ret = bad(err, errlen, &c, "a record of no source, or without len=");
			break;
		}
		{
			struct usertp__spool_source *s = &meta->sources[idx];

			if (!strncmp(line, "event ", 6)) {
				ret = read_event(&c, line, &s->events, &s->nr_events, err, errlen);
			} else if (!strncmp(line, "comms ", 6)) {
				char *text = NULL;

				/* (In parts, as the session heard them: merged as it did.) */
				ret = read_text(&c, line, &text, err, errlen);
				if (text && !ret && usertp__comms_merge(&s->comms, text))
					ret = -ENOMEM;
				free(text);
			} else if (!strncmp(line, "printk ", 7)) {
				char *text = NULL, *all;

				ret = read_text(&c, line, &text, err, errlen);
				all = text && s->printk ? malloc(strlen(s->printk) + strlen(text) + 1) : NULL;
				if (all) {
					strcat(strcpy(all, s->printk), text);
					free(text);
					text = all;
				}
				if (text) {
					free(s->printk);
					s->printk = text;
				}
			} else {
				ret = bad(err, errlen, &c, "an unknown record");
			}
			if (ret > 0) {
				ret = 0;
				break; /* cut short */
			}
		}
	}
	free(data);
	if (!ret && !meta->nr_cpus) {
		snprintf(err, errlen, "the spool's meta file has no recording line");
		ret = -EINVAL;
	}
	if (ret)
		usertp__spool_meta_free(meta);
	return ret;
}

void usertp__spool_meta_free(struct usertp__spool_meta *meta)
{
	for (unsigned int i = 0; i < meta->nr_sources; i++) {
		struct usertp__spool_source *s = &meta->sources[i];

		for (unsigned int e = 0; e < s->nr_events; e++) {
			free((char *)s->events[e].system);
			free((char *)s->events[e].format);
		}
		free(s->events);
		free(s->comms);
		free(s->printk);
	}
	free(meta->sources);
	for (unsigned int e = 0; e < meta->nr_kernel_events; e++) {
		free((char *)meta->kernel_events[e].system);
		free((char *)meta->kernel_events[e].format);
	}
	free(meta->kernel_events);
	memset(meta, 0, sizeof(*meta));
}
