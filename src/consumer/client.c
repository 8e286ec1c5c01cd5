/* SPDX-License-Identifier: MIT */
/*
 * client.c - the usertp command's side of the control protocol: finding endpoints, one
 * request at a time.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proc.h"
#include "ctl-proto.h"
#include "client.h"

#define CALL_TIMEOUT_MS 5000

int usertp__client_dir(char *buf, size_t size, bool create)
{
	static bool warned; /* (once per process; threads of usertp mount call this too) */
	char note[600];
	int ret = usertp__ctl_dir_note(buf, size, create, note, sizeof(note));
	bool say = (note[0] || ret == -EPERM) && !__atomic_exchange_n(&warned, true, __ATOMIC_RELAXED);

	if (say && note[0])
		fprintf(stderr, "usertp: warning: %s\n", note);
	else if (say)
		fprintf(stderr, "usertp: the runtime directory %s is not ours alone (another user's, "
			"or others may enter it): set XDG_RUNTIME_DIR to a directory of yours\n", buf);
	return ret;
}

static bool process_exists(pid_t pid)
{
	return !kill(pid, 0) || errno == EPERM;
}

/* "<dir>/<pid>.sock" → pid, or 0 for other names. */
static pid_t endpoint_pid(const char *name)
{
	char *end;
	long pid = strtol(name, &end, 10);

	return pid > 0 && pid <= INT32_MAX && !strcmp(end, ".sock") && name[0] != '+' ? (pid_t)pid
										      : 0;
}

static int cmp_pid(const void *a, const void *b)
{
	const struct usertp__program *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/*
 * What @prog's answer to "hello" says (@ret and @reply as usertp__client_call()'s): its comm
 * into @prog.  Return: 0; -EBUSY when it serves as many connections as it can; -EACCES when
 * it refuses us; -ETIMEDOUT when it did not answer; -EPROTO when it answered nonsense;
 * -ENOENT when nobody answers (a stale endpoint).
 */
static int hello_result(struct usertp__program *prog, int ret, char *reply)
{
	if (!ret) {
		struct usertp__ctl_msg m;
		const char *why;

		if (!usertp__ctl_decode(reply, &m, &why) && usertp__ctl_has(&m, USERTP_CTL_KEY_COMM))
			snprintf(prog->comm, sizeof(prog->comm), "%s", m.text[USERTP_CTL_KEY_COMM]);
	}
	else if (ret == -EREMOTEIO && !strncmp(reply, "error EBUSY ", 12))
		ret = -EBUSY;
	else if (ret == -EREMOTEIO && !strncmp(reply, "error EACCES ", 13))
		ret = -EACCES;
	else if (ret == -ETIMEDOUT)
		ret = -ETIMEDOUT; /* a stalled program, or a peer that is not one */
	else if (ret == -EREMOTEIO || ret == -EMSGSIZE || ret == -EBADMSG || ret == -EPROTO)
		ret = -EPROTO; /* it answered, nonsense */
	else if (ret != -EBUSY)
		ret = -ENOENT;
	return ret;
}

/* Ask @prog who it is (hello_result()). */
static int hello(struct usertp__program *prog)
{
	char *reply = NULL;
	int ret;

	usertp__client_ask_all(prog, 1, USERTP_CTL_MSG_HELLO, CALL_TIMEOUT_MS, &reply, &ret);
	ret = hello_result(prog, ret, reply);
	free(reply);
	return ret;
}

const char *usertp__client_find_error(int err)
{
	switch (err) {
	case -ESRCH:
		return "no such process";
	case -EBUSY:
		return "busy: its control endpoint serves as many connections as it can; try again "
		       "later";
	case -EACCES:
		return "its control endpoint refuses us (another user's program)";
	case -ETIMEDOUT:
		return "its control endpoint did not answer in time (a stalled program?)";
	case -EPROTO:
		return "its control endpoint answered something that is not the usertp protocol";
	default:
		return "no libusertp control endpoint (not a program that uses libusertp, or "
		       "USERTP_CONTROL=0)";
	}
}

/*
 * @name in the runtime directory @dir or its "all" (a link to a socket that is gone), left by
 * a recorder that died (record-PID.sock) or a program that died making its endpoint
 * (PID.new.sock), or in the system directory (all.record-PID.sock, again.record-PID.sock):
 * removed.
 */
static void remove_if_stale(const char *dir, const char *name)
{
	char path[PATH_MAX], *end;
	struct stat st;
	long pid;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return;
	if (!lstat(path, &st) && S_ISLNK(st.st_mode) && stat(path, &st) && errno == ENOENT) {
		unlink(path); /* a link to a socket that is gone */
		return;
	}
	/* PID.new.sock: an endpoint being made when its program died (libusertp's control.c). */
	pid = strtol(name, &end, 10);
	if (end != name && pid > 0 && pid <= INT32_MAX && !strcmp(end, ".new.sock")) {
		if (!process_exists((pid_t)pid))
			unlink(path);
		return;
	}
	/* The system directory's (all.*, again.*): by its pid. */
	if (!strncmp(name, USERTP_CTL_ALL_PREFIX, strlen(USERTP_CTL_ALL_PREFIX)))
		name += strlen(USERTP_CTL_ALL_PREFIX);
	else if (!strncmp(name, USERTP_CTL_AGAIN_PREFIX, strlen(USERTP_CTL_AGAIN_PREFIX)))
		name += strlen(USERTP_CTL_AGAIN_PREFIX);
	if (strncmp(name, "record-", 7))
		return;
	pid = strtol(name + 7, &end, 10);
	/* record-PID.sock, or record-PID.N.sock for the later sessions of a process. */
	if (*end == '.' && end[1] >= '0' && end[1] <= '9')
		strtol(end + 1, &end, 10);
	if (pid > 0 && pid <= INT32_MAX && !strcmp(end, ".sock") && !process_exists((pid_t)pid))
		unlink(path);
}

void usertp__client_remove_stale_in(const char *dir)
{
	char all[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d)))
		remove_if_stale(dir, de->d_name);
	closedir(d);
	if ((size_t)snprintf(all, sizeof(all), "%s/%s", dir, USERTP_CTL_ALL_DIR) < sizeof(all) &&
	    (d = opendir(all))) {
		while ((de = readdir(d)))
			remove_if_stale(all, de->d_name);
		closedir(d);
	}
}

