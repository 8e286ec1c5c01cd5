/* SPDX-License-Identifier: MIT */
/* pid-list.c - lists of thread ids (pid-list.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "number.h"
#include "pid-list.h"

/* Where @pid is in @list, or would go. */
static size_t pid_list_place(const struct usertp__pid_list *list, int pid)
{
	size_t lo = 0, hi = list->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (list->pids[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool usertp__pid_list_has(const struct usertp__pid_list *list, int pid)
{
	size_t at = pid_list_place(list, pid);

	return at < list->nr && list->pids[at] == pid;
}

int usertp__pid_list_add(struct usertp__pid_list *list, int pid)
{
	size_t at = pid_list_place(list, pid);
	int *more;

	if (at < list->nr && list->pids[at] == pid)
		return 0;
	more = realloc(list->pids, (list->nr + 1) * sizeof(*more));
	if (!more)
		return -ENOMEM;
	memmove(more + at + 1, more + at, (list->nr - at) * sizeof(*more));
	more[at] = pid;
	list->pids = more;
	list->nr++;
	return 0;
}

void usertp__pid_list_remove(struct usertp__pid_list *list, int pid)
{
	size_t at = pid_list_place(list, pid);

	if (at == list->nr || list->pids[at] != pid)
		return;
	memmove(list->pids + at, list->pids + at + 1, (list->nr - at - 1) * sizeof(*list->pids));
	list->nr--;
}

int usertp__pid_list_copy(struct usertp__pid_list *to, const struct usertp__pid_list *from)
{
	*to = (struct usertp__pid_list){ NULL, 0 };
	if (!from->nr)
		return 0;
	to->pids = malloc(from->nr * sizeof(*to->pids));
	if (!to->pids)
		return -ENOMEM;
	memcpy(to->pids, from->pids, from->nr * sizeof(*to->pids));
	to->nr = from->nr;
	return 0;
}

void usertp__pid_list_free(struct usertp__pid_list *list)
{
	free(list->pids);
	*list = (struct usertp__pid_list){ NULL, 0 };
}

/* One token of @len characters, as kstrtoul(s, 0) reads it.  Return: 0, -EINVAL or -EPERM. */
static int pid_parse(const char *tok, size_t len, int *pid)
{
	uint64_t v;

	/* (A token ends at white space: the newline kstrtoull() would take is not in it.) */
	if (!len || tok[len - 1] == '\n' || usertp__kstrtoull(tok, len, 0, &v))
		return -EINVAL;
	/* (The kernel keeps only 32 bits of a bigger one: 4294967296 becomes pid 0.) */
	if (v > USERTP__PID_LIST_MAX_PID)
		return -EPERM;
	*pid = (int)v;
	return 0;
}

/* Each pid of @text, to @fn (when not NULL).  Return: 0, or the first error. */
static int pid_list_each(const char *text, const char *seps,
			 int (*fn)(struct usertp__pid_list *list, int pid), struct usertp__pid_list *list)
{
	const char *p = text;

	for (;;) {
		size_t len;
		int pid, ret;

		p += strspn(p, seps);
		if (!*p)
			return 0;
		len = strcspn(p, seps);
		ret = pid_parse(p, len, &pid);
		if (!ret && fn)
			ret = fn(list, pid);
		if (ret)
			return ret;
		p += len;
	}
}

int usertp__pid_list_check(const char *text, const char *seps)
{
	return pid_list_each(text, seps, NULL, NULL);
}

int usertp__pid_list_parse(struct usertp__pid_list *list, const char *text, const char *seps)
{
	struct usertp__pid_list more;
	int ret;

	if (usertp__pid_list_copy(&more, list))
		return -ENOMEM;
	ret = pid_list_each(text, seps, usertp__pid_list_add, &more);
	if (ret) {
		usertp__pid_list_free(&more);
		return ret;
	}
	usertp__pid_list_free(list);
	*list = more;
	return 0;
}

int usertp__pid_list_from(struct usertp__pid_list *list, const int *pids, size_t nr)
{
	struct usertp__pid_list more;
	int ret = 0;

	if (nr && !pids)
		return -EINVAL;
	if (usertp__pid_list_copy(&more, list))
		return -ENOMEM;
	for (size_t i = 0; i < nr && !ret; i++)
		ret = pids[i] < 0 || pids[i] > USERTP__PID_LIST_MAX_PID ? -EINVAL
								       : usertp__pid_list_add(&more, pids[i]);
	if (ret) {
		usertp__pid_list_free(&more);
		return ret;
	}
	usertp__pid_list_free(list);
	*list = more;
	return 0;
}

char *usertp__pid_list_text(const struct usertp__pid_list *list, char sep)
{
	char *text = malloc(list->nr * 12 + 1), *at = text;

	if (!text)
		return NULL;
	*at = 0;
	for (size_t i = 0; i < list->nr; i++) {
		if (i && sep != '\n')
			*at++ = sep;
		at += sprintf(at, "%d", list->pids[i]);
		if (sep == '\n')
			*at++ = '\n';
	}
	*at = 0;
	return text;
}
