/* SPDX-License-Identifier: MIT */
/*
 * ctl-proto.c - the control protocol's plumbing: the runtime directory, framed messages with
 * an optional descriptor, peer checks.  ctl-proto.h describes the protocol.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ctl-proto.h"
#include "io.h"
#include "pid-list.h"
#include "number.h"
#include "ring-buffer.h"
#include "spec.h"

/* Is @path a real directory (not a link) owned by @uid that nobody else may enter? */
static int dir_check(const char *path, uid_t uid)
{
	struct stat st;

	if (lstat(path, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 077))
		return -EPERM;
	return 0;
}

/* Is @path a directory of @uid's that others cannot write (a parent we may create in)? */
static bool parent_ok(const char *path, uid_t uid)
{
	struct stat st;

	return path && path[0] == '/' && !stat(path, &st) && S_ISDIR(st.st_mode) &&
	       st.st_uid == uid && !(st.st_mode & 022);
}

/* The home directory of @uid: ours is $HOME; another's, as the password database has it. */
static const char *home_of(uid_t uid, char *buf, size_t size)
{
	struct passwd pw, *found = NULL;
	const char *home = secure_getenv("HOME");

	if (uid == geteuid() && home && home[0] == '/')
		return home;
	if (getpwuid_r(uid, &pw, buf, size, &found) || !found || !found->pw_dir)
		return NULL;
	return found->pw_dir;
}

/*
 * The candidates, in order: $XDG_RUNTIME_DIR/usertp; /run/user/UID/usertp (where logind made
 * the user's runtime directory); /tmp/usertp-UID, unless someone else made that first (a
 * directory or a link of another user: /tmp is everybody's); then ~/.cache/usertp-run.
 * Return: 0 with the path in @buf and, when /tmp/usertp-UID was passed over, why in @note.
 */