void usertp__client_remove_stale(void)
{
	char dir[PATH_MAX];

	if (!usertp__client_dir(dir, sizeof(dir), false))
		usertp__client_remove_stale_in(dir);
}

/* Append @prog to *@list (of *@n, room for *@cap).  Return: 0 or -ENOMEM. */
static int programs_add(struct usertp__program **list, size_t *n, size_t *cap,
			const struct usertp__program *prog)
{
	if (*n == *cap) {
		size_t more = *cap ? 2 * *cap : 16;
		struct usertp__program *p = realloc(*list, more * sizeof(*p));

		if (!p)
			return -ENOMEM;
		*list = p;
		*cap = more;
	}
	(*list)[(*n)++] = *prog;
	return 0;
}

static bool environ_value(pid_t pid, const char *name, char *buf, size_t size);
static int endpoint_of_others(pid_t pid, uid_t uid, struct usertp__program *prog);
static long long process_age_ms(pid_t pid);

/*
 * Does process @pid look for root's sessions in the system directory @ours (its
 * USERTP_SYSTEM_DIR, or the default)?  Those of another are not root's sessions' to take.
 */
static bool same_system_dir(pid_t pid, const char *ours)
{
	char theirs[PATH_MAX];

	if (!environ_value(pid, "USERTP_SYSTEM_DIR", theirs, sizeof(theirs)) || theirs[0] != '/')
		snprintf(theirs, sizeof(theirs), "%s", USERTP_CTL_SYSTEM_DIR);
	return !strcmp(theirs, ours);
}

/*
 * Root: the programs of the other users that have an endpoint, found through /proc, those
 * that share our system directory (ctl-proto.h).
 */
static int programs_of_others(struct usertp__program **list, size_t *n, size_t *cap)
{
	char system_dir[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int ret = usertp__ctl_system_dir(system_dir, sizeof(system_dir), false);

	if (ret == -ENAMETOOLONG)
		return ret;
	d = opendir("/proc");
	if (!d)
		return -errno;
	ret = 0;
	while (!ret && (de = readdir(d))) {
		struct usertp__program prog;
		char proc[300], *end;
		long pid = strtol(de->d_name, &end, 10);
		struct stat st;

		if (pid <= 0 || pid > INT32_MAX || *end || pid == getpid() ||
		    (size_t)snprintf(proc, sizeof(proc), "/proc/%s", de->d_name) >= sizeof(proc) ||
		    stat(proc, &st) || st.st_uid == geteuid())
			continue;
		if (same_system_dir((pid_t)pid, system_dir) &&
		    !endpoint_of_others((pid_t)pid, st.st_uid, &prog))
			ret = programs_add(list, n, cap, &prog);
	}
	closedir(d);
	return ret;
}

/*
 * Keep of @list (*@n programs) those that answer "hello", asked all at once; an endpoint of
 * ours that nobody answers on, left by a process that died, is removed.  Return: 0 or -ENOMEM.
 */
static int programs_keep_answering(struct usertp__program *list, size_t *n)
{
	char **replies = calloc(*n, sizeof(*replies));
	int *results = calloc(*n, sizeof(*results));
	struct usertp__program *again = calloc(*n, sizeof(*again));
	size_t kept = 0, young = 0;
	long long youngest = USERTP_CTL_STARTING_MS;

	if (!replies || !results || !again ||
	    usertp__client_ask_all(list, *n, USERTP_CTL_MSG_HELLO, CALL_TIMEOUT_MS, replies, results)) {
		free(replies);
		free(results);
		free(again);
		return -ENOMEM;
	}
	for (size_t i = 0; i < *n; i++) {
		int ret = hello_result(&list[i], results[i], replies[i]);
		long long age;

		free(replies[i]);
		replies[i] = NULL;
		if (!ret) {
			list[kept++] = list[i];
		} else if (ret == -ENOENT && (age = process_age_ms(list[i].pid)) >= 0 &&
			   age < USERTP_CTL_STARTING_MS) {
			/*
			 * A program that starts may not listen yet (its endpoint is made while its
			 * main() begins): asked again below.  (Ours too: record -a lost one so.)
			 */
			again[young++] = list[i];
			youngest = age < youngest ? age : youngest;
		} else if (!list[i].foreign && !process_exists(list[i].pid)) {
			unlink(list[i].path); /* left by a process that died */
		}
	}
	if (young) {
		usleep((useconds_t)(USERTP_CTL_STARTING_MS - youngest) * 1000);
		if (!usertp__client_ask_all(again, young, USERTP_CTL_MSG_HELLO, CALL_TIMEOUT_MS, replies, results)) {
			for (size_t k = 0; k < young; k++) {
				if (!hello_result(&again[k], results[k], replies[k]))
					list[kept++] = again[k];
				free(replies[k]);
			}
		}
	}
	*n = kept;
	free(replies);
	free(results);
	free(again);
	return 0;
}

int usertp__client_programs(struct usertp__program **out, bool every_user)
{
	struct usertp__program *list = NULL;
	char dir[PATH_MAX];
	struct dirent *de;
	size_t n = 0, cap = 0;
	DIR *d;
	int ret = usertp__client_dir(dir, sizeof(dir), false);

	*out = NULL;
	if (ret && ret != -ENOENT)
		return ret;
	d = ret ? NULL : opendir(dir);
	if (!d && !ret && errno != ENOENT)
		return -errno;
	ret = 0;
	/* The endpoints first, then who they are: asked all at once (usertp__client_ask_all()). */
	while (d && !ret && (de = readdir(d))) {
		struct usertp__program prog = { endpoint_pid(de->d_name), "", "", false };

		remove_if_stale(dir, de->d_name);
		if (!prog.pid || (size_t)snprintf(prog.path, sizeof(prog.path), "%s/%s", dir,
						  de->d_name) >= sizeof(prog.path))
			continue;
		ret = programs_add(&list, &n, &cap, &prog);
	}
	if (d)
		closedir(d);
	if (!ret && every_user && geteuid() == 0)
		ret = programs_of_others(&list, &n, &cap);
	if (!ret && n)
		ret = programs_keep_answering(list, &n);
	if (ret) {
		free(list);
		return ret;
	}
	if (!n) {
		free(list); /* (candidates, none of them answering) */
		list = NULL;
	} else {
		qsort(list, n, sizeof(*list), cmp_pid);
	}
	*out = list;
	return (int)n;
}

/* The value of variable @name in process @pid's environment (root reads anyone's). */
static bool environ_value(pid_t pid, const char *name, char *buf, size_t size)
{
	char path[64], env[65536];
	size_t name_len = strlen(name);
	ssize_t len;
	int fd;
	const char *p;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	len = read(fd, env, sizeof(env) - 1);
	close(fd);
	if (len <= 0)
		return false;
	env[len] = 0;
	for (p = env; p < env + len; p += strlen(p) + 1) {
		if (!strncmp(p, name, name_len) && p[name_len] == '=') {
			snprintf(buf, size, "%s", p + name_len + 1);
			return true;
		}
	}
	return false;
}

/*
 * How long ago @pid started, in ms (-1: unknown).  /proc/PID/stat's starttime (field 22) is
 * in clock ticks since boot.
 */
static long long process_age_ms(pid_t pid)
{
	unsigned long long start;
	struct timespec now;
	long hz = sysconf(_SC_CLK_TCK);

	if (usertp__proc_stat_field(pid, 22, &start) || hz <= 0 ||
	    clock_gettime(CLOCK_BOOTTIME, &now))
		return -1;
	return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000 -
	       (long long)(start * 1000 / (unsigned long long)hz);
}

/*
 * The endpoint of process @pid of user @uid, not ours (only root may, and it is found in
 * that user's directory), into @prog: 0, or -ENOENT.  Not asked yet.
 */
static int endpoint_of_others(pid_t pid, uid_t uid, struct usertp__program *prog)
{
	char dir[PATH_MAX], xdg[PATH_MAX] = "";

	memset(prog, 0, sizeof(*prog));
	prog->pid = pid;
	prog->foreign = true;
	if (geteuid() != 0 || uid == 0)
		return -ENOENT;
	environ_value(pid, "XDG_RUNTIME_DIR", xdg, sizeof(xdg));
	if (usertp__ctl_dir_of(dir, sizeof(dir), uid, xdg[0] ? xdg : NULL) ||
	    (size_t)snprintf(prog->path, sizeof(prog->path), "%s/%d.sock", dir, (int)pid) >=
		    sizeof(prog->path))
		return -ENOENT;
	return 0;
}

static int find_once(pid_t pid, const struct stat *st, struct usertp__program *prog)
{
	char dir[PATH_MAX];
	int ret = usertp__client_dir(dir, sizeof(dir), false);

	if (!ret && (size_t)snprintf(prog->path, sizeof(prog->path), "%s/%d.sock", dir, (int)pid) <
			    sizeof(prog->path) &&
	    !access(prog->path, F_OK))
		return hello(prog);
	ret = endpoint_of_others(pid, st->st_uid, prog);
	return ret ? ret : hello(prog);
}

bool usertp__client_knock_again(const struct usertp__program *prog, int err, long long since_ms)
{
	int sock;

	if (err != -ENOENT && err != -ECONNREFUSED && err != -ECONNRESET && err != -EPIPE)
		return false;
	if (usertp__mono_ms() - since_ms >= USERTP_CTL_REMADE_MS || !usertp__proc_runs(prog->pid))
		return false;
	/*
	 * Only the program's own socket that nobody listens on, or that takes a connection:
	 * not a path that is gone, nor a socket put in its place by another process (never
	 * talked to).  (Our failure came as -ENOENT for each: usertp__client_ask_all().)
	 */
	sock = usertp__client_connect(prog);
	if (sock >= 0)
		close(sock);
	else if (sock != -ECONNREFUSED)
		return false;
	usleep(20000);
	return true;
}

/*
 * A program's control thread opens its endpoint while main() begins (its start does not wait
 * for it): with @wait_young, a process younger than USERTP_CTL_STARTING_MS that has none yet,
 * or that does not listen yet, is given until then; and one whose endpoint turns us away is
 * knocked on again (usertp__client_knock_again(): a daemon that closed it).
 */
static int find(pid_t pid, struct usertp__program *prog, bool wait_young)
{
	long long since = usertp__mono_ms();
	struct stat st;
	char proc[64];
	long long age;
	int ret;

	memset(prog, 0, sizeof(*prog));
	prog->pid = pid;
	snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
	if (pid <= 0 || stat(proc, &st))
		return -ESRCH;
	while ((ret = find_once(pid, &st, prog)) == -ENOENT && wait_young) {
		if ((age = process_age_ms(pid)) >= 0 && age < USERTP_CTL_STARTING_MS)
			usleep(2000);
		else if (!usertp__client_knock_again(prog, ret, since))
			break;
	}
	return ret;
}

int usertp__client_find(pid_t pid, struct usertp__program *prog)
{
	return find(pid, prog, true);
}

int usertp__client_find_now(pid_t pid, struct usertp__program *prog)
{
	return find(pid, prog, false);
}

/*
 * The endpoint is in a directory its user controls (root reaches every user's): connected to
 * only when it is a socket (not a link) of the program's own user, and kept only when the
 * one that listens on it is the program itself (SO_PEERCRED), so that a link or a socket put
 * in its place never makes us talk to another process, root's own daemons among them.
 */
int usertp__client_connect(const struct usertp__program *prog)
{
	struct stat proc, sock_st;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char path[64];
	int sock;

	snprintf(path, sizeof(path), "/proc/%d", (int)prog->pid);
	if (stat(path, &proc) || lstat(prog->path, &sock_st))
		return -ENOENT;
	if (!S_ISSOCK(sock_st.st_mode) || sock_st.st_uid != proc.st_uid)
		return -EPERM;
	sock = usertp__ctl_connect(prog->path);
	if (sock < 0)
		return sock;
	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) || cred.pid != prog->pid ||
	    cred.uid != proc.st_uid) {
		close(sock);
		return -EPERM;
	}
	return sock;
}