static int pick_dir(char *buf, size_t size, uid_t uid, const char *xdg, char *note,
		    size_t note_size)
{
	char run[64], tmp[64], pwbuf[4096];
	const char *home;
	struct stat st;
	int n;

	if (note_size)
		note[0] = 0;
	if (xdg && xdg[0] == '/' && !stat(xdg, &st) && S_ISDIR(st.st_mode) && st.st_uid == uid)
		n = snprintf(buf, size, "%s/usertp", xdg);
	else if (snprintf(run, sizeof(run), "/run/user/%u", (unsigned int)uid) > 0 &&
		 parent_ok(run, uid))
		n = snprintf(buf, size, "%s/usertp", run);
	else if (snprintf(tmp, sizeof(tmp), "/tmp/usertp-%u", (unsigned int)uid) > 0 &&
		 (lstat(tmp, &st) || (S_ISDIR(st.st_mode) && st.st_uid == uid)))
		n = snprintf(buf, size, "%s", tmp);
	else if ((home = home_of(uid, pwbuf, sizeof(pwbuf))) && parent_ok(home, uid)) {
		if (note_size)
			snprintf(note, note_size,
				 "%s is %s of uid %u, not ours (another user made it first): using "
				 "%s/.cache/usertp-run instead", tmp, S_ISLNK(st.st_mode) ? "a link" :
				 S_ISDIR(st.st_mode) ? "a directory" : "a file",
				 (unsigned int)st.st_uid, home);
		n = snprintf(buf, size, "%s/.cache/usertp-run", home);
	} else {
		if (note_size)
			snprintf(note, note_size, "%s belongs to uid %u (another user made it first) "
				 "and there is no home directory of ours to use instead: set "
				 "XDG_RUNTIME_DIR to a directory of yours", tmp, (unsigned int)st.st_uid);
		return -EPERM;
	}
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int usertp__ctl_dir_of(char *buf, size_t size, uid_t uid, const char *xdg)
{
	return pick_dir(buf, size, uid, xdg, NULL, 0);
}

int usertp__ctl_dir_note(char *buf, size_t size, bool create, char *note, size_t note_size)
{
	uid_t uid = geteuid();
	int ret = pick_dir(buf, size, uid, secure_getenv("XDG_RUNTIME_DIR"), note, note_size);

	if (ret)
		return ret;
	if (create) {
		char *slash = strrchr(buf, '/');

		/* ~/.cache may not be there yet. */
		if (slash && !strcmp(slash, "/usertp-run")) {
			*slash = 0;
			if (mkdir(buf, 0700) && errno != EEXIST)
				ret = -errno;
			*slash = '/';
			if (ret)
				return ret;
		}
		if (mkdir(buf, 0700) && errno != EEXIST)
			return -errno;
	}
	return dir_check(buf, uid);
}

int usertp__ctl_dir(char *buf, size_t size, bool create)
{
	return usertp__ctl_dir_note(buf, size, create, NULL, 0);
}

int usertp__ctl_system_dir(char *buf, size_t size, bool create)
{
	const char *path = secure_getenv("USERTP_SYSTEM_DIR");
	struct stat st;

	if (!path || path[0] != '/')
		path = USERTP_CTL_SYSTEM_DIR;
	if ((size_t)snprintf(buf, size, "%s", path) >= size)
		return -ENAMETOOLONG;
	if (create && !mkdir(buf, 0755))
		chmod(buf, 0755); /* (whatever the umask: others enter it) */
	else if (create && errno != EEXIST)
		return -errno;
	if (lstat(buf, &st))
		return -errno;
	return S_ISDIR(st.st_mode) && st.st_uid == 0 && !(st.st_mode & 022) ? 0 : -EPERM;
}

void usertp__ctl_attach_fd(struct msghdr *mh, union usertp__ctl_fd_control *control, int fd)
{
	struct cmsghdr *cm;

	memset(control, 0, sizeof(*control));
	mh->msg_control = control->buf;
	mh->msg_controllen = sizeof(control->buf);
	cm = CMSG_FIRSTHDR(mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
}

int usertp__ctl_send(int sock, const void *msg, size_t len, int pass_fd)
{
	uint32_t hdr = (uint32_t)len;
	struct iovec iov[2] = { { &hdr, sizeof(hdr) }, { (void *)msg, len } };
	union usertp__ctl_fd_control control;
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
	size_t sent = 0, total = sizeof(hdr) + len;

	if (len > USERTP_CTL_MAX_MSG)
		return -EMSGSIZE;
	if (pass_fd >= 0)
		usertp__ctl_attach_fd(&mh, &control, pass_fd);
	while (sent < total) {
		ssize_t n = sendmsg(sock, &mh, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		sent += (size_t)n;
		/* The descriptor went with the first bytes; move the vectors past what was sent. */
		mh.msg_control = NULL;
		mh.msg_controllen = 0;
		while (mh.msg_iovlen && (size_t)n >= mh.msg_iov->iov_len) {
			n -= (ssize_t)mh.msg_iov->iov_len;
			mh.msg_iov++;
			mh.msg_iovlen--;
		}
		if (mh.msg_iovlen) {
			mh.msg_iov->iov_base = (char *)mh.msg_iov->iov_base + n;
			mh.msg_iov->iov_len -= (size_t)n;
		}
	}
	return 0;
}

int usertp__ctl_sendf(int sock, int pass_fd, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -EMSGSIZE;
	return usertp__ctl_send(sock, buf, (size_t)n, pass_fd);
}

void usertp__ctl_refuse_nowait(int sock, int err, const char *fmt, ...)
{
	char why[400], *text = NULL;
	va_list ap;
	long len;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	len = usertp__ctl_encode_error(err, why, &text);
	if (len > 0) {
		char buf[512];
		uint32_t n = (uint32_t)len;

		if ((size_t)len <= sizeof(buf) - sizeof(n)) {
			memcpy(buf, &n, sizeof(n));
			memcpy(buf + sizeof(n), text, (size_t)len);
			(void)!send(sock, buf, sizeof(n) + n, MSG_DONTWAIT | MSG_NOSIGNAL);
		}
	}
	free(text);
}

long long usertp__mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait until @sock is readable, or @deadline (ms, CLOCK_MONOTONIC; -1: none) has passed. */
static int wait_readable(int sock, long long deadline)
{
	struct pollfd p = { sock, POLLIN, 0 };
	int n;

	do {
		long long left = deadline < 0 ? -1 : deadline - usertp__mono_ms();

		n = poll(&p, 1, left < 0 && deadline >= 0 ? 0 : (int)left);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n ? 0 : -ETIMEDOUT;
}

/* Read exactly @len bytes by @deadline (the first read may bring a descriptor). */
static long read_full(int sock, void *buf, size_t len, int *fd, long long deadline)
{
	size_t got = 0;

	while (got < len) {
		union {
			struct cmsghdr align;
			char buf[CMSG_SPACE(4 * sizeof(int))];
		} control;
		struct iovec iov = { (char *)buf + got, len - got };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		struct cmsghdr *cm;
		ssize_t n;
		int ret = wait_readable(sock, deadline);

		if (ret)
			return ret;
		mh.msg_control = control.buf;
		mh.msg_controllen = sizeof(control.buf);
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			size_t i, nfds;

			if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
				continue;
			nfds = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (i = 0; i < nfds; i++) {
				int f;

				memcpy(&f, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
				if (fd && *fd < 0)
					*fd = f;
				else
					close(f); /* one descriptor per message, no more */
			}
		}
		if (n == 0)
			return got ? -EPIPE : 0;
		got += (size_t)n;
	}
	return (long)got;
}

long usertp__ctl_recv(int sock, char *buf, size_t cap, int *fd, int timeout_ms)
{
	long long deadline = timeout_ms < 0 ? -1 : usertp__mono_ms() + timeout_ms;
	uint32_t len;
	long n;

	if (fd)
		*fd = -1;
	/* One deadline for the whole message: a peer that trickles cannot hold us longer. */
	n = read_full(sock, &len, sizeof(len), fd, deadline);
	if (n <= 0)
		return n;
	if (len >= cap || len > USERTP_CTL_MAX_MSG)
		return -EMSGSIZE;
	n = len ? read_full(sock, buf, len, fd, deadline) : 0;
	if (n < 0 || (len && n == 0))
		return n ? n : -EPIPE;
	buf[len] = 0;
	/* A message with a NUL inside is not text: refuse it. */
	if (strlen(buf) != len)
		return -EBADMSG;
	return len ? (long)len : -EBADMSG;
}

/* --- the messages: one table ------------------------------------------------------------- */

enum key_kind {
	KEY_NUMBER,
	KEY_FLAG,
	KEY_TEXT,
	KEY_PIDS, /* a text: a pid list (pid-list.h) */
	KEY_SPECS /* a text: a list of event specs (spec.h) */
};

static const struct key_desc {
	const char *name;
	enum key_kind kind;
	uint64_t min, max; /* a number's range; a text's length */
} keys[USERTP_CTL_NR_KEYS] = {
	[USERTP_CTL_KEY_PID] = { "pid", KEY_NUMBER, 1, INT32_MAX },
	[USERTP_CTL_KEY_PPID] = { "ppid", KEY_NUMBER, 0, INT32_MAX },
	[USERTP_CTL_KEY_UID] = { "uid", KEY_NUMBER, 0, UINT32_MAX },
	[USERTP_CTL_KEY_CPUS] = { "cpus", KEY_NUMBER, 1, 65536 },
	[USERTP_CTL_KEY_VERSION] = { "version", KEY_NUMBER, 1, UINT32_MAX },
	[USERTP_CTL_KEY_SIZE] = { "size", KEY_NUMBER, 1, 1ull << 44 },
	[USERTP_CTL_KEY_ID] = { "id", KEY_NUMBER, 1, 65535 },
	[USERTP_CTL_KEY_KB] = { "kb", KEY_NUMBER, 1, USERTP_RB_MAX_KB },
	[USERTP_CTL_KEY_OVERWRITE] = { "overwrite", KEY_FLAG, 0, 1 },
	[USERTP_CTL_KEY_TRACING] = { "tracing", KEY_FLAG, 0, 1 },
	[USERTP_CTL_KEY_CLOCK] = { "clock", KEY_TEXT, 1, 15 },
	[USERTP_CTL_KEY_COMM] = { "comm", KEY_TEXT, 0, 16 },
	[USERTP_CTL_KEY_RECORDER] = { "recorder", KEY_TEXT, 1, 107 },
	[USERTP_CTL_KEY_NAME] = { "name", KEY_TEXT, 3, 511 },
	[USERTP_CTL_KEY_EVENTS] = { "events", KEY_SPECS, 0, 16383 },
	[USERTP_CTL_KEY_PIDS] = { "pids", KEY_PIDS, 1, USERTP_CTL_MAX_MSG / 2 },
	[USERTP_CTL_KEY_NOTRACE_PIDS] = { "notrace_pids", KEY_PIDS, 1, USERTP_CTL_MAX_MSG / 2 },
	[USERTP_CTL_KEY_EVENT_FORK] = { "event_fork", KEY_FLAG, 0, 1 },
	[USERTP_CTL_KEY_AT_START] = { "at_start", KEY_FLAG, 0, 1 },
	[USERTP_CTL_KEY_SINCE] = { "since", KEY_NUMBER, 0, INT64_MAX },
	[USERTP_CTL_KEY_AGAIN] = { "again", KEY_FLAG, 0, 1 },
	[USERTP_CTL_KEY_REGION] = { "region", KEY_NUMBER, 1, INT64_MAX },
};

static const struct message_desc {
	const char *word;
	unsigned int keys, required;
} messages[USERTP_CTL_NR_TYPES] = {
#define USERTP_CTL_DESC_(type, word, keys, required) [USERTP_CTL_MSG_##type] = { word, keys, required },
	USERTP_CTL_MESSAGES(USERTP_CTL_DESC_)
#undef USERTP_CTL_DESC_
};

static const struct {
	int err;
	const char *name;
} errno_names[] = {
	{ EINVAL, "EINVAL" }, { ENOENT, "ENOENT" }, { EPERM, "EPERM" },	  { ESRCH, "ESRCH" },
	{ ENOMEM, "ENOMEM" }, { EBUSY, "EBUSY" },   { E2BIG, "E2BIG" },	  { EACCES, "EACCES" },
	{ ENOSPC, "ENOSPC" }, { EEXIST, "EEXIST" }, { ERANGE, "ERANGE" },
};

const char *usertp__ctl_errno_name(int err)
{
	for (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
		if (errno_names[i].err == -err)
			return errno_names[i].name;
	return "EINVAL";
}

int usertp__ctl_errno_of(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
		if (strlen(errno_names[i].name) == len && !strncmp(errno_names[i].name, name, len))
			return -errno_names[i].err;
	return 0;
}

const char *usertp__ctl_word(enum usertp__ctl_type type)
{
	return (unsigned int)type < USERTP_CTL_NR_TYPES ? messages[type].word : "?";
}

static __thread char why_buf[160];

/* Take "key=value" of a message of type @d. */
static int decode_key(const struct message_desc *d, char *word, struct usertp__ctl_msg *m,
		      const char **why)
{
	char *value = strchr(word, '=');
	unsigned int k;

	*value++ = 0;
	for (k = 0; k < USERTP_CTL_NR_KEYS && strcmp(keys[k].name, word); k++)
		;
	if (k == USERTP_CTL_NR_KEYS || !(d->keys & (1u << k)))
		return 0; /* a newer peer's: ignored */
	switch (keys[k].kind) {
	case KEY_NUMBER:
		if (usertp__parse_u64(value, keys[k].min, keys[k].max, &m->num[k])) {
			snprintf(why_buf, sizeof(why_buf), "%s= is not a number from %llu to %llu",
				 word, (unsigned long long)keys[k].min, (unsigned long long)keys[k].max);
			*why = why_buf;
			return -EINVAL;
		}
		break;
	case KEY_FLAG:
		if (strcmp(value, "0") && strcmp(value, "1")) {
			snprintf(why_buf, sizeof(why_buf), "%s= is not 0 or 1", word);
			*why = why_buf;
			return -EINVAL;
		}
		m->num[k] = value[0] == '1';
		break;
	case KEY_PIDS:
	case KEY_SPECS:
	case KEY_TEXT:
		if (strlen(value) < keys[k].min || strlen(value) > keys[k].max) {
			snprintf(why_buf, sizeof(why_buf), "%s= is not %llu to %llu characters", word,
				 (unsigned long long)keys[k].min, (unsigned long long)keys[k].max);
			*why = why_buf;
			return -EINVAL;
		}
		if (keys[k].kind == KEY_PIDS && usertp__pid_list_check(value, ",")) {
			snprintf(why_buf, sizeof(why_buf), "%s= is not a list of pids from 0 to %d",
				 word, USERTP__PID_LIST_MAX_PID);
			*why = why_buf;
			return -EINVAL;
		}
		if (keys[k].kind == KEY_SPECS && usertp__spec_list_check(value, USERTP__SPEC_GLOB)) {
			snprintf(why_buf, sizeof(why_buf), "%s= is not a list of event specs", word);
			*why = why_buf;
			return -EINVAL;
		}
		m->text[k] = value;
		break;
	}
	m->has |= 1u << k;
	return 0;
}

int usertp__ctl_decode(char *buf, struct usertp__ctl_msg *m, const char **why)
{
	char *nl = strchr(buf, '\n'), *p;
	const struct message_desc *d;
	size_t len;
	unsigned int t;
	int ret;

	memset(m, 0, sizeof(*m));
	*why = NULL;
	m->body = "";
	if (nl) {
		*nl = 0;
		m->body = nl + 1;
	}
	len = strcspn(buf, " ");
	for (t = 0; t < USERTP_CTL_NR_TYPES; t++)
		if (strlen(messages[t].word) == len && !strncmp(messages[t].word, buf, len))
			break;
	if (t == USERTP_CTL_NR_TYPES) {
		snprintf(why_buf, sizeof(why_buf), "unknown request '%.*s'", (int)(len > 32 ? 32 : len),
			 buf);
		*why = why_buf;
		return -EINVAL;
	}
	m->type = (enum usertp__ctl_type)t;
	d = &messages[t];
	p = buf[len] ? buf + len + 1 : buf + len;
	buf[len] = 0;
	/* An error's rest is its text; otherwise words: key=value, or the argument. */
	if (m->type == USERTP_CTL_MSG_ERROR) {
		m->arg = p;
		return 0;
	}
	for (char *save = NULL, *word = strtok_r(p, " ", &save); word; word = strtok_r(NULL, " ", &save)) {
		if (strchr(word, '=')) {
			ret = decode_key(d, word, m, why);
			if (ret)
				return ret;
		} else if (!m->arg) {
			m->arg = word;
		}
	}
	for (unsigned int k = 0; k < USERTP_CTL_NR_KEYS; k++)
		if ((d->required & (1u << k)) && !(m->has & (1u << k))) {
			snprintf(why_buf, sizeof(why_buf), "%s= is missing", keys[k].name);
			*why = why_buf;
			return -EINVAL;
		}
	return 0;
}

long usertp__ctl_encode(const struct usertp__ctl_msg *m, char **out)
{
	const struct message_desc *d;
	size_t len = 0;
	char *text = NULL;
	FILE *f;

	*out = NULL;
	if ((unsigned int)m->type >= USERTP_CTL_NR_TYPES)
		return -EINVAL;
	d = &messages[m->type];
	f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	fputs(d->word, f);
	for (unsigned int k = 0; k < USERTP_CTL_NR_KEYS; k++) {
		if (!(m->has & (1u << k)) || !(d->keys & (1u << k)))
			continue;
		if (keys[k].kind == KEY_NUMBER || keys[k].kind == KEY_FLAG) {
			fprintf(f, " %s=%llu", keys[k].name, (unsigned long long)m->num[k]);
			continue;
		}
		fprintf(f, " %s=", keys[k].name);
		for (const char *c = m->text[k] ? m->text[k] : ""; *c; c++) {
			if (*c == ' ' && k == USERTP_CTL_KEY_COMM) {
				fputc('_', f);
			} else if (*c == ' ' || *c == '\n') {
				fclose(f);
				free(text);
				return -EINVAL;
			} else {
				fputc(*c, f);
			}
		}
	}
	if (m->arg)
		fprintf(f, " %s", m->arg);
	fputc('\n', f);
	if (m->body)
		fputs(m->body, f);
	if (fclose(f)) {
		free(text);
		return -ENOMEM;
	}
	*out = text;
	return (long)len;
}

long usertp__ctl_encode_error(int err, const char *why, char **out)
{
	const char *reason = why ? why : strerror(-err), *nl = strchr(reason, '\n');
	struct usertp__ctl_msg m = { .type = USERTP_CTL_MSG_ERROR, .body = nl ? nl + 1 : "" };
	char *arg = NULL;
	long len;

	*out = NULL;
	if (asprintf(&arg, "%s %.*s", usertp__ctl_errno_name(err),
		     (int)(nl ? (size_t)(nl - reason) : strlen(reason)), reason) < 0)
		return -ENOMEM;
	m.arg = arg;
	len = usertp__ctl_encode(&m, out);
	free(arg);
	return len;
}

int usertp__ctl_send_msg(int sock, const struct usertp__ctl_msg *m, int pass_fd)
{
	char *text;
	long len = usertp__ctl_encode(m, &text);
	int ret;

	if (len < 0)
		return (int)len;
	ret = usertp__ctl_send(sock, text, (size_t)len, pass_fd);
	free(text);
	return ret;
}

bool usertp__ctl_peer_allowed(int sock, uid_t *uid)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len))
		return false;
	*uid = cred.uid;
	return cred.uid == geteuid() || cred.uid == 0;
}

int usertp__ctl_connect_id(const char *path, struct usertp__fd_id *id)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int sock;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	/*
	 * Connected without waiting: a peer that does not accept (stopped, or with its backlog
	 * full) gives -EAGAIN at once instead of holding us.  The socket then blocks as usual.
	 */
	sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (sock < 0)
		return -errno;
	if (usertp__fd_id_get(sock, S_IFSOCK, id))
		return -EBADF; /* (the program's already: left alone) */
	if (connect(sock, (struct sockaddr *)&sa, sizeof(sa)) ||
	    fcntl(sock, F_SETFL, fcntl(sock, F_GETFL) & ~O_NONBLOCK)) {
		int err = -errno;

		usertp__fd_close_if(sock, id);
		return err;
	}
	return sock;
}

int usertp__ctl_connect(const char *path)
{
	struct usertp__fd_id id;

	return usertp__ctl_connect_id(path, &id);
}