/* A reply's verdict: 0 for "ok...", -EREMOTEIO for anything else ("error ..."). */
static int reply_result(const char *reply)
{
	return !strncmp(reply, "ok", 2) && (reply[2] == 0 || reply[2] == ' ' || reply[2] == '\n')
		       ? 0
		       : -EREMOTEIO;
}

/* Take @sock's reply into *@reply, waiting until @deadline at most (as usertp__client_call()). */
static int take_reply(int sock, char **reply, long long deadline)
{
	long long left = deadline - usertp__mono_ms();
	char *buf = malloc(USERTP_CTL_MAX_MSG + 1), *fit;
	long n = buf ? usertp__ctl_recv(sock, buf, USERTP_CTL_MAX_MSG + 1, NULL,
					left > 0 ? (int)left : 0)
		     : -ENOMEM;

	if (n <= 0) {
		free(buf);
		return n ? (int)n : -EPIPE;
	}
	fit = realloc(buf, (size_t)n + 1);
	*reply = fit ? fit : buf;
	return reply_result(*reply);
}

int usertp__client_ask_all(const struct usertp__program *progs, size_t n,
			   enum usertp__ctl_type type, int timeout_ms, char **replies, int *results)
{
	struct pollfd *pfd = calloc(n ? n : 1, sizeof(*pfd));
	long long start = usertp__mono_ms(), *deadline = calloc(n ? n : 1, sizeof(*deadline));
	size_t waiting = 0;
	char *req = NULL;
	long req_len = usertp__ctl_encode(&(struct usertp__ctl_msg){ .type = type }, &req);

	if (!pfd || !deadline || req_len < 0) {
		free(pfd);
		free(deadline);
		free(req);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		int sock = usertp__client_connect(&progs[i]), ret;

		replies[i] = NULL;
		pfd[i] = (struct pollfd){ .fd = -1, .events = POLLIN };
		deadline[i] = start + (progs[i].foreign ? USERTP__FOREIGN_ANSWER_MS : timeout_ms);
		if (sock < 0) {
			results[i] = sock == -EAGAIN ? -EBUSY : -ENOENT; /* EAGAIN: backlog full */
			continue;
		}
		/* A refusal (EBUSY, EACCES) may come, and the peer close, before the request is sent. */
		ret = usertp__ctl_send(sock, req, (size_t)req_len, -1);
		if (ret && ret != -EPIPE && ret != -ECONNRESET) {
			close(sock);
			results[i] = ret;
			continue;
		}
		pfd[i].fd = sock;
		results[i] = -ETIMEDOUT;
		waiting++;
	}
	while (waiting) {
		long long now = usertp__mono_ms(), next = -1;

		for (size_t i = 0; i < n; i++) {
			if (pfd[i].fd < 0)
				continue;
			if (deadline[i] <= now) {
				close(pfd[i].fd); /* results[i]: -ETIMEDOUT */
				pfd[i].fd = -1;
				waiting--;
			} else if (next < 0 || deadline[i] < next) {
				next = deadline[i];
			}
		}
		if (!waiting || poll(pfd, n, (int)(next - now)) <= 0)
			continue;
		for (size_t i = 0; i < n; i++) {
			if (pfd[i].fd < 0 || !pfd[i].revents)
				continue;
			/* (One that sends part of its reply holds us until its own deadline.) */
			results[i] = take_reply(pfd[i].fd, &replies[i], deadline[i]);
			close(pfd[i].fd);
			pfd[i].fd = -1;
			waiting--;
		}
	}
	free(pfd);
	free(deadline);
	free(req);
	return 0;
}

/* Send the encoded request @req and take the reply (as usertp__client_call()). */
static int call_text(int sock, const char *req, int pass_fd, char **reply, int *fd, int timeout_ms)
{
	size_t cap = USERTP_CTL_MAX_MSG + 1;
	char *buf;
	long n;
	int ret;

	*reply = NULL;
	if (fd)
		*fd = -1;
	/* A refusal (EBUSY, EACCES) may come, and the peer close, before the request is sent. */
	ret = usertp__ctl_send(sock, req, strlen(req), pass_fd);
	if (ret && ret != -EPIPE && ret != -ECONNRESET)
		return ret;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	n = usertp__ctl_recv(sock, buf, cap, fd, timeout_ms);
	if (n <= 0) {
		free(buf);
		return ret ? ret : n ? (int)n : -EPIPE;
	}
	*reply = buf;
	return reply_result(buf);
}

/* Encode @req, send it (with @pass_fd) and take the reply (as usertp__client_call()). */
static int call_msg(int sock, const struct usertp__ctl_msg *req, int pass_fd, char **reply,
		    int *fd, int timeout_ms)
{
	char *text;
	long len = usertp__ctl_encode(req, &text);
	int ret;

	*reply = NULL;
	if (fd)
		*fd = -1;
	if (len < 0)
		return (int)len;
	ret = call_text(sock, text, pass_fd, reply, fd, timeout_ms);
	free(text);
	return ret;
}

int usertp__client_call_msg(int sock, const struct usertp__ctl_msg *req, int pass_fd, char **reply,
			   struct usertp__ctl_msg *ok, int *fd, int timeout_ms)
{
	const char *why;
	int ret = call_msg(sock, req, pass_fd, reply, fd, timeout_ms);

	if (!ret && usertp__ctl_decode(*reply, ok, &why))
		ret = -EPROTO;
	return ret;
}

int usertp__client_call(int sock, enum usertp__ctl_type req, const char *arg, char **reply,
			int *fd, int timeout_ms)
{
	return call_msg(sock, &(struct usertp__ctl_msg){ .type = req, .arg = arg }, -1, reply, fd,
			timeout_ms);
}

const char *usertp__client_body(const char *reply)
{
	const char *nl = strchr(reply, '\n');

	return nl ? nl + 1 : "";
}

const char *usertp__client_error_text(const char *reply, char *buf, size_t size)
{
	const char *sp;
	int errlen;

	if (!reply || strncmp(reply, "error ", 6)) {
		snprintf(buf, size, "unexpected reply");
		return buf;
	}
	reply += 6;
	sp = strchr(reply, ' ');
	errlen = sp ? (int)(sp - reply) : (int)strlen(reply);
	snprintf(buf, size, "%.*s (%.*s)", (int)strcspn(sp ? sp + 1 : "", "\n"), sp ? sp + 1 : "",
		 errlen, reply);
	return buf;
}
